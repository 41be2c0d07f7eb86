package netguard

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// Check is the static admission check: https only, no credentials, and the
// host — an IP literal in any form inet_aton accepts, or a name resolved
// once — must be publicly routable (every resolved address, not just one).
func (g Guard) Check(rawURL string) error {
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	return g.CheckContext(ctx, rawURL)
}

// CheckContext is Check with the caller's context bounding DNS resolution.
func (g Guard) CheckContext(ctx context.Context, rawURL string) error {
	// A video-sharing link can only be fetched through yt-dlp: without it,
	// say so before anything else.
	if u, err := url.Parse(strings.TrimSpace(rawURL)); err == nil && IsVideoSharing(u) {
		if _, err := g.ytdlpPath(); err != nil {
			return err
		}
	}
	_, err := g.parseAndCheck(ctx, rawURL)
	return err
}

func (g Guard) parseAndCheck(ctx context.Context, rawURL string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil {
		return nil, notAllowed("malformed URL")
	}
	return u, g.checkURL(ctx, u)
}

func (g Guard) checkURL(ctx context.Context, u *url.URL) error {
	if u.Scheme != "https" {
		return notAllowed("only https URLs are accepted")
	}
	if u.User != nil {
		return notAllowed("URLs with credentials are not accepted")
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if u.Opaque != "" || host == "" {
		return notAllowed("URL has no host")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return notAllowed("invalid port")
		}
	}
	if addr, isIP, err := parseIPHost(host); err != nil {
		return err
	} else if isIP {
		return g.checkAddr(addr)
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") ||
		strings.HasSuffix(host, ".internal") || host == "localhost.localdomain" {
		return notAllowed("internal host names are not accepted")
	}
	if !strings.Contains(host, ".") {
		// Single-label names resolve through the server's search domains.
		return notAllowed("host must be a fully qualified domain name")
	}
	if last := host[strings.LastIndexByte(host, '.')+1:]; last == "" || last[0] >= '0' && last[0] <= '9' {
		// No top-level domain starts with a digit: this is a numeric
		// form inet_aton rejects, and a resolver might not.
		return notAllowed("invalid host")
	}
	addrs, err := g.resolver().LookupNetIP(ctx, "ip", host)
	if err != nil {
		var dnsErr *net.DNSError
		if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
			return &Error{Kind: ErrNotAllowed, Reason: ReasonNotResolving, Err: err}
		}
		return &Error{Kind: ErrDownload, Reason: ReasonUnresolved, Err: err}
	}
	if len(addrs) == 0 {
		return notAllowed(ReasonNotResolving)
	}
	for _, a := range addrs {
		if err := g.checkAddr(a); err != nil {
			return notAllowed("host resolves to a non-public address")
		}
	}
	return nil
}

func (g Guard) resolver() Resolver {
	if g.Resolver != nil {
		return g.Resolver
	}
	return net.DefaultResolver
}

// parseIPHost recognises IP-literal hosts: IPv6 (brackets already stripped)
// and every IPv4 spelling inet_aton accepts ("2130706433", "0177.0.0.1",
// "0x7f.0.0.1", "127.1").
func parseIPHost(host string) (netip.Addr, bool, error) {
	if strings.Contains(host, ":") {
		a, err := netip.ParseAddr(host)
		if err != nil || a.Zone() != "" {
			return netip.Addr{}, false, notAllowed("invalid IPv6 address")
		}
		return a, true, nil
	}
	if a, ok := inetAton(host); ok {
		return a, true, nil
	}
	return netip.Addr{}, false, nil
}

// inetAton parses IPv4 the way the C library's inet_aton does: one to four
// dot-separated parts, each decimal, octal (leading 0) or hex (0x); the last
// part fills the remaining bytes.
func inetAton(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		base, digits := 10, p
		switch {
		case len(p) > 1 && (p[:2] == "0x" || p[:2] == "0X"):
			base, digits = 16, p[2:]
		case len(p) > 1 && p[0] == '0':
			base, digits = 8, p[1:]
		}
		if digits == "" || strings.ContainsAny(digits, "+-_") {
			return netip.Addr{}, false
		}
		v, err := strconv.ParseUint(digits, base, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	n := len(vals)
	for _, v := range vals[:n-1] {
		if v > 255 {
			return netip.Addr{}, false
		}
	}
	if vals[n-1] >= 1<<(8*(5-n)) {
		return netip.Addr{}, false
	}
	ip := vals[n-1]
	for i, v := range vals[:n-1] {
		ip |= v << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(ip >> 24), byte(ip >> 16), byte(ip >> 8), byte(ip)}), true
}

var (
	metadataAddrs = []netip.Addr{
		netip.MustParseAddr("169.254.169.254"),
		netip.MustParseAddr("fd00:ec2::254"),
	}
	// deniedPrefixes are the ranges that are not publicly routable beyond
	// what netip's predicates cover.
	deniedPrefixes = []netip.Prefix{
		netip.MustParsePrefix("0.0.0.0/8"),
		netip.MustParsePrefix("100.64.0.0/10"), // CGNAT
		netip.MustParsePrefix("192.0.0.0/24"),  // IETF protocol assignments
		netip.MustParsePrefix("192.0.2.0/24"),  // documentation
		netip.MustParsePrefix("198.18.0.0/15"), // benchmarking
		netip.MustParsePrefix("198.51.100.0/24"),
		netip.MustParsePrefix("203.0.113.0/24"),
		netip.MustParsePrefix("240.0.0.0/4"), // reserved, incl. 255.255.255.255
		netip.MustParsePrefix("::/96"),       // IPv4-compatible (deprecated)
		netip.MustParsePrefix("64:ff9b:1::/48"),
		netip.MustParsePrefix("100::/64"),  // discard
		netip.MustParsePrefix("2001::/32"), // Teredo
		netip.MustParsePrefix("2001:db8::/32"),
		netip.MustParsePrefix("fec0::/10"), // site-local (deprecated)
	}
	nat64Prefix = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour   = netip.MustParsePrefix("2002::/16")
)

// checkAddr refuses addresses that are not publicly routable unless an
// AllowPrefixes entry covers them.
func (g Guard) checkAddr(a netip.Addr) error {
	a = a.Unmap().WithZone("")
	if !a.IsValid() {
		return notAllowed("invalid address")
	}
	for _, p := range g.AllowPrefixes {
		if p.Contains(a) {
			return nil
		}
	}
	for _, m := range metadataAddrs {
		if a == m {
			return notAllowed("cloud metadata addresses are not accepted")
		}
	}
	if a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return notAllowed("address is not publicly routable")
	}
	for _, p := range deniedPrefixes {
		if p.Contains(a) {
			return notAllowed("address is not publicly routable")
		}
	}
	// Prefixes that embed an IPv4 address are as safe as that address.
	b := a.As16()
	if nat64Prefix.Contains(a) {
		return g.checkAddr(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
	}
	if sixToFour.Contains(a) {
		return g.checkAddr(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
	}
	return nil
}
