//go:build integration

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"parley/devstack/testenv"
	"parley/rules/billing"
	"parley/workflows"
)

// hangingEndpoints is how many of the noisy account's endpoints never
// answer: with two events each, 80 of its deliveries wait on them.
const hangingEndpoints = 40

// noisyNeighbour is the scenario: account A with 40 hanging
// endpoints and a healthy one, account B with a healthy one.
type noisyNeighbour struct {
	p          *platform
	accA, accB string
	dead       *blackhole
	healthyA   *hookReceiver
	healthyB   *hookReceiver
}

func newNoisyNeighbour(tb testing.TB, p *platform) *noisyNeighbour {
	n := &noisyNeighbour{p: p, dead: newBlackhole(tb), healthyA: newHookReceiver(tb, always200), healthyB: newHookReceiver(tb, always200)}
	accA, keyA := testenv.Account(tb, p.db, testenv.AccountOpts{Balance: billing.MicrosPerUSD})
	accB, keyB := testenv.Account(tb, p.db, testenv.AccountOpts{Balance: billing.MicrosPerUSD})
	n.accA, n.accB = accA.ID, accB.ID
	for i := range hangingEndpoints {
		body, _ := json.Marshal(map[string]any{"url": fmt.Sprintf("%s/hook/%d", n.dead.srv.URL, i)})
		p.do(http.MethodPost, "/webhooks", keyA.Secret, bytes.NewReader(body), "Content-Type", "application/json").want(tb, 201, "")
	}
	n.healthyA.register(p, keyA.Secret)
	n.healthyB.register(p, keyB.Secret)
	tb.Cleanup(func() { p.terminateDeliveries(tb) })
	return n
}

// emit raises an event of account's and returns when it was raised.
func (n *noisyNeighbour) emit(tb testing.TB, account, subject string) time.Time {
	tb.Helper()
	start := time.Now()
	if err := n.p.events.Emit(context.Background(), workflows.EmitInput{AccountID: account, Type: "sms.batch.completed", Subject: subject, Data: emptyBatch}); err != nil {
		tb.Fatal(err)
	}
	return start
}

// flood raises two events of A's, whose 80 deliveries to the hanging
// endpoints wait, and returns once every hanging endpoint holds an attempt
// open, A's healthy endpoint has both events and every delivery of the
// flood has been dispatched.
func (n *noisyNeighbour) flood(tb testing.TB) { n.floodRound(tb, 0) }

// floodRound is flood under subjects of its own (round), for benchmarks
// that flood more than once.
func (n *noisyNeighbour) floodRound(tb testing.TB, round int) {
	tb.Helper()
	received := len(n.healthyA.deliveries())
	n.emit(tb, n.accA, fmt.Sprintf("flood-%d-1", round))
	n.emit(tb, n.accA, fmt.Sprintf("flood-%d-2", round))
	eventually(tb, 30*time.Second, fmt.Sprintf("all %d hanging endpoints hold an attempt open", hangingEndpoints), func() bool {
		return n.dead.inFlight.Load() >= hangingEndpoints
	})
	eventually(tb, 30*time.Second, "A's healthy endpoint gets the flood's two events", func() bool {
		return len(n.healthyA.deliveries()) >= received+2
	})
	// Every delivery of the flood has had time to be dispatched: to hold a
	// slot, or (capped) to wait its turn outside one.
	time.Sleep(2 * time.Second)
	var pending int
	err := n.p.db.NewRaw("SELECT count(*) FROM webhook_deliveries WHERE account_id = ? AND status = 'pending'", n.accA).Scan(context.Background(), &pending)
	if err != nil {
		tb.Fatal(err)
	}
	if pending < 2*hangingEndpoints {
		tb.Fatalf("%d of A's deliveries pending, want the flood's %d", pending, 2*hangingEndpoints)
	}
}

// arrival waits for rcv's n-th delivery and returns how long after start it came.
func arrival(tb testing.TB, rcv *hookReceiver, n int, start time.Time, timeout time.Duration) time.Duration {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if got := rcv.deliveries(); len(got) >= n {
			return got[n-1].at.Sub(start)
		}
		if time.Now().After(deadline) {
			tb.Fatalf("delivery %d not received within %s", n, timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// One account's hanging endpoints hold back neither another account's
// endpoint nor the same account's healthy one, with two worker processes
// polling; no endpoint ever has more than its one attempt in flight
// (PARLEY_WEBHOOK_ENDPOINT_INFLIGHT), however many workers have free
// slots. The 2 s target is BenchmarkWebhookFairness's figure; the bound
// here only has to fail the way things were (29 s and 17 to 30 s), within
// an attempt's 15 s.
func TestWebhookFairness(t *testing.T) {
	p := startPlatform(t, options{allow: loopbackOnly, retries: fastRetries, workers: 2})
	n := newNoisyNeighbour(t, p)
	n.flood(t)

	startB := n.emit(t, n.accB, "other-account")
	startA := n.emit(t, n.accA, "same-account")
	const bound = 10 * time.Second
	tookB := arrival(t, n.healthyB, 1, startB, bound)
	tookA := arrival(t, n.healthyA, 3, startA, bound)
	t.Logf("beside %d hanging attempts: another account's endpoint got its event after %s, the same account's healthy one after %s",
		n.dead.inFlight.Load(), tookB, tookA)
	if n.dead.inFlight.Load() == 0 {
		t.Fatal("the hanging endpoints stopped hanging before the healthy ones got their events: nothing was shown")
	}
	n.dead.mu.Lock()
	most := n.dead.maxPath
	n.dead.mu.Unlock()
	if most != 1 {
		t.Fatalf("an endpoint had %d attempts in flight at once, cap 1", most)
	}
}
