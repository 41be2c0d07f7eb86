package console

import (
	"strings"
	"testing"
	"time"

	"parley/service/accounts"
)

func TestSpendChart(t *testing.T) {
	first := time.Date(2026, 10, 29, 0, 0, 0, 0, time.UTC)
	h := accounts.SpendHistory{Days: make([]accounts.DaySpend, accounts.SpendDays), Services: []string{"sms", "transcription"}, MaxUSD: 2}
	for i := range h.Days {
		h.Days[i] = accounts.DaySpend{Day: first.AddDate(0, 0, i), ByService: map[string]float64{}}
	}
	h.Days[3] = accounts.DaySpend{Day: first.AddDate(0, 0, 3), ByService: map[string]float64{"sms": 0.5, "transcription": 1.5}, TotalUSD: 2}
	h.Days[29] = accounts.DaySpend{Day: first.AddDate(0, 0, 29), ByService: map[string]float64{"sms": 0.0001}, TotalUSD: 0.0001}
	ch := newSpendChart(h, strings.ToUpper)
	if len(ch.Bars) != 2 || len(ch.Rows) != 2 || ch.TotalUSD != 2.0001 || !ch.MaxDay.Equal(first.AddDate(0, 0, 3)) {
		t.Fatalf("chart %+v", ch)
	}
	busiest := ch.Bars[0]
	// The busiest day fills the plot, its services stacked from the axis.
	if len(busiest.Parts) != 2 || busiest.Parts[0].Y+busiest.Parts[0].H != ch.Base || busiest.Parts[1].Y != ch.Top ||
		busiest.Parts[0].H+busiest.Parts[1].H != chartPlot || busiest.Parts[0].Fill == busiest.Parts[1].Fill {
		t.Fatalf("busiest bar %+v (axis at %d, top %d)", busiest, ch.Base, ch.Top)
	}
	if busiest.Title != "2026-11-01: $2.0000 (SMS $0.5000, TRANSCRIPTION $1.5000)" {
		t.Fatalf("title %q", busiest.Title)
	}
	// A tiny charge still shows as a pixel.
	if p := ch.Bars[1].Parts; len(p) != 1 || p[0].H != 1 {
		t.Fatalf("smallest bar %+v", ch.Bars[1])
	}
	if ch.Rows[0].Day != "2026-11-01" || strings.Join(ch.Rows[0].Cells, " ") != "$0.5000 $1.5000" || ch.Rows[0].Total != "$2.0000" {
		t.Fatalf("table row %+v", ch.Rows[0])
	}
	if len(ch.Ticks) != 5 || ch.Ticks[0].Label != "10-29" || ch.Ticks[0].Anchor != "start" || ch.Ticks[3].Label != "11-19" ||
		ch.Ticks[4].Label != "11-27" || ch.Ticks[4].Anchor != "end" {
		t.Fatalf("ticks %+v", ch.Ticks)
	}
}

func TestCSVCell(t *testing.T) {
	for in, want := range map[string]string{
		"=1+2": "'=1+2", "+SUM(A1)": "'+SUM(A1)", "-2": "'-2", "@cmd": "'@cmd", "\tx": "'\tx", "\rx": "'\rx",
		"top-up": "top-up", "": "", "שלום": "שלום",
	} {
		if got := cell(in); got != want {
			t.Errorf("cell(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestClock(t *testing.T) {
	for sec, want := range map[float64]string{0: "0:00", 3.6: "0:03", 61: "1:01", 3725.9: "1:02:05"} {
		if got := clock(sec); got != want {
			t.Errorf("clock(%v) = %q, want %q", sec, got, want)
		}
	}
}
