package api

import "testing"

func TestParseRange(t *testing.T) {
	const size = 1000
	for _, tc := range []struct {
		header               string
		start, length        int64
		partial, satisfiable bool
	}{
		{"", 0, size, false, true},
		{"bytes=100-199", 100, 100, true, true},
		{"bytes=900-", 900, 100, true, true},
		{"bytes=990-5000", 990, 10, true, true},
		{"bytes=-50", 950, 50, true, true},
		{"bytes=-5000", 0, size, true, true},
		{"bytes=1000-", 0, 0, false, false},
		{"bytes=-0", 0, 0, false, false},
		{"bytes=abc-", 0, size, false, true},
		{"bytes=5-x", 0, size, false, true},
		{"bytes=9-5", 0, size, false, true},
		{"bytes=0-1,5-9", 0, size, false, true},
		{"items=0-1", 0, size, false, true},
	} {
		start, length, partial, ok := parseRange(tc.header, size)
		if start != tc.start || length != tc.length || partial != tc.partial || ok != tc.satisfiable {
			t.Errorf("parseRange(%q) = %d %d %v %v", tc.header, start, length, partial, ok)
		}
	}
}
