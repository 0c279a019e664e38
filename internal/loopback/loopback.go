// Package loopback holds the checks a local HTTP endpoint makes against
// DNS rebinding, shared by the demo's server and the proxy: that a host
// name or address is loopback, that a request's Origin is absent or
// loopback (the Streamable HTTP transport's required Origin validation),
// and that a request to a loopback listener names a loopback Host.
package loopback

import (
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// Host reports whether host (without port; brackets allowed) is localhost
// or a loopback IP address (127.0.0.0/8, ::1).
func Host(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && ip.Unmap().IsLoopback()
}

// Addr reports whether a listen address's host is loopback.
func Addr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && Host(host)
}

// Origin accepts no Origin (a client that is not a browser) or a loopback
// one: a web page elsewhere must not reach a local server.
func Origin(origin string) bool {
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	return Host(u.Hostname())
}

// HostHeader reports whether r may be served: on a loopback listener its
// Host must be a loopback name or address too, or a web page whose name
// was made to resolve to 127.0.0.1 would reach the server (go-sdk's
// handler makes the same check). A request on another listener passes.
func HostHeader(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil {
		return true
	}
	if !Addr(local.String()) {
		return true
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return Host(host)
}
