package apikey

import (
	"errors"
	"strings"
	"testing"
)

func TestGenerateAndMatch(t *testing.T) {
	s, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s.Plain, SecretPrefix) || !strings.HasPrefix(s.Plain, s.Prefix) {
		t.Fatalf("bad secret %q / prefix %q", s.Plain, s.Prefix)
	}
	p, ok := PrefixOf(s.Plain)
	if !ok || p != s.Prefix {
		t.Fatalf("PrefixOf = %q, %v", p, ok)
	}
	if !Matches(s.Plain, s.Hash) || Matches(s.Plain+"x", s.Hash) {
		t.Fatal("Matches is wrong")
	}
	other, _ := Generate()
	if other.Plain == s.Plain {
		t.Fatal("two secrets are equal")
	}
}

func TestPrefixOfRejects(t *testing.T) {
	for _, in := range []string{"", "Bearer", "ak_live_short", "sk_live_" + strings.Repeat("a", 40), SecretPrefix + strings.Repeat("a", 200)} {
		if _, ok := PrefixOf(in); ok {
			t.Errorf("PrefixOf(%q) accepted", in)
		}
	}
}

func TestValidateScopes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		scopes []string
		owner  string
		ok     bool
	}{
		{"user scopes", []string{ProfileRead, KeysManage}, OwnerUser, true},
		{"admin scope on user key", []string{AdminKeys}, OwnerUser, false},
		{"admin scope on admin key", []string{AdminKeys, ProfileRead}, OwnerAdmin, true},
		{"unknown", []string{"profile:write"}, OwnerAdmin, false},
		{"empty", nil, OwnerUser, false},
		{"duplicate", []string{ProfileRead, ProfileRead}, OwnerUser, false},
	} {
		err := ValidateScopes(tc.scopes, tc.owner)
		var se *ScopeError
		if tc.ok != (err == nil) || (err != nil && !errors.As(err, &se)) {
			t.Errorf("%s: err = %v", tc.name, err)
		}
	}
}
