package config

import (
	"runtime"
	"slices"
	"testing"
	"time"
)

func TestParseRateTiers(t *testing.T) {
	tiers, err := ParseRateTiers("standard=60/1000, pro=600/10000,unlimited=0/0")
	if err != nil {
		t.Fatal(err)
	}
	if tiers["standard"] != (RateTier{60, 1000}) || tiers["pro"] != (RateTier{600, 10000}) || tiers["unlimited"] != (RateTier{}) {
		t.Fatalf("tiers %+v", tiers)
	}
	for _, bad := range []string{"pro=1/2", "standard=60", "standard=a/b", "standard=-1/5", "=1/2,standard=1/1"} {
		if _, err := ParseRateTiers(bad); err == nil {
			t.Errorf("ParseRateTiers(%q) accepted", bad)
		}
	}
}

func TestLoadDefaultsAndErrors(t *testing.T) {
	for _, v := range Vars {
		t.Setenv(v.Name, "")
	}
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if c.HTTPAddr != "127.0.0.1:8080" || c.MaxUploadSize != 500<<20 || c.RateTiers["standard"].PerMinute != 60 ||
		c.CORSOrigins != nil || c.MinTransferBytes != 64<<10 || c.MinTransferWindow != 30*time.Second ||
		c.VoiceSyncInterval != 5*time.Minute || c.VoiceBackfill != 720*time.Hour || c.VoiceConfigured() ||
		c.MailcatcherSMTPAddr != "127.0.0.1:1025" || c.MailcatcherHTTPAddr != "127.0.0.1:8025" ||
		c.SlotsCPU != runtime.NumCPU() || c.FFmpegThreads() != 1 || c.SlotsSpeech != 4 {
		t.Fatalf("defaults: %+v", c)
	}
	for name, value := range map[string]string{
		"MINIO_USE_SSL": "maybe", "PARLEY_MEDIA_LINK_TTL": "soon", "PARLEY_MAX_UPLOAD_BYTES": "-1",
		"PARLEY_URL_ALLOW_CIDRS": "10.0.0.0", "PARLEY_RATE_TIERS": "pro=1/1", "PARLEY_CORS_ORIGINS": "*",
		"PARLEY_MIN_TRANSFER_BYTES": "0", "PARLEY_MIN_TRANSFER_WINDOW": "-5s",
		"PARLEY_VOICE_SYNC_INTERVAL": "10ms", "PARLEY_VOICE_BACKFILL": "0s",
		"PARLEY_SLOTS_CPU": "0", "PARLEY_SLOTS_SPEECH": "many",
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, value)
			if _, err := Load(); err == nil {
				t.Fatalf("%s=%q accepted", name, value)
			}
		})
	}
}

// Fewer CPU slots than cores give each ffmpeg more threads; more slots
// than cores still give each one.
func TestFFmpegThreads(t *testing.T) {
	for slots, want := range map[int]int{1: runtime.NumCPU(), runtime.NumCPU(): 1, 4 * runtime.NumCPU(): 1} {
		if got := (Config{SlotsCPU: slots}).FFmpegThreads(); got != want {
			t.Errorf("%d slots: %d threads, want %d", slots, got, want)
		}
	}
}

func TestParseOrigins(t *testing.T) {
	got, err := ParseOrigins(" https://app.example.com, http://localhost:3000,http://[::1]:8080,https://xn--bcher-kva.example ,")
	want := []string{"https://app.example.com", "http://localhost:3000", "http://[::1]:8080", "https://xn--bcher-kva.example"}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("ParseOrigins = %q, %v; want %q", got, err, want)
	}
	if got, err := ParseOrigins(""); err != nil || got != nil {
		t.Errorf("empty list = %q, %v", got, err)
	}
	for _, bad := range []string{
		"*", "https://ok.example,*", "null", "app.example.com", "ftp://app.example.com", "https://",
		"https://app.example.com/", "https://app.example.com/path", "https://app.example.com?x=1", "https://app.example.com#top",
		"https://user@app.example.com", "https://App.Example.com", "HTTPS://app.example.com", "https://app.example.com:443",
		"http://app.example.com:80", "https://app.example.com:0", "https://app.example.com:99999", "https://*.example.com",
		"https://bücher.example", "https://app.example.com:8443/",
	} {
		if got, err := ParseOrigins(bad); err == nil {
			t.Errorf("ParseOrigins(%q) = %q, want an error", bad, got)
		}
	}
}

func TestCheckSigningSecrets(t *testing.T) {
	media := "m-0123456789abcdef0123456789abcdef"
	webhook := "w-0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"media secret only, voice off", Config{MediaSecret: media}, true},
		{"no media secret", Config{}, false},
		{"voice on without webhook secret", Config{MediaSecret: media, ElevenLabsAPIKey: "xi"}, false},
		{"voice on with a short webhook secret", Config{MediaSecret: media, ElevenLabsAPIKey: "xi", ElevenLabsWebhookSecret: "short"}, false},
		{"voice on with its webhook secret", Config{MediaSecret: media, ElevenLabsAPIKey: "xi", ElevenLabsWebhookSecret: webhook}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.cfg.CheckSigningSecrets(); (err == nil) != tc.ok {
				t.Fatalf("CheckSigningSecrets() = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

// The worker signs the media links of webhook payloads, so it needs the same
// media secret as the API; the provider secrets only the API checks do not
// stop it.
func TestCheckWorkerSecrets(t *testing.T) {
	media := "m-0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"media secret", Config{MediaSecret: media}, true},
		{"no media secret", Config{}, false},
		{"short media secret", Config{MediaSecret: "change-me"}, false},
		{"voice on without webhook secret (the API's to check)", Config{MediaSecret: media, ElevenLabsAPIKey: "xi"}, true},
		{"half a VAPID configuration", Config{MediaSecret: media, VAPIDPublicKey: "pub"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.cfg.CheckWorkerSecrets(); (err == nil) != tc.ok {
				t.Fatalf("CheckWorkerSecrets() = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}
