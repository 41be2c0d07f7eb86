//go:build integration

package e2e

import (
	"crypto/x509"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"parley/devstack/testenv"
	"parley/rules/billing"
)

// TestTranscriptionFromURL downloads media over TLS from a local server the
// guard is told to allow (as PARLEY_URL_ALLOW_CIDRS does in development); a
// redirect from it to a private address is still refused.
func TestTranscriptionFromURL(t *testing.T) {
	audio := speechFixture(t, "known.wav", knownText)
	src := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/media/known.wav":
			http.ServeFile(w, r, audio)
		case "/redirect":
			http.Redirect(w, r, "https://10.0.0.1/secret.wav", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	defer src.Close()
	pool := x509.NewCertPool()
	pool.AddCert(src.Certificate())

	p := startPlatform(t, options{rootCAs: pool, allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	_, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: billing.MicrosPerUSD})
	post := func(key, url string) int64 {
		var created struct{ ID int64 }
		body := strings.NewReader(fmt.Sprintf(`{"url": %q, "language": "en"}`, url))
		p.do(http.MethodPost, "/transcribe", key, body, "Content-Type", "application/json").want(t, 202, "").decode(t, &created)
		return created.ID
	}

	id := post(key.Secret, src.URL+"/media/known.wav")
	j := p.waitFor(jobPath("transcribe", id), key.Secret, 2*time.Minute, final)
	if j.Status != "done" || j.FileName != "known.wav" || j.CostUSD == "0.0000" || len(p.charges(id)) != 1 {
		t.Fatalf("URL job: %+v (%s)", j, deref(j.ErrorCode))
	}

	for _, tc := range []struct{ path, code string }{
		{"/redirect", "URL_NOT_ALLOWED"},
		{"/missing.wav", "DOWNLOAD_FAILED"},
	} {
		id := post(key.Secret, src.URL+tc.path)
		j := p.waitFor(jobPath("transcribe", id), key.Secret, 2*time.Minute, final)
		if j.Status != "failed" || deref(j.ErrorCode) != tc.code || j.ErrorMessage == nil || len(p.charges(id)) != 0 {
			t.Fatalf("%s: %+v %s", tc.path, j, deref(j.ErrorCode))
		}
	}

	// The price of a URL job is known after the download: a balance that
	// cannot cover it fails the job then, charging nothing.
	_, poor := testenv.Account(t, p.db, testenv.AccountOpts{Balance: 10})
	id = post(poor.Secret, src.URL+"/media/known.wav")
	j = p.waitFor(jobPath("transcribe", id), poor.Secret, 2*time.Minute, final)
	if j.Status != "failed" || deref(j.ErrorCode) != "INSUFFICIENT_BALANCE" || len(p.charges(id)) != 0 {
		t.Fatalf("poor URL job: %+v %s", j, deref(j.ErrorCode))
	}
}
