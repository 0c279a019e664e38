package loopback

import (
	"context"
	"net"
	"net/http"
	"testing"
)

func TestHostOriginAndHostHeader(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST": true, "127.0.0.1": true, "127.9.9.9": true, "::1": true, "[::1]": true,
		"::ffff:127.0.0.1": true, "10.0.0.1": false, "example.com": false, "": false, "localhost.evil.com": false,
	} {
		if Host(host) != want {
			t.Errorf("Host(%q) = %v", host, !want)
		}
	}
	for origin, want := range map[string]bool{
		"": true, "http://localhost:3000": true, "http://127.0.0.1": true, "http://[::1]:8080": true,
		"https://evil.example": false, "null": false, "file://": false,
	} {
		if Origin(origin) != want {
			t.Errorf("Origin(%q) = %v", origin, !want)
		}
	}
	if !Addr("127.0.0.1:0") || !Addr("[::1]:80") || Addr("0.0.0.0:80") || Addr("nonsense") {
		t.Error("Addr")
	}
	on := func(local, host string) bool {
		addr, _ := net.ResolveTCPAddr("tcp", local)
		r, _ := http.NewRequestWithContext(context.WithValue(context.Background(), http.LocalAddrContextKey, addr), "POST", "http://"+host+"/mcp", nil)
		r.Host = host
		return HostHeader(r)
	}
	if !on("127.0.0.1:7000", "localhost:7000") || !on("127.0.0.1:7000", "127.0.0.1:7000") || !on("[::1]:7000", "[::1]:7000") {
		t.Error("a loopback Host on a loopback listener was refused")
	}
	if on("127.0.0.1:7000", "rebound.example:7000") {
		t.Error("a foreign Host on a loopback listener passed")
	}
	if !on("10.0.0.5:7000", "anything.example") {
		t.Error("a request on a listener that is not loopback was refused")
	}
}

func TestOriginCases(t *testing.T) {
	for origin, want := range map[string]bool{
		"":                          true,
		"http://localhost":          true,
		"https://LOCALHOST:8443":    true,
		"http://127.0.0.1:3000":     true,
		"http://127.1.2.3":          true,
		"http://[::1]:9":            true,
		"http://[::ffff:127.0.0.1]": true,
		"null":                      false,
		"http://evil.example":       false,
		"http://localhost.evil":     false,
		"http://10.0.0.1":           false,
		"file:///etc/passwd":        false,
		"::1":                       false,
	} {
		if got := Origin(origin); got != want {
			t.Errorf("Origin(%q) = %t, want %t", origin, got, want)
		}
	}
}
