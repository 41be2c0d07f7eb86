package accounts

import (
	"context"
	"slices"
	"time"

	"parley/model"
	"parley/rules/billing"
)

// SpendDays is how many days the spend history covers, today included.
const SpendDays = 30

// SpendHistory is an account's spend per UTC day and service over the
// last SpendDays days, oldest day first, every day present.
type SpendHistory struct {
	Days []DaySpend
	// Services are those with any spend in the window, sorted.
	Services []string
	// MaxUSD is the largest day's total (0 when nothing was spent).
	MaxUSD float64
}

// DaySpend is one day's spend, net of refunds, per service.
type DaySpend struct {
	Day       time.Time
	ByService map[string]float64
	TotalUSD  float64
}

// SpendHistory reads an account's daily spend per service.
func (s *Service) SpendHistory(ctx context.Context, accountID string) (SpendHistory, error) {
	today := s.d.Now().UTC().Truncate(24 * time.Hour)
	first := today.AddDate(0, 0, 1-SpendDays)
	rows, err := s.d.Ledger.DailySpend(ctx, accountID, first)
	if err != nil {
		return SpendHistory{}, err
	}
	h := SpendHistory{Days: make([]DaySpend, SpendDays)}
	for i := range h.Days {
		h.Days[i] = DaySpend{Day: first.AddDate(0, 0, i), ByService: map[string]float64{}}
	}
	for _, r := range rows {
		i := int(r.Day.UTC().Sub(first).Hours() / 24)
		if i < 0 || i >= SpendDays {
			continue
		}
		usd := billing.Micros(r.Micros).USD()
		h.Days[i].ByService[r.Service] += usd
		h.Days[i].TotalUSD += usd
		if !slices.Contains(h.Services, r.Service) {
			h.Services = append(h.Services, r.Service)
		}
	}
	slices.Sort(h.Services)
	for _, d := range h.Days {
		h.MaxUSD = max(h.MaxUSD, d.TotalUSD)
	}
	return h, nil
}

// StatementLine is one movement of an account's credit as its statement
// (the ledger's CSV) lists it.
type StatementLine struct {
	ID              int64
	CreatedAt       time.Time
	Kind            string
	Service         string
	AmountUSD       float64
	BalanceAfterUSD float64
	JobKind         string
	JobID           int64
	Stage           string
	Note            string
}

// Statement calls fn with every movement of an account's credit, oldest
// first.
func (s *Service) Statement(ctx context.Context, accountID string, fn func(StatementLine) error) error {
	return s.d.Ledger.Entries(ctx, accountID, func(e model.LedgerEntry) error {
		l := StatementLine{ID: e.ID, CreatedAt: e.CreatedAt.UTC(), Kind: e.Kind, Service: e.Service,
			AmountUSD: e.AmountMicros.USD(), BalanceAfterUSD: e.BalanceAfter.USD(), Note: e.Note}
		if e.JobKind != nil {
			l.JobKind = *e.JobKind
		}
		if e.JobID != nil {
			l.JobID = *e.JobID
		}
		if e.Stage != nil {
			l.Stage = *e.Stage
		}
		return fn(l)
	})
}
