package console

import (
	"testing"
	"time"

	"parley/rules/billing"
	"parley/rules/jobspec"
	"parley/service/accounts"
)

func TestEndOfDay(t *testing.T) {
	got, err := endOfDay(" 2026-03-01 ")
	if err != nil || !got.Equal(time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("endOfDay = %v, %v; want the start of the next day, UTC", got, err)
	}
	for _, bad := range []string{"", "01/03/2026", "2026-02-30"} {
		if _, err := endOfDay(bad); err == nil {
			t.Errorf("endOfDay(%q) took it", bad)
		}
	}
}

func TestKeyState(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	past, future := now.Add(-time.Minute), now.Add(time.Minute)
	for _, tc := range []struct {
		key  accounts.Key
		want string
	}{
		{accounts.Key{ExpiresAt: &future}, "active"},
		{accounts.Key{}, "active"},
		{accounts.Key{ExpiresAt: &now}, "expired"},
		{accounts.Key{ExpiresAt: &future, RevokedAt: &past}, "revoked"},
		{accounts.Key{ExpiresAt: &past, RevokedAt: &past}, "revoked"},
	} {
		if got := keyState(tc.key, now); got != tc.want {
			t.Errorf("keyState(%+v) = %s, want %s", tc.key, got, tc.want)
		}
	}
}

func TestSpendRowsAreSortedAndComplete(t *testing.T) {
	rows := spendRows(accounts.Usage{SpendByService: map[string]float64{"sms": 0.5, "burn": 0, "transcription": 1.25}})
	if len(rows) != 3 || rows[0].Service != "burn" || rows[1].Service != "sms" || rows[2] != (spendRow{"transcription", 1.25}) {
		t.Fatalf("rows %+v", rows)
	}
}

// Every service a profile's spend names has a name in every language.
func TestServicesHaveNames(t *testing.T) {
	tx, err := loadTexts()
	if err != nil {
		t.Fatal(err)
	}
	for _, lang := range locales {
		l := tx.localizer(lang)
		for _, svc := range append(jobspec.Services(), billing.ServiceVoiceMinute, billing.ServiceSMS) {
			if key := "service." + svc; l.T(key, nil) == key {
				t.Errorf("%s has no name for the service %s", lang, svc)
			}
		}
	}
}
