package storage

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"parley/billing"
	"parley/jobdef"
)

// Price list items (per minute of media).
const (
	PriceTranscription = "transcription"
	PriceVoiceCleanup  = "voice_cleanup"
	PriceSubtitleBurn  = "subtitle_burn"
)

// Price is one item of the price list.
type Price struct {
	bun.BaseModel `bun:"table:prices"`

	Item      string         `bun:"item,pk"`
	Micros    billing.Micros `bun:"micros"`
	Unit      string         `bun:"unit"`
	UpdatedAt time.Time      `bun:"updated_at,nullzero,notnull,default:current_timestamp"`
}

// Prices reads and writes the price list.
type Prices struct{ DB bun.IDB }

// Get returns the price of one item.
func (p Prices) Get(ctx context.Context, item string) (billing.Micros, error) {
	var pr Price
	if err := p.DB.NewSelect().Model(&pr).Where("item = ?", item).Scan(ctx); err != nil {
		return 0, fmt.Errorf("price %q: %w", item, notFound(err))
	}
	return pr.Micros, nil
}

// ForDuration prices seconds of media at item's current per-minute price.
func (p Prices) ForDuration(ctx context.Context, item string, seconds float64) (billing.Micros, error) {
	perMinute, err := p.Get(ctx, item)
	if err != nil {
		return 0, err
	}
	return billing.ForDuration(seconds, perMinute), nil
}

// PerMinute reads per-minute prices, for jobdef.Price.
func (p Prices) PerMinute(ctx context.Context) jobdef.PerMinute {
	return func(item string) (billing.Micros, error) { return p.Get(ctx, item) }
}

// Set changes the price of an existing item.
func (p Prices) Set(ctx context.Context, item string, micros billing.Micros) (Price, error) {
	pr := Price{Item: item}
	res, err := p.DB.NewUpdate().Model(&pr).Set("micros = ?, updated_at = now()", micros).WherePK().Returning("*").Exec(ctx)
	if err != nil {
		return pr, fmt.Errorf("set price: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return pr, ErrNotFound
	}
	return pr, nil
}
