package speech

import (
	"errors"
	"fmt"
	"math"
	"testing"
)

func TestWER(t *testing.T) {
	tests := []struct {
		ref, hyp string
		want     float64
	}{
		{"the cat sat", "the cat sat", 0},
		{"The cat, sat!", "the CAT sat", 0},
		{"don't stop", "dont stop", 0},
		{"the cat sat", "the bat sat", 1.0 / 3},
		{"the cat sat", "the cat", 1.0 / 3},
		{"the cat sat", "the big cat sat", 1.0 / 3},
		{"a b c d", "", 1},
		{"a b", "c d e f", 2},
		{"", "", 0},
		{"", "noise", 1},
		{"well-known fact", "well known fact", 0},
	}
	for _, tc := range tests {
		if got := WER(tc.ref, tc.hyp); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("WER(%q, %q) = %v, want %v", tc.ref, tc.hyp, got, tc.want)
		}
	}
}

func TestNormalizeLanguage(t *testing.T) {
	tests := map[string]string{
		"english": "en", "English": "en", "en": "en", "eng": "en", "spa": "es",
		"german": "de", "deu": "de", "ger": "de", "en-US": "en", "pt_BR": "pt",
		"hebrew": "he", "iw": "he", "heb": "he", "cmn": "zh", "chinese": "zh",
		"jw": "jv", "cantonese": "yue", "yue": "yue", "": "", " French ": "fr",
		"klingon": "klingon",
	}
	for in, want := range tests {
		if got := NormalizeLanguage(in); got != want {
			t.Errorf("NormalizeLanguage(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPinnedLanguage(t *testing.T) {
	for _, in := range []string{"", "auto", "AUTO"} {
		if l, err := pinnedLanguage(Options{Language: in}); l != "" || err != nil {
			t.Errorf("%q: got %q, %v", in, l, err)
		}
	}
	if l, err := pinnedLanguage(Options{Language: "EN"}); l != "en" || err != nil {
		t.Errorf("EN: got %q, %v", l, err)
	}
	if _, err := pinnedLanguage(Options{Language: "en; rm -rf"}); !IsPermanent(err) {
		t.Errorf("garbage language: want permanent error, got %v", err)
	}
}

func TestIsPermanent(t *testing.T) {
	if !IsPermanent(fmt.Errorf("job 7: %w", permanentf("bad"))) {
		t.Error("wrapped permanent error not recognised")
	}
	if IsPermanent(errors.New("connection reset")) || IsPermanent(nil) {
		t.Error("plain error reported permanent")
	}
	for code, perm := range map[int]bool{400: true, 401: true, 403: true, 404: true, 413: true, 422: true,
		408: false, 429: false, 500: false, 502: false, 503: false} {
		if got := IsPermanent(&APIError{Engine: "x", StatusCode: code}); got != perm {
			t.Errorf("status %d: permanent=%v, want %v", code, got, perm)
		}
	}
}

func TestNew(t *testing.T) {
	cases := []struct {
		cfg     Config
		name    string
		wantErr bool
	}{
		{Config{Engine: "pocketsphinx"}, "pocketsphinx", false},
		{Config{Engine: "openai", OpenAIAPIKey: "k"}, "openai", false},
		{Config{Engine: "openai"}, "", true},
		{Config{Engine: "openai", OpenAIBaseURL: "http://whisper:8000"}, "openai", false},
		{Config{Engine: "ElevenLabs", ElevenLabsAPIKey: "k"}, "elevenlabs", false},
		{Config{Engine: "elevenlabs"}, "", true},
		{Config{Engine: "vosk"}, "", true},
		{Config{}, "", true},
	}
	for _, tc := range cases {
		e, err := New(tc.cfg)
		if (err != nil) != tc.wantErr {
			t.Errorf("New(%+v): err = %v, wantErr %v", tc.cfg, err, tc.wantErr)
			continue
		}
		if err == nil && e.Name() != tc.name {
			t.Errorf("New(%+v).Name() = %q, want %q", tc.cfg, e.Name(), tc.name)
		}
	}
}

func TestWAVDuration(t *testing.T) {
	p, _ := writeSilentWAV(t, 2.5)
	d, err := wavDuration(p)
	if err != nil || math.Abs(d-2.5) > 1e-6 {
		t.Fatalf("wavDuration = %v, %v; want 2.5", d, err)
	}
}

func TestSpreadWords(t *testing.T) {
	ws := spreadWords(" hello big world ", 1, 3)
	if len(ws) != 3 || ws[0].Start != 1 || ws[2].End != 3 {
		t.Fatalf("spreadWords = %+v", ws)
	}
	for i := 1; i < len(ws); i++ {
		if ws[i].Start != ws[i-1].End || ws[i].End < ws[i].Start {
			t.Fatalf("not contiguous/monotonic: %+v", ws)
		}
	}
	if ws[1].End-ws[1].Start >= ws[0].End-ws[0].Start {
		t.Errorf("short word got as much time as a long one: %+v", ws)
	}
}
