package cli

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"inflight/demo"
	"inflight/internal/oauthas"
)

// browserEnv makes the test binary, run as $BROWSER, play the browser: it
// follows the authorization URL (its last argument) to the callback.
const browserEnv = "INFLIGHT_CLI_TEST_BROWSER"

func runTestBrowser() {
	if os.Getenv(browserEnv) != "1" {
		return
	}
	resp, err := http.Get(os.Args[len(os.Args)-1])
	if err != nil {
		os.Exit(1)
	}
	resp.Body.Close()
	os.Exit(0)
}

func protectedDemoURL(t *testing.T) (string, *oauthas.Server) {
	t.Helper()
	srv := demo.New(demo.Options{TickInterval: time.Hour})
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	t.Cleanup(func() { srv.Close() })
	as := oauthas.New(ts.URL, oauthas.Config{Dynamic: true, Scopes: []string{"mcp"}})
	mux.Handle("/", as.Handler())
	res := &oauthas.Resource{AS: as, URL: ts.URL + "/mcp", Scopes: []string{"mcp"}}
	mux.Handle("/mcp", res.Mount(mux, srv.HTTPHandler()))
	return res.URL, as
}

func freeCallbackURL(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return "http://" + ln.Addr().String() + "/callback"
}

// login with $BROWSER playing the browser, status, a headless call on the
// kept token, logout, and the call refused with what to run.
func TestAuthLoginStatusCallLogout(t *testing.T) {
	config := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", config)
	t.Setenv("HOME", config)
	t.Setenv("BROWSER", os.Args[0])
	t.Setenv(browserEnv, "1")
	u, as := protectedDemoURL(t)

	code, stdout, stderr := inflight(t, "auth", "login", u, "--callback-url", freeCallbackURL(t))
	t.Logf("login:\n%s%s", stderr, stdout)
	if code != 0 || !strings.Contains(stdout, "logged in: "+u) {
		t.Fatalf("login: %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"open this URL in a browser", "auth challenge", "auth server_metadata", "auth registration", "auth browser", "callback received", "auth token"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("login's stderr lacks %q:\n%s", want, stderr)
		}
	}
	files, _ := filepath.Glob(filepath.Join(config, "inflight", "tokens", "*.json"))
	if len(files) != 1 {
		t.Fatalf("kept %v", files)
	}
	for _, tok := range as.Issued() {
		if strings.Contains(stdout+stderr, tok) {
			t.Fatalf("login printed a token")
		}
	}

	code, stdout, _ = inflight(t, "auth", "status")
	if code != 0 || !strings.Contains(stdout, u+" — issuer "+as.Issuer) || !strings.Contains(stdout, "refreshable") {
		t.Fatalf("status: %d %s", code, stdout)
	}
	for _, tok := range as.Issued() {
		if strings.Contains(stdout, tok) {
			t.Fatalf("status printed a token")
		}
	}

	code, stdout, stderr = inflight(t, "call", u, "tools/list")
	if code != 0 || as.Count("authorize") != 1 {
		t.Fatalf("call with the kept token: %d authorize=%d\n%s\n%s", code, as.Count("authorize"), stdout, stderr)
	}

	code, stdout, _ = inflight(t, "auth", "logout", u)
	if code != 0 || !strings.Contains(stdout, "forgot 1 token(s)") {
		t.Fatalf("logout: %d %s", code, stdout)
	}
	// With no browser to open (no terminal, no $BROWSER), the call is
	// refused with what to run.
	t.Setenv("BROWSER", "")
	code, stdout, stderr = inflight(t, "call", u, "tools/list")
	if code != 2 || !strings.Contains(stdout+stderr, "inflight auth login "+u) {
		t.Fatalf("call after logout: %d\n%s\n%s", code, stdout, stderr)
	}
	// With $BROWSER saying how to open one, the call logs in by itself.
	t.Setenv("BROWSER", os.Args[0])
	code, stdout, stderr = inflight(t, "call", u, "tools/list", "--callback-url", freeCallbackURL(t))
	if code != 0 || as.Count("authorize") != 2 {
		t.Fatalf("call after logout with $BROWSER: %d authorize=%d\n%s\n%s", code, as.Count("authorize"), stdout, stderr)
	}
}

func TestAuthFlagsUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"call", "ping", "--client-id", "x", "--", "srv"}, "apply to a URL server"},
		{[]string{"call", "http://127.0.0.1:1/mcp", "ping", "--client-credentials"}, "needs --client-id and --client-secret"},
		{[]string{"call", "http://127.0.0.1:1/mcp", "ping", "-H", "Authorization: Bearer abc", "--client-id", "x"}, "goes with no OAuth flag"},
		{[]string{"call", "http://127.0.0.1:1/mcp", "ping", "--callback-url", "http://example.com:8/cb"}, "a loopback address"},
		{[]string{"call", "http://127.0.0.1:1/mcp", "ping", "--client-metadata-url", "http://example.com/c.json"}, "want an HTTPS URL with a path"},
		{[]string{"call", "http://127.0.0.1:1/mcp", "ping", "--client-metadata-url", "https://example.com/"}, "want an HTTPS URL with a path"},
		{[]string{"call", "http://127.0.0.1:1/mcp", "ping", "--client-id", "x", "--client-secret", "hunter22"}, ""},
		{[]string{"call", "http://127.0.0.1:1/mcp", "ping", "--client-id", "x", "--client-key-file", "k.pem"}, "--client-key-file goes with --client-credentials"},
		{[]string{"call", "http://127.0.0.1:1/mcp", "ping", "--client-credentials", "--client-id", "x", "--client-secret", "s", "--client-key-file", "k.pem"}, "give one"},
		{[]string{"call", "http://127.0.0.1:1/mcp", "ping", "--client-credentials", "--client-id", "x", "--client-key-file", "/nonexistent/k.pem"}, "--client-key-file: open /nonexistent/k.pem"},
		{[]string{"call", "http://127.0.0.1:1/mcp", "ping", "--client-credentials", "--client-id", "x"}, "--client-secret or --client-key-file"},
	} {
		code, stdout, stderr := inflight(t, tc.args...)
		if tc.want == "" {
			if strings.Contains(stdout+stderr, "hunter22") {
				t.Errorf("%v: the client secret was printed:\n%s%s", tc.args, stdout, stderr)
			}
			continue
		}
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: %d %q, want %q", tc.args, code, stderr, tc.want)
		}
	}
}
