package netguard

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"syscall"
	"time"
)

// Download checks rawURL, fetches it and writes the body to w, returning the
// number of bytes written. Video-sharing links go through yt-dlp. Refused
// addresses wrap ErrNotAllowed, oversize bodies ErrTooLarge, remote and
// transport failures ErrDownload; a failure to write to w is returned as is.
func (g Guard) Download(ctx context.Context, rawURL string, w io.Writer) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, g.timeout())
	defer cancel()
	u, err := g.parseAndCheck(ctx, rawURL)
	if err != nil {
		return 0, err
	}
	if IsVideoSharing(u) {
		return g.downloadVideo(ctx, u, w)
	}

	tr := g.transport()
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, CheckRedirect: g.checkRedirect}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return 0, notAllowed("malformed URL")
	}
	req.Header.Set("User-Agent", "parley-fetch/1")
	resp, err := client.Do(req)
	if err != nil {
		return 0, transportError(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return 0, &Error{Kind: ErrDownload, Reason: "remote server answered HTTP " + strconv.Itoa(resp.StatusCode)}
	}
	max := g.maxBytes()
	if resp.ContentLength > max {
		return 0, tooLarge(max)
	}
	return copyCapped(ctx, w, resp.Body, max)
}

func tooLarge(max int64) error {
	return &Error{Kind: ErrTooLarge, Reason: fmt.Sprintf("larger than %d bytes", max)}
}

func transportError(ctx context.Context, err error) error {
	var ge *Error
	if errors.As(err, &ge) {
		// Our own refusal from the dialer or the redirect check.
		return &Error{Kind: ge.Kind, Reason: ge.Reason, Err: err}
	}
	if ctx.Err() != nil {
		return &Error{Kind: ErrDownload, Reason: "timed out or cancelled", Err: err}
	}
	return &Error{Kind: ErrDownload, Reason: "could not fetch the URL", Err: err}
}

// copyCapped writes at most max bytes of r to w, then reports ErrTooLarge if
// r had more.
func copyCapped(ctx context.Context, w io.Writer, r io.Reader, max int64) (int64, error) {
	sw := &sinkWriter{w: w}
	n, err := io.Copy(sw, io.LimitReader(r, max))
	if sw.err != nil {
		return n, fmt.Errorf("netguard: writing download: %w", sw.err)
	}
	if err != nil {
		return n, transportError(ctx, err)
	}
	var one [1]byte
	if m, _ := io.ReadFull(r, one[:]); m > 0 {
		return n, tooLarge(max)
	}
	return n, nil
}

// sinkWriter remembers a write error so it is not mistaken for a download
// failure.
type sinkWriter struct {
	w   io.Writer
	err error
}

func (s *sinkWriter) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	if err != nil {
		s.err = err
	}
	return n, err
}

func (g Guard) transport() *http.Transport {
	d := &net.Dialer{Timeout: ConnectTimeout, KeepAlive: 30 * time.Second, Control: g.control}
	return &http.Transport{
		Proxy:                  nil, // never a proxy from the environment
		DialContext:            g.dialContext(d),
		TLSClientConfig:        &tls.Config{RootCAs: g.RootCAs, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    ConnectTimeout,
		ResponseHeaderTimeout:  headerTimeout,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 64 << 10,
		ForceAttemptHTTP2:      true,
	}
}

// dialContext resolves through g.Resolver and refuses the connection if any
// address is not allowed (the same rule as Check), so a name that resolved
// to a public address at admission cannot be rebound to a private one.
func (g Guard) dialContext(d *net.Dialer) func(ctx context.Context, network, address string) (net.Conn, error) {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		host, portStr, err := net.SplitHostPort(address)
		if err != nil {
			return nil, notAllowed("invalid address")
		}
		port, err := strconv.ParseUint(portStr, 10, 16)
		if err != nil {
			return nil, notAllowed("invalid port")
		}
		var addrs []netip.Addr
		if a, err := netip.ParseAddr(host); err == nil {
			addrs = []netip.Addr{a}
		} else if addrs, err = g.resolver().LookupNetIP(ctx, "ip", host); err != nil {
			return nil, &Error{Kind: ErrDownload, Reason: ReasonUnresolved, Err: err}
		}
		if len(addrs) == 0 {
			return nil, notAllowed(ReasonNotResolving)
		}
		for _, a := range addrs {
			if err := g.checkAddr(a); err != nil {
				return nil, err
			}
		}
		var errs []error
		for _, a := range addrs {
			conn, err := d.DialContext(ctx, network, netip.AddrPortFrom(a.Unmap(), uint16(port)).String())
			if err == nil {
				return conn, nil
			}
			errs = append(errs, err)
		}
		return nil, errors.Join(errs...)
	}
}

// control runs just before connect(2) with the address actually being
// dialled: the last line of defence whatever resolved it.
func (g Guard) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return notAllowed("invalid address")
	}
	return g.checkAddr(ap.Addr())
}

func (g Guard) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > maxRedirects {
		return &Error{Kind: ErrDownload, Reason: "too many redirects"}
	}
	return g.checkURL(req.Context(), req.URL)
}

// IsVideoSharing reports whether u points at a video-sharing site whose
// pages are not media files and need yt-dlp to extract the audio.
func IsVideoSharing(u *url.URL) bool {
	if u == nil {
		return false
	}
	host := hostOf(u)
	for _, d := range []string{"youtube.com", "youtu.be", "youtube-nocookie.com", "vimeo.com",
		"tiktok.com", "dailymotion.com", "dai.ly"} {
		if host == d || hasDomainSuffix(host, d) {
			return true
		}
	}
	for _, d := range []string{"x.com", "twitter.com"} {
		if (host == d || hasDomainSuffix(host, d)) && containsStatus(u.Path) {
			return true
		}
	}
	return false
}
