package sms

import (
	"errors"
	"fmt"
	"strings"
	"time"
	// A host without an IANA zone database (a slim container) still
	// knows every zone libphonenumber names.
	_ "time/tzdata"

	"github.com/nyaruka/phonenumbers"
)

// QuietHours is a daily window, in a recipient's local time, in which no
// message is sent to them: from Start (included) to End (excluded), in
// minutes after local midnight. A window whose Start is after its End
// crosses midnight ("21:00" to "08:00").
type QuietHours struct {
	Start, End int
}

// ParseQuietHours reads a window from "HH:MM" (24 h) bounds. The error says
// which bound is wrong ("start" or "end") and why, safe to show a client.
func ParseQuietHours(start, end string) (QuietHours, error) {
	s, err := parseClock(start)
	if err != nil {
		return QuietHours{}, &QuietHoursError{Field: "start", Reason: err.Error()}
	}
	e, err := parseClock(end)
	if err != nil {
		return QuietHours{}, &QuietHoursError{Field: "end", Reason: err.Error()}
	}
	if s == e {
		return QuietHours{}, &QuietHoursError{Field: "end", Reason: "must differ from start"}
	}
	return QuietHours{Start: s, End: e}, nil
}

// QuietHoursError is a malformed window bound.
type QuietHoursError struct{ Field, Reason string }

func (e *QuietHoursError) Error() string { return e.Field + " " + e.Reason }

func parseClock(s string) (int, error) {
	var h, m int
	if len(s) != 5 || s[2] != ':' || !digits(s[:2]) || !digits(s[3:]) {
		return 0, errors.New(`must be "HH:MM" (24 h)`)
	}
	h, m = int(s[0]-'0')*10+int(s[1]-'0'), int(s[3]-'0')*10+int(s[4]-'0')
	if h > 23 || m > 59 {
		return 0, errors.New(`must be a time of day from "00:00" to "23:59"`)
	}
	return h*60 + m, nil
}

func digits(s string) bool {
	return strings.Trim(s, "0123456789") == ""
}

// StartClock and EndClock are the bounds as "HH:MM".
func (q QuietHours) StartClock() string { return clock(q.Start) }

// EndClock is the window's end as "HH:MM".
func (q QuietHours) EndClock() string { return clock(q.End) }

func clock(m int) string { return fmt.Sprintf("%02d:%02d", m/60, m%60) }

// Inside reports whether t falls in the window in loc's wall-clock time.
func (q QuietHours) Inside(t time.Time, loc *time.Location) bool {
	l := t.In(loc)
	m := l.Hour()*60 + l.Minute()
	if q.Start < q.End {
		return q.Start <= m && m < q.End
	}
	return m >= q.Start || m < q.End
}

// quietHorizon bounds the search for an instant outside the window in every
// zone: one a day exists for one zone, so two days are plenty unless the
// zones never agree.
const quietHorizon = 48 * time.Hour

// ErrNeverOutside is NotBefore's answer for zones whose allowed hours never
// meet (a number spread over zones half a day apart, under a long window):
// no instant is outside the window in all of them.
var ErrNeverOutside = errors.New("sms: the number's time zones share no time outside the quiet hours")

// NotBefore is the earliest instant from t that lies outside the window in
// every one of zones: t itself when it already does (a zero time is
// returned then), else the first whole minute after it that does. Bounds
// are whole local minutes and zone offsets whole minutes, so stepping by
// minutes misses no opening, across daylight-saving changes too.
func (q QuietHours) NotBefore(t time.Time, zones []*time.Location) (time.Time, error) {
	if q.outsideAll(t, zones) {
		return time.Time{}, nil
	}
	for c := t.Truncate(time.Minute).Add(time.Minute); c.Sub(t) <= quietHorizon; c = c.Add(time.Minute) {
		if q.outsideAll(c, zones) {
			return c, nil
		}
	}
	return time.Time{}, ErrNeverOutside
}

func (q QuietHours) outsideAll(t time.Time, zones []*time.Location) bool {
	for _, z := range zones {
		if q.Inside(t, z) {
			return false
		}
	}
	return true
}

// ErrUnknownZone is TimeZoneNames' answer for a number libphonenumber places
// in no time zone.
var ErrUnknownZone = errors.New("sms: the number's time zone is unknown")

// TimeZoneNames are the IANA zones libphonenumber assigns to an E.164 number
// (one for most numbers; several for a number whose prefix spans zones,
// e.g. every North American zone for +1 800), in its order.
func TimeZoneNames(e164 string) ([]string, error) {
	names, err := phonenumbers.GetTimezonesForPrefix(e164)
	if err != nil {
		return nil, fmt.Errorf("sms: time zones of the number: %w", err)
	}
	out := make([]string, 0, len(names))
	for _, n := range names {
		if n != phonenumbers.UNKNOWN_TIMEZONE {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return nil, ErrUnknownZone
	}
	return out, nil
}

// LoadZones loads named IANA zones.
func LoadZones(names []string) ([]*time.Location, error) {
	out := make([]*time.Location, len(names))
	for i, n := range names {
		loc, err := time.LoadLocation(n)
		if err != nil {
			return nil, fmt.Errorf("sms: time zone %s: %w", n, err)
		}
		out[i] = loc
	}
	return out, nil
}
