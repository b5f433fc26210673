package ratelimit

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Proxies is the set of reverse proxies whose X-Forwarded-For is believed.
// The zero value trusts none: the client address is then the connection's
// remote address, whatever headers the request carries.
type Proxies struct{ nets []netip.Prefix }

// ParseProxies reads a list of IP addresses and CIDR prefixes (the
// trusted-proxy setting), e.g. "10.0.0.0/8, 127.0.0.1".
func ParseProxies(list []string) (Proxies, error) {
	var p Proxies
	for _, raw := range list {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		if pfx, err := netip.ParsePrefix(raw); err == nil {
			p.nets = append(p.nets, pfx.Masked())
			continue
		}
		addr, err := netip.ParseAddr(raw)
		if err != nil {
			return Proxies{}, fmt.Errorf("trusted proxy %q: not an IP address or CIDR prefix", raw)
		}
		addr = addr.Unmap()
		p.nets = append(p.nets, netip.PrefixFrom(addr, addr.BitLen()))
	}
	return p, nil
}

func (p Proxies) trusts(a netip.Addr) bool {
	for _, n := range p.nets {
		if n.Contains(a) {
			return true
		}
	}
	return false
}

// ClientAddr is the address a limit is keyed by: the connection's remote
// address; when that is a trusted proxy, the right-most address of
// X-Forwarded-For that is not itself a trusted proxy (the left part of the
// header is whatever the client wrote, so it is never believed). IPv6
// addresses are cut to their /64, the block one subscriber usually gets, so
// that one host cannot dodge a limit by changing its low bits.
func (p Proxies) ClientAddr(r *http.Request) string {
	addr, ok := parseHostAddr(r.RemoteAddr)
	if !ok {
		return r.RemoteAddr
	}
	if p.trusts(addr) {
		hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
		for i := len(hops) - 1; i >= 0; i-- {
			hop, ok := parseHostAddr(strings.TrimSpace(hops[i]))
			if !ok {
				break
			}
			addr = hop
			if !p.trusts(hop) {
				break
			}
		}
	}
	if addr.Is6() {
		pfx, _ := addr.Prefix(64)
		return pfx.String()
	}
	return addr.String()
}

// parseHostAddr reads "ip", "ip:port" or "[ip]:port".
func parseHostAddr(s string) (netip.Addr, bool) {
	if host, _, err := net.SplitHostPort(s); err == nil {
		s = host
	}
	a, err := netip.ParseAddr(strings.Trim(s, "[]"))
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap().WithZone(""), true
}
