package sms

import (
	"errors"
	"testing"
	"time"
)

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func TestParseQuietHours(t *testing.T) {
	tests := []struct {
		start, end string
		want       QuietHours
		field      string
	}{
		{"21:00", "08:00", QuietHours{Start: 21 * 60, End: 8 * 60}, ""},
		{"00:00", "23:59", QuietHours{Start: 0, End: 23*60 + 59}, ""},
		{"13:30", "14:05", QuietHours{Start: 13*60 + 30, End: 14*60 + 5}, ""},
		{"21:00", "21:00", QuietHours{}, "end"},
		{"9:00", "08:00", QuietHours{}, "start"},
		{"24:00", "08:00", QuietHours{}, "start"},
		{"21:60", "08:00", QuietHours{}, "start"},
		{"21:00", "8am", QuietHours{}, "end"},
		{"21:00", "", QuietHours{}, "end"},
		{"2१:00", "08:00", QuietHours{}, "start"},
	}
	for _, tt := range tests {
		got, err := ParseQuietHours(tt.start, tt.end)
		var bad *QuietHoursError
		switch {
		case tt.field == "" && err != nil:
			t.Errorf("%s-%s: %v", tt.start, tt.end, err)
		case tt.field != "" && (!errors.As(err, &bad) || bad.Field != tt.field):
			t.Errorf("%s-%s: error %v, want one about %s", tt.start, tt.end, err, tt.field)
		case got != tt.want:
			t.Errorf("%s-%s: %+v, want %+v", tt.start, tt.end, got, tt.want)
		}
	}
	if q, _ := ParseQuietHours("21:05", "08:00"); q.StartClock() != "21:05" || q.EndClock() != "08:00" {
		t.Errorf("clocks %s %s", q.StartClock(), q.EndClock())
	}
}

func TestQuietHoursNotBefore(t *testing.T) {
	ny, la, jlm := mustZone(t, "America/New_York"), mustZone(t, "America/Los_Angeles"), mustZone(t, "Asia/Jerusalem")
	night := QuietHours{Start: 21 * 60, End: 8 * 60}
	lunch := QuietHours{Start: 12 * 60, End: 13*60 + 30}
	at := func(loc *time.Location, s string) time.Time {
		v, err := time.ParseInLocation("2006-01-02 15:04:05", s, loc)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		name  string
		q     QuietHours
		t     time.Time
		zones []*time.Location
		want  time.Time // zero: send now
	}{
		{"daytime goes now", night, at(ny, "2026-06-01 12:00:00"), []*time.Location{ny}, time.Time{}},
		{"a second before the window goes now", night, at(ny, "2026-06-01 20:59:59"), []*time.Location{ny}, time.Time{}},
		{"the window's start is inside", night, at(ny, "2026-06-01 21:00:00"), []*time.Location{ny}, at(ny, "2026-06-02 08:00:00")},
		{"after midnight waits for the morning", night, at(ny, "2026-06-02 03:17:40"), []*time.Location{ny}, at(ny, "2026-06-02 08:00:00")},
		{"the window's end is outside", night, at(ny, "2026-06-02 08:00:00"), []*time.Location{ny}, time.Time{}},
		{"a window inside the day", lunch, at(jlm, "2026-06-01 12:45:00"), []*time.Location{jlm}, at(jlm, "2026-06-01 13:30:00")},
		// 2026-03-08 02:00 EST jumps to 03:00 EDT: the night is an hour
		// shorter and the morning still comes at 08:00 local.
		{"spring forward", night, at(ny, "2026-03-07 22:00:00"), []*time.Location{ny}, at(ny, "2026-03-08 08:00:00")},
		// 2026-11-01 02:00 EDT falls back to 01:00 EST.
		{"fall back", night, at(ny, "2026-10-31 23:00:00"), []*time.Location{ny}, at(ny, "2026-11-01 08:00:00")},
		{"a window over the skipped hour", QuietHours{Start: 2*60 + 15, End: 2*60 + 45}, at(ny, "2026-03-08 01:59:00"), []*time.Location{ny}, time.Time{}},
		// 07:30 in New York is 04:30 in Los Angeles: both must be out.
		{"two zones wait for the later morning", night, at(ny, "2026-06-02 07:30:00"), []*time.Location{ny, la}, at(la, "2026-06-02 08:00:00")},
		// 22:00 in New York is 19:00 in Los Angeles: New York is inside
		// until its morning, when Los Angeles is.
		{"two zones, one inside", night, at(la, "2026-06-02 19:00:00"), []*time.Location{la, ny}, at(la, "2026-06-03 08:00:00")},
		{"two zones, both outside", night, at(ny, "2026-06-02 12:00:00"), []*time.Location{ny, la}, time.Time{}},
	}
	for _, tt := range tests {
		got, err := tt.q.NotBefore(tt.t, tt.zones)
		if err != nil || !got.Equal(tt.want) {
			t.Errorf("%s: %v %v, want %v", tt.name, got, err, tt.want)
		}
	}
}

func TestQuietHoursNeverOutside(t *testing.T) {
	names, err := TimeZoneNames("+18005550100")
	if err != nil {
		t.Fatal(err)
	}
	zones, err := LoadZones(names)
	if err != nil || len(zones) < 10 {
		t.Fatalf("zones of +1 800: %d %v", len(zones), err)
	}
	// Guam (UTC+10, i.e. -14 a day later) to St John's (UTC-2:30 in June)
	// spans 11.5 hours: an 8-hour day (18:00-10:00 quiet) fits nowhere.
	if _, err := (QuietHours{Start: 18 * 60, End: 10 * 60}).NotBefore(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC), zones); !errors.Is(err, ErrNeverOutside) {
		t.Fatalf("got %v, want ErrNeverOutside", err)
	}
	// A one-hour window leaves hours free everywhere: at 20:00 UTC it is
	// 06:00 in Guam and 09:00 to 17:30 across the Americas.
	got, err := (QuietHours{Start: 3 * 60, End: 4 * 60}).NotBefore(time.Date(2026, 6, 1, 20, 0, 0, 0, time.UTC), zones)
	if err != nil || !got.IsZero() {
		t.Fatalf("one-hour window: %v %v", got, err)
	}
}

func TestTimeZones(t *testing.T) {
	tests := []struct {
		phone string
		want  []string
	}{
		{"+12025550100", []string{"America/New_York"}},
		{"+14155550100", []string{"America/Los_Angeles"}},
		{"+972501234567", []string{"Asia/Jerusalem"}},
		{"+447911123456", []string{"Europe/Guernsey", "Europe/Isle_of_Man", "Europe/London"}},
	}
	for _, tt := range tests {
		names, err := TimeZoneNames(tt.phone)
		if err != nil {
			t.Fatalf("%s: %v", tt.phone, err)
		}
		if len(names) != len(tt.want) {
			t.Fatalf("%s: %v, want %v", tt.phone, names, tt.want)
		}
		for i := range names {
			if names[i] != tt.want[i] {
				t.Fatalf("%s: %v, want %v", tt.phone, names, tt.want)
			}
		}
	}
}

func TestLoadZones(t *testing.T) {
	zones, err := LoadZones([]string{"Asia/Jerusalem", "Pacific/Guam"})
	if err != nil || len(zones) != 2 || zones[1].String() != "Pacific/Guam" {
		t.Fatalf("%v %v", zones, err)
	}
	if _, err := LoadZones([]string{"Mars/Olympus_Mons"}); err == nil {
		t.Fatal("an unknown zone loaded")
	}
}

func TestDailyLimit(t *testing.T) {
	platform := map[string]int{QuotaFree: 5, "US": 200, QuotaOther: 100}
	tests := []struct {
		account map[string]int
		key     string
		want    int
	}{
		{nil, QuotaFree, 5},
		{nil, "US", 200},
		{nil, "GB", 100},
		{map[string]int{"US": 7}, "US", 7},
		{map[string]int{QuotaOther: 9}, "GB", 9},
		{map[string]int{QuotaOther: 9}, "US", 9},
		{map[string]int{QuotaOther: 9}, QuotaFree, 5},
	}
	for _, tt := range tests {
		if got := DailyLimit(platform, tt.account, tt.key); got != tt.want {
			t.Errorf("%v %s: %d, want %d", tt.account, tt.key, got, tt.want)
		}
	}
}
