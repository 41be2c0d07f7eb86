package mailcatcher

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

func ids(list []Summary) []int64 {
	out := make([]int64, 0, len(list))
	for _, s := range list {
		out = append(out, s.ID)
	}
	return out
}

func TestStoreBounds(t *testing.T) {
	msg := func(n int) []byte { return fmt.Appendf(nil, "Subject: %d\r\n\r\n%0100d\r\n", n, n) }
	size := len(msg(1))
	tests := []struct {
		name    string
		cfg     StoreConfig
		adds    int
		wantIDs []int64 // newest first
	}{
		{"under both bounds", StoreConfig{Keep: 5}, 3, []int64{3, 2, 1}},
		{"count bound drops the oldest", StoreConfig{Keep: 3}, 5, []int64{5, 4, 3}},
		{"byte bound drops the oldest", StoreConfig{Keep: 10, KeepBytes: 2*size + 1}, 4, []int64{4, 3}},
		{"a message over the byte bound is kept alone", StoreConfig{KeepBytes: size - 1}, 3, []int64{3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewStore(tt.cfg)
			for n := 1; n <= tt.adds; n++ {
				s.Add(Envelope{To: []string{"b@example.test"}}, msg(n))
			}
			if got := ids(s.List()); !slices.Equal(got, tt.wantIDs) {
				t.Fatalf("kept ids %v, want %v", got, tt.wantIDs)
			}
			for n := int64(1); n <= int64(tt.adds); n++ {
				m, ok := s.Get(n)
				if want := slices.Contains(tt.wantIDs, n); ok != want {
					t.Errorf("Get(%d) found %v, want %v", n, ok, want)
				}
				if ok && m.Subject != fmt.Sprint(n) {
					t.Errorf("Get(%d) has subject %q", n, m.Subject)
				}
			}
		})
	}
}

func TestStoreClearKeepsCounting(t *testing.T) {
	s := NewStore(StoreConfig{})
	s.Add(Envelope{}, []byte("Subject: one\r\n\r\n"))
	s.Clear()
	if n := len(s.List()); n != 0 {
		t.Fatalf("%d messages after Clear", n)
	}
	if _, ok := s.Get(1); ok {
		t.Error("message 1 still found after Clear")
	}
	if sum := s.Add(Envelope{}, []byte("Subject: two\r\n\r\n")); sum.ID != 2 {
		t.Errorf("id after Clear = %d, want 2", sum.ID)
	}
}

func TestStoreSummary(t *testing.T) {
	received := time.Date(2026, 3, 1, 12, 0, 0, 0, time.FixedZone("IST", 2*3600))
	s := NewStore(StoreConfig{Now: func() time.Time { return received }})
	env := Envelope{From: "bounce@example.test", To: []string{"a@example.test"}}
	raw := []byte("From: =?UTF-8?B?16TXqNec15k=?= <p@example.test>\r\n" +
		"To: a@example.test, \"B. Name\" <b@example.test>\r\nCc: c@example.test\r\n" +
		"Subject: =?UTF-8?Q?Caf=C3=A9?=\r\nDate: Sun, 1 Mar 2026 11:59:00 +0200\r\n\r\nbody\r\n")
	got := s.Add(env, raw)
	env.To[0] = "changed@example.test" // the store keeps its own copy
	want := Summary{
		ID: 1, Received: received.UTC(), From: "פרלי <p@example.test>", To: []string{"a@example.test", "B. Name <b@example.test>"},
		Subject: "Café", Date: time.Date(2026, 3, 1, 9, 59, 0, 0, time.UTC), Size: len(raw),
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("summary = %+v, want %+v", got, want)
	}
	if m, _ := s.Get(1); m.Envelope.To[0] != "a@example.test" {
		t.Errorf("stored envelope changed with the caller's: %v", m.Envelope.To)
	}
}
