package storage

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"parley/model"
	"parley/rules/billing"
	"parley/rules/jobspec"
)

// Prices reads and writes the price list.
type Prices struct{ DB bun.IDB }

// Get returns the price of one item.
func (p Prices) Get(ctx context.Context, item string) (billing.Micros, error) {
	var pr model.Price
	if err := p.DB.NewSelect().Model(&pr).Where("item = ?", item).Scan(ctx); err != nil {
		return 0, fmt.Errorf("price %q: %w", item, notFound(err))
	}
	return pr.Micros, nil
}

// PerMinute reads per-minute prices, for jobspec.Price.
func (p Prices) PerMinute(ctx context.Context) jobspec.PerMinute {
	return func(item string) (billing.Micros, error) { return p.Get(ctx, item) }
}

// Set changes the price of an existing item.
func (p Prices) Set(ctx context.Context, item string, micros billing.Micros) (model.Price, error) {
	pr := model.Price{Item: item}
	res, err := p.DB.NewUpdate().Model(&pr).Set("micros = ?, updated_at = now()", micros).WherePK().Returning("*").Exec(ctx)
	if err != nil {
		return pr, fmt.Errorf("set price: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return pr, model.ErrNotFound
	}
	return pr, nil
}

// SMS reads the price of a segment to every priced country.
func (p Prices) SMS(ctx context.Context) (map[string]model.SMSPrice, error) {
	var rows []model.Price
	if err := p.DB.NewSelect().Model(&rows).Where("item LIKE ?", billing.SMSItem("%")).Scan(ctx); err != nil {
		return nil, fmt.Errorf("sms prices: %w", err)
	}
	out := make(map[string]model.SMSPrice, len(rows))
	for _, r := range rows {
		sp := model.SMSPrice{Price: r.Micros}
		if r.CostMicros != nil {
			sp.Cost = *r.CostMicros
		}
		country, _ := billing.SMSItemCountry(r.Item)
		out[country] = sp
	}
	return out, nil
}

// SetSMS prices a segment to a country, adding the country to the list when
// it is new.
func (p Prices) SetSMS(ctx context.Context, country string, price, cost billing.Micros) (model.Price, error) {
	pr := model.Price{Item: billing.SMSItem(country), Micros: price, Unit: "segment", CostMicros: &cost}
	_, err := p.DB.NewInsert().Model(&pr).
		On("CONFLICT (item) DO UPDATE SET micros = EXCLUDED.micros, cost_micros = EXCLUDED.cost_micros, updated_at = now()").
		Returning("*").Exec(ctx)
	if err != nil {
		return pr, fmt.Errorf("set sms price: %w", err)
	}
	return pr, nil
}
