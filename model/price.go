package model

import (
	"time"

	"parley/rules/billing"
)

// Price is one item of the price list.
type Price struct {
	Item   string         `bun:"item,pk"`
	Micros billing.Micros `bun:"micros"`
	Unit   string         `bun:"unit"`
	// CostMicros is what a unit costs the platform (SMS segments).
	CostMicros *billing.Micros `bun:"cost_micros"`
	UpdatedAt  time.Time       `bun:"updated_at,nullzero,notnull,default:current_timestamp"`
}

// SMSPrice is what one segment to a country costs the user and the platform.
type SMSPrice struct {
	Price, Cost billing.Micros
}
