package sms

// QuotaFree is the quota key of a free account's daily total; QuotaOther a
// paid account's quota to a country without one of its own.
const (
	QuotaFree  = "free"
	QuotaOther = "*"
)

// DailyLimit is the daily quota for key (QuotaFree or a country): the
// account's own for it, else the account's QuotaOther (countries only), else
// the platform's for it, else the platform's QuotaOther.
func DailyLimit(platform, account map[string]int, key string) int {
	candidates := []struct {
		quotas map[string]int
		key    string
	}{{account, key}, {account, QuotaOther}, {platform, key}, {platform, QuotaOther}}
	for _, c := range candidates {
		if c.key == QuotaOther && key == QuotaFree {
			continue
		}
		if n, ok := c.quotas[c.key]; ok {
			return n
		}
	}
	return 0
}
