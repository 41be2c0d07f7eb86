package netguard

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeResolver answers from a table; unknown names are NXDOMAIN. It records
// the names it was asked about.
type fakeResolver struct {
	mu    sync.Mutex
	hosts map[string][]string
	asked []string
}

func (f *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, host)
	ips, ok := f.hosts[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []netip.Addr
	for _, s := range ips {
		out = append(out, netip.MustParseAddr(s))
	}
	return out, nil
}

// rebindingResolver answers a public address the first time and loopback
// afterwards: the classic DNS-rebinding attack.
type rebindingResolver struct{ calls atomic.Int32 }

func (r *rebindingResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	if r.calls.Add(1) == 1 {
		return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
	}
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

func testResolver() *fakeResolver {
	return &fakeResolver{hosts: map[string][]string{
		"example.com":          {"93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"},
		"media.example.org":    {"151.101.1.69"},
		"loop.example.net":     {"127.0.0.1"},
		"mixed.example.net":    {"93.184.216.34", "10.1.2.3"},
		"meta.example.net":     {"169.254.169.254"},
		"mapped.example.net":   {"::ffff:192.168.0.1"},
		"v6private.example.ne": {"fd12::1"},
		"www.youtube.com":      {"142.250.74.46"},
		"youtu.be":             {"142.250.74.46"},
	}}
}

func TestCheckSSRF(t *testing.T) {
	refused := []string{
		"http://example.com/a.mp3",
		"ftp://example.com/a.mp3",
		"file:///etc/passwd",
		"https:example.com",
		"https://",
		"https://user:pw@example.com/a.mp3",
		"https://127.0.0.1/",
		"https://127.0.0.1:8443/",
		"https://localhost/",
		"https://LOCALHOST./",
		"https://api.localhost/",
		"https://metadata.google.internal/computeMetadata/v1/",
		"https://intranet/",
		"https://[::1]/",
		"https://[::]/",
		"https://0.0.0.0/",
		"https://0/",
		"https://10.0.0.1/",
		"https://172.16.0.1/",
		"https://172.31.255.255/",
		"https://192.168.1.1/",
		"https://100.64.0.1/",
		"https://169.254.169.254/latest/meta-data/",
		"https://[fd00:ec2::254]/",
		"https://[fe80::1]/",
		"https://[fe80::1%25eth0]/",
		"https://[fc00::1]/",
		"https://224.0.0.1/",
		"https://[ff02::1]/",
		"https://255.255.255.255/",
		"https://[::ffff:127.0.0.1]/",
		"https://[::ffff:7f00:1]/",
		"https://[::ffff:10.0.0.1]/",
		"https://[::127.0.0.1]/",
		"https://[64:ff9b::a00:1]/",
		"https://[2002:c0a8:101::1]/",
		"https://2130706433/",
		"https://0177.0.0.1/",
		"https://0x7f.0.0.1/",
		"https://0x7f000001/",
		"https://0x7F000001/",
		"https://127.1/",
		"https://127.0.1/",
		"https://017700000001/",
		"https://3232235777/", // 192.168.1.1
		"https://256.256.256.256/",
		"https://1.2.3.4.5/",
		"https://loop.example.net/",
		"https://mixed.example.net/",
		"https://meta.example.net/",
		"https://mapped.example.net/",
		"https://v6private.example.ne/",
		"https://nxdomain.example.com/",
		"https://example.com:0/",
		"https://example.com:99999/",
	}
	g := Guard{Resolver: testResolver()}
	for _, u := range refused {
		err := g.Check(u)
		if !errors.Is(err, ErrNotAllowed) {
			t.Errorf("Check(%q) = %v, want ErrNotAllowed", u, err)
			continue
		}
		if msg := ClientMessage(err); strings.Contains(msg, "no such host") || msg == "" {
			t.Errorf("Check(%q): client message %q", u, msg)
		}
	}

	allowed := []string{
		"https://example.com/a.mp3",
		"https://EXAMPLE.com./a.mp3?x=1",
		"https://media.example.org:8443/x.wav",
		"https://93.184.216.34/a.mp3",
		"https://1.1.1.1/",
		"https://[2606:4700:4700::1111]/",
		"https://[::ffff:93.184.216.34]/",
		"https://[64:ff9b::5db8:d822]/",
		"https://1572395042/", // 93.184.216.34 in decimal: odd but public
	}
	for _, u := range allowed {
		if err := g.Check(u); err != nil {
			t.Errorf("Check(%q) = %v, want nil", u, err)
		}
	}
}

func TestCheckDoesNotResolveInternalNames(t *testing.T) {
	r := testResolver()
	g := Guard{Resolver: r}
	for _, u := range []string{"https://localhost/", "https://x.internal/", "https://127.1/", "https://intranet/"} {
		if err := g.Check(u); !errors.Is(err, ErrNotAllowed) {
			t.Errorf("Check(%q) = %v", u, err)
		}
	}
	if len(r.asked) != 0 {
		t.Errorf("resolver was asked about %v", r.asked)
	}
}

func TestCheckAllowPrefixes(t *testing.T) {
	g := Guard{AllowPrefixes: loopback, Resolver: testResolver()}
	for _, u := range []string{"https://127.0.0.1/", "https://127.1/", "https://[::ffff:127.0.0.1]/", "https://loop.example.net/"} {
		if err := g.Check(u); err != nil {
			t.Errorf("Check(%q) with 127/8 allowed = %v", u, err)
		}
	}
	for _, u := range []string{"http://127.0.0.1/", "https://10.0.0.1/", "https://localhost/", "https://[::1]/"} {
		if err := g.Check(u); !errors.Is(err, ErrNotAllowed) {
			t.Errorf("Check(%q) with 127/8 allowed = %v, want ErrNotAllowed", u, err)
		}
	}
}

func TestCheckDNSFailureIsNotARefusal(t *testing.T) {
	g := Guard{Resolver: resolverFunc(func(string) ([]netip.Addr, error) {
		return nil, &net.DNSError{Err: "server misbehaving", Name: "example.com", IsTemporary: true}
	})}
	err := g.Check("https://example.com/")
	if !errors.Is(err, ErrDownload) || errors.Is(err, ErrNotAllowed) {
		t.Errorf("temporary DNS failure: got %v, want ErrDownload", err)
	}
}

type resolverFunc func(host string) ([]netip.Addr, error)

func (f resolverFunc) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	return f(host)
}

func TestInetAton(t *testing.T) {
	cases := map[string]string{
		"127.0.0.1": "127.0.0.1", "2130706433": "127.0.0.1", "0177.0.0.1": "127.0.0.1",
		"0x7f.0.0.1": "127.0.0.1", "0x7f000001": "127.0.0.1", "127.1": "127.0.0.1",
		"127.0.1": "127.0.0.1", "10.0x10.1": "10.16.0.1", "0": "0.0.0.0", "00": "0.0.0.0",
		"4294967295": "255.255.255.255", "1.0xffffff": "1.255.255.255",
	}
	for in, want := range cases {
		got, ok := inetAton(in)
		if !ok || got.String() != want {
			t.Errorf("inetAton(%q) = %v, %v; want %s", in, got, ok, want)
		}
	}
	for _, in := range []string{"4294967296", "256.0.0.1", "1.2.3.256", "1.2.65536", "08.0.0.1", "0x", "1..2",
		"example.com", "1.2.3.4.5", "", "-1", "+1", "1.2.3.", "0x1g"} {
		if a, ok := inetAton(in); ok {
			t.Errorf("inetAton(%q) = %v, want not an address", in, a)
		}
	}
}

func TestControlChecksTheDialledAddress(t *testing.T) {
	g := Guard{}
	for _, a := range []string{"127.0.0.1:443", "[::1]:443", "10.0.0.1:80", "[::ffff:169.254.169.254]:80"} {
		if err := g.control("tcp", a, nil); !errors.Is(err, ErrNotAllowed) {
			t.Errorf("control(%s) = %v", a, err)
		}
	}
	if err := g.control("tcp", "93.184.216.34:443", nil); err != nil {
		t.Errorf("control(public) = %v", err)
	}
}

func TestIsVideoSharing(t *testing.T) {
	cases := map[string]bool{
		"https://www.youtube.com/watch?v=abc":        true,
		"https://youtube.com/shorts/abc":             true,
		"https://m.youtube.com/watch?v=abc":          true,
		"https://music.youtube.com/watch?v=abc":      true,
		"https://youtu.be/abc":                       true,
		"https://vimeo.com/123":                      true,
		"https://player.vimeo.com/video/123":         true,
		"https://www.tiktok.com/@u/video/1":          true,
		"https://vm.tiktok.com/xyz/":                 true,
		"https://www.dailymotion.com/video/x8":       true,
		"https://x.com/someone/status/1234":          true,
		"https://twitter.com/someone/status/1234":    true,
		"https://mobile.twitter.com/a/status/1":      true,
		"https://x.com/someone":                      false,
		"https://twitter.com/home":                   false,
		"https://notyoutube.com/watch":               false,
		"https://youtube.com.evil.example/watch?v=a": false,
		"https://example.com/video.mp4":              false,
		"https://cdn.example.com/youtube.com/a.mp3":  false,
	}
	for raw, want := range cases {
		u, _ := url.Parse(raw)
		if got := IsVideoSharing(u); got != want {
			t.Errorf("IsVideoSharing(%s) = %v, want %v", raw, got, want)
		}
	}
	if IsVideoSharing(nil) {
		t.Error("IsVideoSharing(nil) = true")
	}
}

// tlsServer starts an HTTPS test server and a Guard that trusts it and
// allows loopback.
func tlsServer(t *testing.T, h http.Handler) (*httptest.Server, Guard) {
	t.Helper()
	srv := httptest.NewTLSServer(h)
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	r := testResolver()
	// httptest's certificate is valid for example.com: point it here.
	r.hosts["example.com"] = []string{"127.0.0.1"}
	r.hosts["evil.example.net"] = []string{"192.168.1.1"}
	return srv, Guard{AllowPrefixes: loopback, RootCAs: pool, Resolver: r}
}

func TestDownloadSuccess(t *testing.T) {
	payload := bytes.Repeat([]byte("audio!"), 10000)
	srv, g := tlsServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/a.mp3" {
			http.NotFound(w, r)
			return
		}
		w.Write(payload)
	}))
	for _, u := range []string{srv.URL + "/a.mp3", strings.Replace(srv.URL, "127.0.0.1", "example.com", 1) + "/a.mp3"} {
		var buf bytes.Buffer
		n, err := g.Download(context.Background(), u, &buf)
		if err != nil {
			t.Fatalf("Download(%s): %v", u, err)
		}
		if n != int64(len(payload)) || !bytes.Equal(buf.Bytes(), payload) {
			t.Errorf("Download(%s): got %d bytes", u, n)
		}
	}

	// Environment proxies are ignored.
	t.Setenv("HTTPS_PROXY", "http://127.0.0.1:1")
	t.Setenv("HTTP_PROXY", "http://127.0.0.1:1")
	if _, err := g.Download(context.Background(), srv.URL+"/a.mp3", io.Discard); err != nil {
		t.Errorf("with HTTPS_PROXY set: %v", err)
	}

	var buf bytes.Buffer
	_, err := g.Download(context.Background(), srv.URL+"/missing", &buf)
	if !errors.Is(err, ErrDownload) || !strings.Contains(ClientMessage(err), "404") {
		t.Errorf("404: %v", err)
	}
}

func TestDownloadRefusesWithoutAllowPrefixes(t *testing.T) {
	srv, g := tlsServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("request reached the server")
	}))
	g.AllowPrefixes = nil
	_, err := g.Download(context.Background(), srv.URL+"/", io.Discard)
	if !errors.Is(err, ErrNotAllowed) {
		t.Errorf("got %v, want ErrNotAllowed", err)
	}
}

func TestDownloadDNSRebinding(t *testing.T) {
	srv, g := tlsServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("request reached the server")
	}))
	g.AllowPrefixes = nil
	r := &rebindingResolver{}
	g.Resolver = r
	u := strings.Replace(srv.URL, "127.0.0.1", "example.com", 1)
	_, err := g.Download(context.Background(), u, io.Discard)
	if !errors.Is(err, ErrNotAllowed) {
		t.Errorf("rebinding: got %v, want ErrNotAllowed", err)
	}
	if r.calls.Load() < 2 {
		t.Errorf("resolver called %d times; the dial must resolve again", r.calls.Load())
	}
}

func TestDownloadRedirects(t *testing.T) {
	var srvURL string
	srv, g := tlsServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-private":
			http.Redirect(w, r, "https://10.0.0.1/secret", http.StatusFound)
		case "/to-metadata":
			http.Redirect(w, r, "https://169.254.169.254/latest/meta-data/", http.StatusFound)
		case "/to-loopback-name":
			http.Redirect(w, r, "https://localhost/", http.StatusFound)
		case "/to-private-name":
			http.Redirect(w, r, "https://evil.example.net/", http.StatusFound)
		case "/to-http":
			http.Redirect(w, r, strings.Replace(srvURL, "https", "http", 1)+"/ok", http.StatusFound)
		case "/hop3":
			http.Redirect(w, r, "/hop2", http.StatusFound)
		case "/hop2":
			http.Redirect(w, r, "/hop1", http.StatusMovedPermanently)
		case "/hop1":
			http.Redirect(w, r, "/ok", http.StatusTemporaryRedirect)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/ok":
			io.WriteString(w, "fine")
		}
	}))
	srvURL = srv.URL
	for _, p := range []string{"/to-private", "/to-metadata", "/to-loopback-name", "/to-private-name", "/to-http"} {
		_, err := g.Download(context.Background(), srv.URL+p, io.Discard)
		if !errors.Is(err, ErrNotAllowed) {
			t.Errorf("%s: got %v, want ErrNotAllowed", p, err)
		}
	}
	var buf bytes.Buffer
	if _, err := g.Download(context.Background(), srv.URL+"/hop3", &buf); err != nil || buf.String() != "fine" {
		t.Errorf("3 redirects: %q, %v", buf.String(), err)
	}
	_, err := g.Download(context.Background(), srv.URL+"/loop", io.Discard)
	if !errors.Is(err, ErrDownload) || !strings.Contains(ClientMessage(err), "redirects") {
		t.Errorf("redirect loop: %v", err)
	}
}

func TestDownloadSizeCap(t *testing.T) {
	const limit = 1000
	srv, g := tlsServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := bytes.Repeat([]byte("x"), 5000)
		switch r.URL.Path {
		case "/exact":
			w.Write(body[:limit])
		case "/declared":
			w.Header().Set("Content-Length", "5000")
			w.Write(body)
		case "/chunked":
			for i := 0; i < 10; i++ {
				w.Write(body[:500])
				w.(http.Flusher).Flush()
			}
		}
	}))
	g.MaxBytes = limit
	var buf bytes.Buffer
	if n, err := g.Download(context.Background(), srv.URL+"/exact", &buf); err != nil || n != limit {
		t.Errorf("exactly MaxBytes: %d, %v", n, err)
	}
	n, err := g.Download(context.Background(), srv.URL+"/declared", io.Discard)
	if !errors.Is(err, ErrTooLarge) || n != 0 {
		t.Errorf("declared too large: %d, %v", n, err)
	}
	buf.Reset()
	n, err = g.Download(context.Background(), srv.URL+"/chunked", &buf)
	if !errors.Is(err, ErrTooLarge) || n > limit || buf.Len() > limit {
		t.Errorf("streamed too large: %d (%d buffered), %v", n, buf.Len(), err)
	}
}

func TestDownloadTimeout(t *testing.T) {
	srv, g := tlsServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	g.Timeout = 300 * time.Millisecond
	start := time.Now()
	_, err := g.Download(context.Background(), srv.URL+"/", io.Discard)
	if !errors.Is(err, ErrDownload) {
		t.Errorf("got %v, want ErrDownload", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("timeout not honoured: %v", d)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestDownloadWriterErrorIsNotADownloadError(t *testing.T) {
	srv, g := tlsServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "data")
	}))
	_, err := g.Download(context.Background(), srv.URL+"/", failingWriter{})
	if err == nil || errors.Is(err, ErrDownload) || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("got %v", err)
	}
}

func TestDownloadVideoWithoutYTDLP(t *testing.T) {
	g := Guard{Resolver: testResolver(), YTDLP: filepath.Join(t.TempDir(), "yt-dlp")}
	_, err := g.Download(context.Background(), "https://www.youtube.com/watch?v=abc", io.Discard)
	if !errors.Is(err, ErrYTDLPMissing) || !strings.Contains(ClientMessage(err), "yt-dlp is not installed on this server") {
		t.Errorf("got %v (client message %q)", err, ClientMessage(err))
	}
}

func TestDownloadVideoWithFakeYTDLP(t *testing.T) {
	dir := t.TempDir()
	argsFile := filepath.Join(dir, "args")
	script := fmt.Sprintf(`#!/bin/sh
printf '%%s\n' "$@" > %s
out=""
while [ $# -gt 0 ]; do
  if [ "$1" = "-o" ]; then out="$2"; fi
  shift
done
case "$(cat %s)" in
  *too-big*) echo "[download] File is larger than max-filesize (9 bytes > 5 bytes). Aborting."; exit 0;;
  *broken*) echo "ERROR: [youtube] broken: Video unavailable" >&2; exit 1;;
esac
printf 'webm audio' > "$(echo "$out" | sed 's/%%(ext)s/webm/')"
`, argsFile, argsFile)
	bin := filepath.Join(dir, "yt-dlp")
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	g := Guard{Resolver: testResolver(), YTDLP: bin, MaxBytes: 1 << 20}
	var buf bytes.Buffer
	n, err := g.Download(context.Background(), "https://youtu.be/abc", &buf)
	if err != nil || n != 10 || buf.String() != "webm audio" {
		t.Fatalf("got %d %q, %v", n, buf.String(), err)
	}
	args, _ := os.ReadFile(argsFile)
	for _, want := range []string{"-f\nbestaudio/best\n", "--max-filesize\n1048576\n", "--\nhttps://youtu.be/abc\n", "--no-playlist"} {
		if !strings.Contains(string(args), want) {
			t.Errorf("yt-dlp args missing %q:\n%s", want, args)
		}
	}

	_, err = g.Download(context.Background(), "https://youtu.be/too-big", io.Discard)
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("oversize video: %v", err)
	}
	_, err = g.Download(context.Background(), "https://youtu.be/broken", io.Discard)
	if !errors.Is(err, ErrDownload) || strings.Contains(ClientMessage(err), "Video unavailable") || !strings.Contains(err.Error(), "Video unavailable") {
		t.Errorf("failing yt-dlp: %v / %q", err, ClientMessage(err))
	}
	// Video links still go through Check first.
	if _, err := g.Download(context.Background(), "http://youtu.be/abc", io.Discard); !errors.Is(err, ErrNotAllowed) {
		t.Errorf("http video link: %v", err)
	}
}
