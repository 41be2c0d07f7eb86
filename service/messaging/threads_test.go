package messaging

import (
	"context"
	"strings"
	"testing"

	"parley/model"
	"parley/platform/problem"
)

func TestUpdateThreadRefusesBeforeStorage(t *testing.T) {
	no, yes := false, true
	name := func(s string) *model.ContactName { return &model.ContactName{Name: &s} }
	// A zero Service has no database: every case must be refused first.
	s := New(Deps{})
	for _, tc := range []struct {
		desc  string
		u     ThreadUpdate
		field string
	}{
		{"nothing asked", ThreadUpdate{}, "body"},
		{"markRead false", ThreadUpdate{MarkRead: &no, Archived: &yes}, "markRead"},
		{"a blank name", ThreadUpdate{ContactName: name(" \t ")}, "remoteContactName"},
		{"a NUL in the name", ThreadUpdate{ContactName: name("Dana\x00")}, "remoteContactName"},
		{"a newline in the name", ThreadUpdate{ContactName: name("Dana\nLevi")}, "remoteContactName"},
		{"a bidi override in the name", ThreadUpdate{ContactName: name("Dana\u202E")}, "remoteContactName"},
		{"invalid UTF-8 in the name", ThreadUpdate{ContactName: name("Dana\xff")}, "remoteContactName"},
		{"101 characters", ThreadUpdate{ContactName: name(strings.Repeat("ש", 101))}, "remoteContactName"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			_, err := s.UpdateThread(context.Background(), "acc", 1, tc.u)
			p, ok := problem.As(err)
			if !ok || p.Code != problem.ValidationError || p.Details["field"] != tc.field {
				t.Fatalf("got %v, want VALIDATION_ERROR on %s", err, tc.field)
			}
		})
	}
}

func TestCleanInbound(t *testing.T) {
	for in, want := range map[string]string{
		"hello":            "hello",
		"שלום 👋\nline 2":   "שלום 👋\nline 2",
		"a\x00b":           "ab",
		"bad \xff\xfe end": "bad \uFFFD end",
		"\x00":             "",
	} {
		if got := cleanInbound(in); got != want {
			t.Errorf("cleanInbound(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSearchPhone(t *testing.T) {
	for in, want := range map[string]string{
		"+1 (415) 555-0100": "+14155550100",
		"555.0100":          "5550100",
		"Dana":              "Dana",
		"Dana 2":            "Dana 2",
	} {
		if got := searchPhone(in); got != want {
			t.Errorf("searchPhone(%q) = %q, want %q", in, got, want)
		}
	}
}
