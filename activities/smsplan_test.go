package activities

import (
	"fmt"
	"testing"
	"time"

	"parley/model"
	"parley/rules/sms"
)

// BenchmarkSMSStartPlan10k plans the start of a 10,000-recipient batch
// under quiet hours: 30% in New York (inside the window at the start), the
// rest in Los Angeles (outside it).
func BenchmarkSMSStartPlan10k(b *testing.B) {
	ms := make([]model.SMSStarting, 10000)
	for i := range ms {
		phone := fmt.Sprintf("+1415555%04d", i)
		if i%10 < 3 {
			phone = fmt.Sprintf("+1202555%04d", i)
		}
		ms[i] = model.SMSStarting{ID: int64(i + 1), ToPhone: phone, Country: "US", Scheduled: true}
	}
	a := &SMS{Quotas: map[string]int{"US": 20000, sms.QuotaOther: 20000}}
	u := model.SMSUsage{Account: model.Account{Paid: true}}
	// 01:30 UTC: 21:30 in New York, 18:30 in Los Angeles.
	at := time.Date(2026, 6, 2, 1, 30, 0, 0, time.UTC)
	quiet := &sms.QuietHours{Start: 21 * 60, End: 8 * 60}
	waiting := 0
	for b.Loop() {
		waiting = 0
		for _, s := range a.plan(u, ms, at, quiet) {
			if s.Status == sms.Waiting {
				waiting++
			}
		}
	}
	if waiting != 3000 {
		b.Fatalf("%d waiting, want the 3,000 in New York", waiting)
	}
}
