package client

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzSSEEndpoint: whatever an endpoint event says, an endpoint accepted
// is on the stream's origin and carries no credentials but the user's; a
// refusal quotes nothing raw (control characters escaped).
func FuzzSSEEndpoint(f *testing.F) {
	for _, s := range []string{"/messages?sessionId=1", "?sessionid=x", "http://127.0.0.1:8080/m", "//evil.example/x",
		"http://evil.example/x", "https://127.0.0.1:8080/x", "http://a:b@127.0.0.1:8080/x", "http://127.0.0.1:8080@evil/x",
		"\x1b[2J", "  /x  ", "", "javascript:alert(1)", "http://[::1]:8080/x", "http://127.0.0.1:8080#frag"} {
		f.Add(s)
	}
	base, _ := url.Parse("http://127.0.0.1:8080/sse")
	t := &sseTransport{url: base}
	f.Fuzz(func(tt *testing.T, data string) {
		ep, err := t.resolveEndpoint(base, []byte(data))
		if err != nil {
			if strings.ContainsFunc(err.Error(), func(r rune) bool { return r < ' ' || r == 0x7f }) {
				tt.Fatalf("error holds a control character: %q", err)
			}
			return
		}
		if ep.Scheme != "http" || ep.Host != "127.0.0.1:8080" || ep.User != nil || ep.Fragment != "" {
			tt.Fatalf("%q resolved to %s", data, ep)
		}
	})
}
