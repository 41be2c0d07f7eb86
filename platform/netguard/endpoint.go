package netguard

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// CheckEndpoint is the admission check for URLs Parley posts to (webhook
// endpoints, push services): the rules of Check, except that plain http is
// accepted when the host is inside AllowPrefixes — every address it
// resolves to — so development and tests can receive on loopback without
// certificates while production stays https-only.
func (g Guard) CheckEndpoint(ctx context.Context, rawURL string) error {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil {
		return notAllowed("malformed URL")
	}
	switch {
	case u.Scheme == "http":
		if err := g.checkPlainHost(ctx, u.Hostname()); err != nil {
			return err
		}
		secure := *u
		secure.Scheme = "https"
		u = &secure
	case u.Scheme != "https":
		return notAllowed(g.schemeRule())
	}
	return g.checkURL(ctx, u)
}

// schemeRule is the refusal of a scheme an endpoint may not use, true to
// the deployment: where it allows private ranges, plain http to them is
// accepted too.
func (g Guard) schemeRule() string {
	if len(g.AllowPrefixes) > 0 {
		return "only https URLs are accepted, or http to an address this deployment allows"
	}
	return "only https URLs are accepted"
}

// checkPlainHost accepts a plain-http host only when every address it names
// lies inside AllowPrefixes.
func (g Guard) checkPlainHost(ctx context.Context, host string) error {
	addrs, err := g.addrsOf(ctx, host)
	if err != nil {
		return err
	}
	for _, a := range addrs {
		if !g.allowed(a) {
			return notAllowed(g.schemeRule())
		}
	}
	return nil
}

func (g Guard) addrsOf(ctx context.Context, host string) ([]netip.Addr, error) {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if a, isIP, err := parseIPHost(host); err != nil {
		return nil, err
	} else if isIP {
		return []netip.Addr{a}, nil
	}
	addrs, err := g.resolver().LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return nil, &Error{Kind: ErrNotAllowed, Reason: ReasonNotResolving, Err: err}
	}
	return addrs, nil
}

func (g Guard) allowed(a netip.Addr) bool {
	a = a.Unmap().WithZone("")
	for _, p := range g.AllowPrefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// EndpointClient returns the HTTP client for posting to checked endpoints:
// every connection is dialled through the guard (a name rebound to a private
// address after CheckEndpoint is refused at connect time), plain http may
// only reach addresses inside AllowPrefixes, redirects are not followed
// (the endpoint's 3xx is its answer), and no proxy is used.
func (g Guard) EndpointClient(timeout time.Duration) *http.Client {
	secure := g.transport()
	plain := g.transport()
	plain.DialContext = g.dialContext(&net.Dialer{Timeout: ConnectTimeout, KeepAlive: 30 * time.Second, Control: g.allowedOnly})
	return &http.Client{
		Timeout:       timeout,
		Transport:     schemeTransport{https: secure, http: plain},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// allowedOnly is the connect-time check for plain http: the address must be
// inside AllowPrefixes, not merely public.
func (g Guard) allowedOnly(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return notAllowed("invalid address")
	}
	if !g.allowed(ap.Addr()) {
		return notAllowed(g.schemeRule())
	}
	return nil
}

// schemeTransport sends each request through the transport of its scheme.
type schemeTransport struct{ https, http http.RoundTripper }

func (t schemeTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	switch req.URL.Scheme {
	case "https":
		return t.https.RoundTrip(req)
	case "http":
		return t.http.RoundTrip(req)
	}
	if req.Body != nil {
		req.Body.Close()
	}
	return nil, errors.New("unsupported scheme " + strconv.Quote(req.URL.Scheme))
}
