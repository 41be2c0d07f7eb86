//go:build integration

package e2e

import (
	"net"
	"testing"

	"go.temporal.io/sdk/client"

	"parley/devstack/testenv"
	"parley/rules/billing"
)

// With the workflow engine unreachable a job cannot start: the request is
// answered 503 SERVICE_UNAVAILABLE, the job is failed with that code (so its
// slot is free again), nothing is charged and the upload is not kept.
func TestWorkflowEngineDown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close()
	down, err := client.NewLazyClient(client.Options{HostPort: dead})
	if err != nil {
		t.Fatal(err)
	}
	defer down.Close()

	p := startPlatform(t, options{noWorker: true, temporal: down})
	acc, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: billing.MicrosPerUSD})
	p.upload("/transcribe", key.Secret, speechFixture(t, "short.wav", "Hello there."), nil).want(t, 503, "SERVICE_UNAVAILABLE")

	var j struct {
		Status    string `bun:"status"`
		ErrorCode string `bun:"error_code"`
	}
	if err := p.db.NewSelect().Table("jobs").Column("status", "error_code").Where("account_id = ?", acc.ID).Scan(t.Context(), &j); err != nil {
		t.Fatal(err)
	}
	if j.Status != "failed" || j.ErrorCode != "SERVICE_UNAVAILABLE" {
		t.Fatalf("job %+v", j)
	}
	var running struct {
		InFlight *int `json:"in_flight"`
	}
	p.do("GET", "/jobs/running", key.Secret, nil).want(t, 200, "").decode(t, &running)
	if running.InFlight == nil || *running.InFlight != 0 {
		t.Fatalf("slots still held: %v", running.InFlight)
	}
	if left, _ := p.objects.List(t.Context(), "uploads/"); len(left) != 0 {
		t.Fatalf("upload kept: %v", left)
	}
	n, _ := p.db.NewSelect().Table("credit_ledger").Where("kind = 'charge'").Count(t.Context())
	if n != 0 {
		t.Fatalf("%d charges", n)
	}
}
