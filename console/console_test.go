package console

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/gin-gonic/gin"
	"github.com/sirupsen/logrus"

	"parley/platform/i18n"
)

// Every string the English catalogue has, Hebrew and Arabic have too.
func TestCataloguesComplete(t *testing.T) {
	keys := func(lang string) map[string]string {
		m := map[string]string{}
		if _, err := toml.DecodeFS(localeFiles, "locales/"+lang+".toml", &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	en := keys("en")
	for _, lang := range []string{"he", "ar"} {
		other := keys(lang)
		for k := range en {
			if other[k] == "" {
				t.Errorf("%s lacks %q", lang, k)
			}
		}
		for k := range other {
			if en[k] == "" {
				t.Errorf("%s has %q, which English lacks", lang, k)
			}
		}
	}
}

// Every key a template names is in the English catalogue.
func TestTemplatesNameKnownKeys(t *testing.T) {
	en := map[string]string{}
	if _, err := toml.DecodeFS(localeFiles, "locales/en.toml", &en); err != nil {
		t.Fatal(err)
	}
	entries, _ := templateFiles.ReadDir("templates")
	seen := 0
	for _, e := range entries {
		b, _ := templateFiles.ReadFile("templates/" + e.Name())
		for _, m := range keyRef.FindAllStringSubmatch(string(b), -1) {
			seen++
			if en[m[1]] == "" {
				t.Errorf("%s names %q, which the catalogue lacks", e.Name(), m[1])
			}
		}
	}
	if seen < 20 {
		t.Fatalf("found %d keys in the templates; the pattern is broken", seen)
	}
}

var keyRef = regexp.MustCompile(`\{\{t \S+ "([^"]+)"`)

func TestLangAndDirection(t *testing.T) {
	for locale, want := range map[string]string{"he": "he", "ar-EG": "ar", "en": "en", "fr": "en", "": "en", "HE-il": "he"} {
		if got := lang(locale); got != want {
			t.Errorf("lang(%q) = %q, want %q", locale, got, want)
		}
	}
	if !rtl("he") || !rtl("ar") || rtl("en") {
		t.Error("rtl is wrong")
	}
}

func TestCSRFTokenIsBoundToTheSecret(t *testing.T) {
	a, b := newSecret(), newSecret()
	if a == b || csrfToken(a) == csrfToken(b) || csrfToken(a) != csrfToken(a) {
		t.Fatal("tokens must differ per secret and be stable for one")
	}
	if hashSecret(a) == a || len(hashSecret(a)) != 64 {
		t.Fatal("the stored hash must not be the secret")
	}
}

func TestFormStyle(t *testing.T) {
	s, err := formStyle(map[string]string{"font": "DejaVu Sans", "fontSize": "40", "primaryColor": "#FFFF00", "position": "top", "marginV": "0"})
	if err != nil || s.FontSize != 40 || s.Position != "top" || s.PrimaryColor != "#FFFF00" {
		t.Fatalf("got %+v, %v", s, err)
	}
	if _, err := formStyle(map[string]string{"position": "sideways"}); err == nil || !strings.Contains(err.Error(), "style.position") {
		t.Fatalf("a bad position: %v", err)
	}
	if _, err := formStyle(map[string]string{"fontSize": "big"}); err == nil {
		t.Fatal("a size that is no number was taken")
	}
}

// The sign-in page renders in the browser's language, and its form is
// refused without the token the page carries.
func TestSigninPageAndCSRF(t *testing.T) {
	con, err := New(Deps{BaseURL: "https://parley.example", Log: logrus.New()})
	if err != nil {
		t.Fatal(err)
	}
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	con.Mount(r)
	srv := httptest.NewServer(r)
	defer srv.Close()

	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/console/signin", nil)
	req.Header.Set("Accept-Language", "ar")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `dir="rtl"`) || !strings.Contains(string(body), `lang="ar"`) {
		t.Fatalf("an Arabic browser got %s", body)
	}
	var pre *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == preCookie {
			pre = c
		}
	}
	if pre == nil || !pre.HttpOnly || !pre.Secure || pre.SameSite != http.SameSiteLaxMode {
		t.Fatalf("pre-session cookie %+v, want HttpOnly, Secure (https origin), SameSite=Lax", pre)
	}
	post := func(token string) int {
		form := url.Values{"email": {"a@example.com"}}
		if token != "" {
			form.Set(csrfField, token)
		}
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/console/signin", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(pre)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := post(""); got != http.StatusForbidden {
		t.Fatalf("no token: %d, want 403", got)
	}
	if got := post(csrfToken(newSecret())); got != http.StatusForbidden {
		t.Fatalf("another browser's token: %d, want 403", got)
	}
	// The right token passes CSRF; without SMTP the page says sign-in
	// links come from the operator.
	if got := post(csrfToken(pre.Value)); got != http.StatusServiceUnavailable {
		t.Fatalf("the page's token without SMTP: %d, want 503", got)
	}
}

type upDatabase struct{}

func (upDatabase) Unavailable(error) bool { return false }

// A mistyped console address is the console's own not-found page, in the
// browser's language, with the console's headers; an address outside the
// console is left to the API.
func TestUnknownAddressIsTheNotFoundPage(t *testing.T) {
	catalog, err := i18n.Load()
	if err != nil {
		t.Fatal(err)
	}
	con, err := New(Deps{BaseURL: "https://parley.example", Database: upDatabase{}, Catalog: catalog, Log: logrus.New()})
	if err != nil {
		t.Fatal(err)
	}
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	con.Mount(r)
	r.NoRoute(func(g *gin.Context) {
		if !con.NotFound(g) {
			g.String(http.StatusTeapot, "the API's")
		}
	})
	srv := httptest.NewServer(r)
	defer srv.Close()
	get := func(path string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		req.Header.Set("Accept-Language", "he")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(body)
	}
	for _, path := range []string{"/console/transcribe/1/nope", "/console/smss", "/console/static-nope/x"} {
		resp, body := get(path)
		if resp.StatusCode != http.StatusNotFound || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") ||
			resp.Header.Get("Content-Security-Policy") == "" || resp.Header.Get("X-Frame-Options") != "DENY" ||
			!strings.Contains(body, `lang="he"`) {
			t.Fatalf("%s: %d %s, headers %v:\n%s", path, resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header, body)
		}
	}
	if resp, body := get("/consolex"); resp.StatusCode != http.StatusTeapot || body != "the API's" {
		t.Fatalf("/consolex: %d %s, want the API's answer", resp.StatusCode, body)
	}
}
