package oauth

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// freeCallback is a loopback callback URL on a port free now: a fixed one
// may be taken by whatever else runs on the machine (CI runs packages side
// by side), and the login step then ends before it prompts.
func freeCallback(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return "http://" + l.Addr().String() + "/callback"
}

// The browser step opens whatever URL it is given: no scheme check.
func TestReviewOpensNonHTTPURL(t *testing.T) {
	var opened string
	tr := &Transport{cfg: Config{Interactive: true, CallbackURL: freeCallback(t),
		BrowserTimeout: 200 * time.Millisecond,
		OpenBrowser:    func(_ context.Context, u string) error { opened = u; return nil }}}
	_, _ = tr.fetchCode(context.Background(), &auth.AuthorizationArgs{URL: "file:///C:/Windows/System32/calc.exe?state=s"})
	if opened != "" {
		t.Fatalf("opened a non-http(s) authorization URL in the browser/opener: %q", opened)
	}
}

// A callback with error= and no (or a wrong) state ends the login.
func TestReviewErrorCallbackWithoutStateAbortsLogin(t *testing.T) {
	cb := freeCallback(t)
	tr := &Transport{cfg: Config{Interactive: true, CallbackURL: cb, BrowserTimeout: 2 * time.Second,
		OpenBrowser: func(_ context.Context, u string) error {
			go func() {
				time.Sleep(100 * time.Millisecond)
				r, err := http.Get(cb + "?error=access_denied&error_description=" + url.QueryEscape("visit https://evil.example to fix"))
				if err == nil {
					r.Body.Close()
				}
			}()
			return nil
		}}}
	_, err := tr.fetchCode(context.Background(), &auth.AuthorizationArgs{URL: "https://as.example/authorize?state=REAL"})
	if err != nil && err.Error() != "" && !contains(err.Error(), "timed out") {
		t.Fatalf("a forged, state-less error callback ended the login: %v", err)
	}
}

func contains(s, sub string) bool {
	return len(s) >= len(sub) && (func() bool {
		for i := 0; i+len(sub) <= len(s); i++ {
			if s[i:i+len(sub)] == sub {
				return true
			}
		}
		return false
	})()
}

// The authorization URL (server-controlled) is printed to the terminal raw.
func TestReviewPromptPrintsControlChars(t *testing.T) {
	var b strings.Builder
	tr := &Transport{cfg: Config{Interactive: true, CallbackURL: freeCallback(t), NoBrowser: true,
		BrowserTimeout: 50 * time.Millisecond, Prompt: &b}}
	u := "https://as.example/authorize?x=\u009b2J\u202etxe.lapyap&state=s"
	if _, err := url.Parse(u); err != nil {
		t.Fatal(err)
	}
	_, _ = tr.fetchCode(context.Background(), &auth.AuthorizationArgs{URL: u})
	if strings.ContainsAny(b.String(), "\u009b\u202e") {
		t.Fatalf("C1 CSI / bidi override printed raw to the terminal: %q", b.String())
	}
}

// The printed authorization URL names the host it really leads to, on a
// line of its own, saying that the part before @ is not the host; the
// browser step's text says the same.
func TestPromptNamesTheRealHost(t *testing.T) {
	var b strings.Builder
	var opened string
	tr := &Transport{cfg: Config{Interactive: true, CallbackURL: freeCallback(t),
		BrowserTimeout: 50 * time.Millisecond, Prompt: &b,
		OpenBrowser: func(_ context.Context, u string) error { opened = u; return nil }}}
	u := "https://accounts.google.com@evil.example/authorize?state=s"
	_, _ = tr.fetchCode(context.Background(), &auth.AuthorizationArgs{URL: u})
	want := "\n  host  evil.example (the part before @ (accounts.google.com) is not the host)\n  " + u + "\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("prompt = %q, want it to contain %q", b.String(), want)
	}
	if opened != u {
		t.Errorf("opened %q, want the URL as given %q", opened, u)
	}
	b.Reset()
	tr.cfg.OpenBrowser = nil
	tr.cfg.NoBrowser = true
	_, _ = tr.fetchCode(context.Background(), &auth.AuthorizationArgs{URL: "https://\u0430pple.com/authorize?state=s"})
	if !strings.Contains(b.String(), "\n  host  xn--pple-43d.com (written \u0430pple.com, not all ASCII") {
		t.Errorf("prompt = %q, want the punycode host on its own line", b.String())
	}
}
