package config

import "testing"

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
	if c.HTTPAddr != "127.0.0.1:8080" || c.MaxUploadSize != 500<<20 || c.RateTiers["standard"].PerMinute != 60 {
		t.Fatalf("defaults: %+v", c)
	}
	for name, value := range map[string]string{
		"MINIO_USE_SSL": "maybe", "PARLEY_MEDIA_LINK_TTL": "soon", "PARLEY_MAX_UPLOAD_BYTES": "-1",
		"PARLEY_URL_ALLOW_CIDRS": "10.0.0.0", "PARLEY_RATE_TIERS": "pro=1/1",
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, value)
			if _, err := Load(); err == nil {
				t.Fatalf("%s=%q accepted", name, value)
			}
		})
	}
}
