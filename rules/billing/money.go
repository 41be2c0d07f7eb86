// Package billing holds the pure money rules: integer micro-dollar amounts,
// how media duration is priced, and how amounts are written in JSON.
package billing

import (
	"fmt"
	"math"
	"strconv"
)

// Micros is an amount of US dollars in millionths. Every stored amount is one.
type Micros int64

// MicrosPerUSD is one dollar.
const MicrosPerUSD Micros = 1_000_000

// FromUSD converts a dollar amount given by an operator, rounding to the
// nearest micro-dollar.
func FromUSD(usd float64) (Micros, error) {
	if math.IsNaN(usd) || math.IsInf(usd, 0) || math.Abs(usd) > 1e9 {
		return 0, fmt.Errorf("amount %v is out of range", usd)
	}
	return Micros(math.Round(usd * float64(MicrosPerUSD))), nil
}

// USD is the amount as a JSON number of dollars (balances, SMS prices).
func (m Micros) USD() float64 { return float64(m) / float64(MicrosPerUSD) }

// CostString is the amount as a decimal string with four fractional digits,
// the form of *_usd cost fields ("0.0123"). Sub-cent remainders round half up.
func (m Micros) CostString() string {
	neg := m < 0
	if neg {
		m = -m
	}
	tenThousandths := (int64(m) + 50) / 100
	s := strconv.FormatInt(tenThousandths/10000, 10) + "." + fmt.Sprintf("%04d", tenThousandths%10000)
	if neg {
		return "-" + s
	}
	return s
}

// ForDuration prices media per second at a per-minute rate, rounding up to
// the next micro-dollar so a fraction of a second is never free.
func ForDuration(seconds float64, perMinute Micros) Micros {
	if seconds <= 0 || perMinute <= 0 {
		return 0
	}
	// Whole milliseconds keep the product exact in integers.
	ms := int64(math.Ceil(seconds * 1000))
	num := ms * int64(perMinute)
	const msPerMinute = 60_000
	return Micros((num + msPerMinute - 1) / msPerMinute)
}
