package accounts

import (
	"context"
	"slices"
	"testing"
	"time"

	"parley/model"
)

func TestSpendHistory(t *testing.T) {
	f := newOperatorFixture()
	today := t0.UTC().Truncate(24 * time.Hour)
	f.ledger.daily = []model.DailySpend{
		{Day: today.AddDate(0, 0, -29), Service: "transcription", Micros: 1_500_000},
		{Day: today, Service: "sms", Micros: 250_000},
		{Day: today, Service: "transcription", Micros: 500_000},
	}
	h, err := f.svc.SpendHistory(context.Background(), "acc")
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Days) != SpendDays || !h.Days[0].Day.Equal(today.AddDate(0, 0, -29)) || !h.Days[SpendDays-1].Day.Equal(today) {
		t.Fatalf("%d days from %v to %v, want 30 ending today", len(h.Days), h.Days[0].Day, h.Days[len(h.Days)-1].Day)
	}
	if h.Days[0].TotalUSD != 1.5 || h.Days[29].TotalUSD != 0.75 || h.Days[29].ByService["sms"] != 0.25 || h.Days[5].TotalUSD != 0 {
		t.Fatalf("days %+v", h.Days)
	}
	if h.MaxUSD != 1.5 || !slices.Equal(h.Services, []string{"sms", "transcription"}) {
		t.Fatalf("max %v, services %v", h.MaxUSD, h.Services)
	}
}

func TestStatement(t *testing.T) {
	f := newOperatorFixture()
	kind, id, stage := "transcription", int64(7), "transcribe"
	f.ledger.entries = []model.LedgerEntry{
		{ID: 1, Kind: model.KindTopUp, AmountMicros: 5_000_000, BalanceAfter: 5_000_000, Note: "welcome"},
		{ID: 2, Kind: model.KindCharge, Service: "transcription", AmountMicros: -6000, BalanceAfter: 4_994_000, JobKind: &kind, JobID: &id, Stage: &stage},
	}
	var lines []StatementLine
	if err := f.svc.Statement(context.Background(), "acc", func(l StatementLine) error { lines = append(lines, l); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(lines) != 2 || lines[0].AmountUSD != 5 || lines[0].Note != "welcome" || lines[1].AmountUSD != -0.006 ||
		lines[1].JobKind != kind || lines[1].JobID != 7 || lines[1].Stage != stage || lines[1].BalanceAfterUSD != 4.994 {
		t.Fatalf("lines %+v", lines)
	}
}
