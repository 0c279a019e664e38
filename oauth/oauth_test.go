package oauth_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"inflight/event"
	"inflight/internal/oauthas"
	"inflight/oauth"
)

// world is an authorization server and an MCP endpoint it protects, on one
// loopback server, and the steps a Transport reported.
type world struct {
	t     *testing.T
	as    *oauthas.Server
	res   *oauthas.Resource
	srv   *httptest.Server
	url   string
	mu    sync.Mutex
	steps []event.AuthStep
}

func newWorld(t *testing.T, cfg oauthas.Config, res oauthas.Resource) *world {
	t.Helper()
	w := &world{t: t}
	mux := http.NewServeMux()
	w.srv = httptest.NewServer(mux)
	t.Cleanup(w.srv.Close)
	w.url = w.srv.URL + "/mcp"
	w.as = oauthas.New(w.srv.URL, cfg)
	res.AS, res.URL = w.as, w.url
	w.res = &res
	mux.Handle("/", w.as.Handler())
	mux.Handle("/mcp", res.Mount(mux, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(rw, "ok %s", body)
	})))
	return w
}

func freeCallback(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/callback"
}

// browser plays the user's browser: it follows the authorization URL's
// redirects to the callback, as a browser would.
func browser(ctx context.Context, u string) error {
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
	}()
	return nil
}

func (w *world) config() oauth.Config {
	return oauth.Config{Server: w.url, Interactive: true, CallbackURL: freeCallback(w.t), OpenBrowser: browser,
		BrowserTimeout: 5 * time.Second}
}

func (w *world) transport(cfg oauth.Config) *oauth.Transport {
	w.t.Helper()
	tr, err := oauth.New(cfg, nil, func(_ context.Context, s event.AuthStep) {
		w.mu.Lock()
		w.steps = append(w.steps, s)
		w.mu.Unlock()
	})
	if err != nil {
		w.t.Fatal(err)
	}
	return tr
}

func (w *world) post(tr *oauth.Transport, header ...string) (*http.Response, error) {
	req, _ := http.NewRequest(http.MethodPost, w.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return (&http.Client{Transport: tr}).Do(req)
}

func (w *world) mustOK(tr *oauth.Transport, header ...string) {
	w.t.Helper()
	resp, err := w.post(tr, header...)
	if err != nil {
		w.t.Fatalf("POST: %v\n%s", err, w.dump())
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(string(body), "ok {") {
		w.t.Fatalf("POST: %d %q (want 200 and the body sent again)\n%s", resp.StatusCode, body, w.dump())
	}
}

func (w *world) kinds() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, s := range w.steps {
		k := s.Kind.String()
		if s.FellBack {
			k += "(fell back)"
		}
		out = append(out, k)
	}
	return out
}

func (w *world) dump() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var b strings.Builder
	for _, s := range w.steps {
		fmt.Fprintf(&b, "  %-18s %s %s %d fell=%v %q err=%q\n", s.Kind, s.Method, s.URL, s.Status, s.FellBack, s.Text, s.Err)
	}
	return b.String()
}

// noSecrets: no step carries a token the server issued.
func (w *world) noSecrets() {
	w.t.Helper()
	d := w.dump()
	for _, tok := range w.as.Issued() {
		if strings.Contains(d, tok) {
			w.t.Fatalf("a step shows token %q:\n%s", tok, d)
		}
	}
}

func has(kinds []string, want ...string) bool {
	i := 0
	for _, k := range kinds {
		if i < len(want) && k == want[i] {
			i++
		}
	}
	return i == len(want)
}

func TestDynamicRegistrationPKCEAndKeptToken(t *testing.T) {
	w := newWorld(t, oauthas.Config{Dynamic: true, Scopes: []string{"mcp"}}, oauthas.Resource{Scopes: []string{"mcp"}})
	cfg := w.config()
	cfg.Store = &oauth.Store{Dir: filepath.Join(t.TempDir(), "tokens")}
	tr := w.transport(cfg)
	w.mustOK(tr)
	if !has(w.kinds(), "challenge", "resource_metadata", "server_metadata", "registration", "browser", "browser", "token", "stored", "token", "retry") {
		t.Fatalf("steps: %v\n%s", w.kinds(), w.dump())
	}
	if w.as.Count("register") != 1 || w.as.Count("authorize") != 1 || w.as.Count("authorization_code") != 1 {
		t.Fatalf("register %d authorize %d code %d", w.as.Count("register"), w.as.Count("authorize"), w.as.Count("authorization_code"))
	}
	w.mustOK(tr) // the token is reused
	if w.as.Count("authorize") != 1 {
		t.Fatalf("authorized again: %d", w.as.Count("authorize"))
	}
	// The resource parameter named the server.
	tok, _ := tr.Token(context.Background())
	if g, ok := w.as.Lookup(tok.AccessToken); !ok || g.Resource != w.url || !slices.Equal(g.Scopes, []string{"mcp"}) {
		t.Fatalf("grant %+v %v, want resource %s and scope mcp", g, ok, w.url)
	}
	w.noSecrets()

	fi, err := os.Stat(cfg.Store.Dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("store dir: %v %v", fi.Mode(), err)
	}
	files, _ := filepath.Glob(filepath.Join(cfg.Store.Dir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("files %v", files)
	}
	if fi, _ := os.Stat(files[0]); fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode %v", fi.Mode())
	}
	e, err := cfg.Store.Load(w.url)
	if err != nil || e == nil || e.Issuer != w.as.Issuer || !e.Registered || e.Token.RefreshToken == "" {
		t.Fatalf("kept entry %+v %v", e, err)
	}
	if strings.Contains(e.String(), e.Token.AccessToken) || strings.Contains(e.String(), e.Token.RefreshToken) {
		t.Fatal("Entry.String shows a token")
	}

	// A second run uses the kept token, and the client registered before:
	// no browser, no registration.
	cfg2 := w.config()
	cfg2.Store = cfg.Store
	cfg2.OpenBrowser = func(context.Context, string) error { t.Error("browser opened with a kept token"); return nil }
	w.mustOK(w.transport(cfg2))
	if w.as.Count("authorize") != 1 || w.as.Count("register") != 1 {
		t.Fatalf("authorize %d register %d", w.as.Count("authorize"), w.as.Count("register"))
	}

	// When the server forgets the token and its refresh token, the next
	// login reuses the registered client.
	w.as.Revoke()
	w.as.RevokeRefresh()
	cfg3 := w.config()
	cfg3.CallbackURL = cfg.CallbackURL // the registered redirect URI
	cfg3.Store = cfg.Store
	w.mustOK(w.transport(cfg3))
	if w.as.Count("authorize") != 2 || w.as.Count("register") != 1 {
		t.Fatalf("authorize %d register %d", w.as.Count("authorize"), w.as.Count("register"))
	}
}

func TestMetadataFallbacks(t *testing.T) {
	for _, tc := range []struct {
		name     string
		meta     string
		prm      string
		noRM     bool
		wantKind []string
	}{
		{"challenge URL", "oauth", "challenge", false, []string{"resource_metadata", "server_metadata"}},
		{"path-inserted PRM without resource_metadata", "oauth", "path", true, []string{"resource_metadata", "server_metadata"}},
		{"root PRM", "oauth", "root", true, []string{"resource_metadata(fell back)", "resource_metadata", "server_metadata"}},
		{"OpenID configuration", "oidc", "path", false, []string{"resource_metadata", "server_metadata(fell back)", "server_metadata"}},
		{"no PRM: the server's root is the authorization server", "oauth", "none", false,
			[]string{"resource_metadata(fell back)", "resource_metadata(fell back)", "server_metadata"}},
		{"no metadata at all: the 2025-03-26 default endpoints", "none", "path", false,
			[]string{"resource_metadata", "server_metadata(fell back)", "server_metadata(fell back)", "registration"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, oauthas.Config{Metadata: tc.meta, Dynamic: true}, oauthas.Resource{PRM: tc.prm, NoResourceMetadata: tc.noRM})
			w.mustOK(w.transport(w.config()))
			if !has(w.kinds(), append(append([]string{"challenge"}, tc.wantKind...), "token", "retry")...) {
				t.Fatalf("steps %v, want %v in order\n%s", w.kinds(), tc.wantKind, w.dump())
			}
		})
	}
}

func TestPreregisteredClientNoRegistration(t *testing.T) {
	cb := freeCallback(t)
	w := newWorld(t, oauthas.Config{Dynamic: true, Clients: map[string]oauthas.Client{"pre": {Secret: "s3cret", RedirectURIs: []string{cb}}}}, oauthas.Resource{})
	cfg := w.config()
	cfg.CallbackURL, cfg.ClientID, cfg.ClientSecret = cb, "pre", "s3cret"
	w.mustOK(w.transport(cfg))
	if w.as.Count("register") != 0 || w.as.Count("authorization_code") != 1 {
		t.Fatalf("register %d code %d", w.as.Count("register"), w.as.Count("authorization_code"))
	}
	if strings.Contains(w.dump(), "s3cret") {
		t.Fatal("a step shows the client secret")
	}
}

func TestRedirectURIMismatchSaysSo(t *testing.T) {
	w := newWorld(t, oauthas.Config{Clients: map[string]oauthas.Client{"pre": {RedirectURIs: []string{"http://localhost:1/callback"}}}}, oauthas.Resource{})
	cfg := w.config()
	cfg.ClientID = "pre"
	cfg.BrowserTimeout = 300 * time.Millisecond
	_, err := w.post(w.transport(cfg))
	// The server refuses to redirect to an unregistered URI, so no
	// callback comes: the browser step times out and says so.
	if err == nil || !strings.Contains(err.Error(), "timed out") || !strings.Contains(err.Error(), "localhost and 127.0.0.1 differ") {
		t.Fatalf("err %v", err)
	}
}

// A callback without inflight's state is ignored, not taken: it neither
// ends nor fails the login (a forged redirect could otherwise abort one),
// and the timed-out browser step says it came.
func TestStateMismatchRefused(t *testing.T) {
	w := newWorld(t, oauthas.Config{Dynamic: true, WrongState: true}, oauthas.Resource{})
	cfg := w.config()
	cfg.BrowserTimeout = 500 * time.Millisecond
	_, err := w.post(w.transport(cfg))
	var ae *oauth.Error
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), "state mismatch") || !strings.Contains(err.Error(), "ignored") {
		t.Fatalf("err %v", err)
	}
	if w.as.Count("authorization_code") != 0 {
		t.Fatal("the code was exchanged despite the state mismatch")
	}
}

func TestIssuerMismatchRefused(t *testing.T) {
	w := newWorld(t, oauthas.Config{Dynamic: true, WrongIss: true}, oauthas.Resource{})
	_, err := w.post(w.transport(w.config()))
	if err == nil || !strings.Contains(err.Error(), "issuer") {
		t.Fatalf("err %v", err)
	}
	if w.as.Count("authorization_code") != 0 {
		t.Fatal("the code was exchanged from another issuer")
	}
}

func TestStepUpAndItsBound(t *testing.T) {
	need := func(r *http.Request) []string { return strings.Fields(r.Header.Get("X-Need")) }
	w := newWorld(t, oauthas.Config{Dynamic: true, Withhold: []string{"never"}}, oauthas.Resource{Scopes: []string{"read"}, Need: need})
	tr := w.transport(w.config())
	w.mustOK(tr)
	w.mustOK(tr, "X-Need", "write") // 403 insufficient_scope → step-up
	if w.as.Count("authorize") != 2 {
		t.Fatalf("authorize %d, want 2 (login, step-up)\n%s", w.as.Count("authorize"), w.dump())
	}
	tok, _ := tr.Token(context.Background())
	got := strings.Fields(fmt.Sprint(tok.Extra("scope")))
	slices.Sort(got)
	if strings.Join(got, " ") != "read write" {
		t.Fatalf("scopes after step-up %q, want the union", got)
	}
	before := w.as.Count("authorize")
	resp, err := w.post(tr, "X-Need", "never")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if n := w.as.Count("authorize") - before; n != 3 {
		t.Fatalf("%d authorizations for a scope never granted, want the bound (3)", n)
	}
	if k := w.kinds(); k[len(k)-1] != "failed" {
		t.Fatalf("last step %v", k[len(k)-1])
	}
}

func TestRefreshBeforeAskingAgain(t *testing.T) {
	// Tokens living 5s are expired at once for golang.org/x/oauth2 (it
	// refreshes 10s early): every use refreshes.
	w := newWorld(t, oauthas.Config{Dynamic: true, TokenLifetime: 5 * time.Second}, oauthas.Resource{})
	store := &oauth.Store{Dir: t.TempDir()}
	cfg := w.config()
	cfg.Store = store
	w.mustOK(w.transport(cfg))
	first, _ := store.Load(w.url)

	cfg2 := w.config()
	cfg2.Store = store
	cfg2.OpenBrowser = func(context.Context, string) error {
		t.Error("browser opened although a refresh token was kept")
		return nil
	}
	w.mustOK(w.transport(cfg2))
	if w.as.Count("authorize") != 1 || w.as.Count("refresh_token") == 0 {
		t.Fatalf("authorize %d refresh %d", w.as.Count("authorize"), w.as.Count("refresh_token"))
	}
	if !has(w.kinds(), "stored", "refresh") {
		t.Fatalf("steps %v", w.kinds())
	}
	now, _ := store.Load(w.url)
	if now.Token.AccessToken == first.Token.AccessToken {
		t.Fatal("the refreshed token was not kept")
	}
	w.noSecrets()
}

func TestClientCredentials(t *testing.T) {
	w := newWorld(t, oauthas.Config{ClientCredentials: true, Clients: map[string]oauthas.Client{"svc": {Secret: "sekrit"}}},
		oauthas.Resource{Scopes: []string{"mcp"}})
	cfg := oauth.Config{Server: w.url, ClientCredentials: true, ClientID: "svc", ClientSecret: "sekrit",
		OpenBrowser: func(context.Context, string) error { t.Error("browser opened for client credentials"); return nil }}
	w.mustOK(w.transport(cfg))
	if w.as.Count("client_credentials") != 1 || w.as.Count("authorize") != 0 {
		t.Fatalf("cc %d authorize %d", w.as.Count("client_credentials"), w.as.Count("authorize"))
	}
	if strings.Contains(w.dump(), "sekrit") {
		t.Fatal("a step shows the secret")
	}
	cfg.ClientSecret = "wrong"
	_, err := w.post(w.transport(cfg))
	if err == nil || !strings.Contains(err.Error(), "invalid_client") {
		t.Fatalf("wrong secret: %v", err)
	}
}

func TestNotInteractiveSaysWhatToRun(t *testing.T) {
	w := newWorld(t, oauthas.Config{Dynamic: true}, oauthas.Resource{})
	cfg := w.config()
	cfg.Interactive = false
	_, err := w.post(w.transport(cfg))
	if !errors.Is(err, oauth.ErrLoginNeeded) || !strings.Contains(err.Error(), "inflight auth login "+w.url) {
		t.Fatalf("err %v", err)
	}
	if w.as.Count("register") != 0 {
		t.Fatal("registered a client that cannot be used")
	}
}

func TestConcurrentRequestsAuthorizeOnce(t *testing.T) {
	w := newWorld(t, oauthas.Config{Dynamic: true}, oauthas.Resource{})
	tr := w.transport(w.config())
	var wg sync.WaitGroup
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.mustOK(tr)
		}()
	}
	wg.Wait()
	if w.as.Count("authorize") != 1 {
		t.Fatalf("authorize %d, want 1", w.as.Count("authorize"))
	}
}

func TestCallbackListenerClosesWhenCancelled(t *testing.T) {
	w := newWorld(t, oauthas.Config{Dynamic: true}, oauthas.Resource{})
	cfg := w.config()
	opened := make(chan struct{})
	cfg.OpenBrowser = func(context.Context, string) error { close(opened); return nil }
	tr := w.transport(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, w.url, strings.NewReader("{}"))
		_, err := (&http.Client{Transport: tr}).Do(req)
		done <- err
	}()
	<-opened
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	addr := strings.TrimSuffix(strings.TrimPrefix(cfg.CallbackURL, "http://"), "/callback")
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("the callback port is still held: %v", err)
	}
	ln.Close()
}

func TestCallbackURLMustBeLoopback(t *testing.T) {
	for _, u := range []string{"https://127.0.0.1:9/cb", "http://example.com:9/cb", "http://127.0.0.1/cb"} {
		if _, err := oauth.New(oauth.Config{Server: "http://x/mcp", CallbackURL: u}, nil, nil); err == nil {
			t.Errorf("%s accepted", u)
		}
	}
}

// A token the server stops accepting before its time (revoked, or the
// server's clock) is refreshed before the user is asked again; requests
// in flight meanwhile are sent again, not lost.
func TestRefusedTokenRefreshedBeforeAskingAgain(t *testing.T) {
	w := newWorld(t, oauthas.Config{Dynamic: true}, oauthas.Resource{})
	cfg := w.config()
	tr := w.transport(cfg)
	w.mustOK(tr)
	w.as.Revoke()
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.mustOK(tr)
		}()
	}
	wg.Wait()
	if w.as.Count("authorize") != 1 || w.as.Count("refresh_token") != 1 {
		t.Fatalf("authorize %d refresh %d, want 1 and 1\n%s", w.as.Count("authorize"), w.as.Count("refresh_token"), w.dump())
	}
	// When the refresh token is gone too, the user is asked again.
	w.as.Revoke()
	w.as.RevokeRefresh()
	w.mustOK(tr)
	if w.as.Count("authorize") != 2 {
		t.Fatalf("authorize %d, want 2", w.as.Count("authorize"))
	}
}

func TestBasicChallengeIsNotOAuth(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("WWW-Authenticate", `Basic realm="x"`)
		http.Error(rw, "who are you", http.StatusUnauthorized)
	}))
	t.Cleanup(srv.Close)
	tr, err := oauth.New(oauth.Config{Server: srv.URL, Interactive: true, CallbackURL: freeCallback(t),
		OpenBrowser: func(context.Context, string) error { t.Error("browser opened for a Basic challenge"); return nil }}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := (&http.Client{Transport: tr}).Post(srv.URL, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

// $BROWSER as other tools read it: colon-separated commands tried in turn,
// %s replaced by the URL (else the URL appended).
func TestOpenBrowserHonoursBROWSER(t *testing.T) {
	out := filepath.Join(t.TempDir(), "args")
	t.Setenv(browserOut, out)
	for _, tc := range []struct{ browser, want string }{
		{"/nonexistent/browser:" + os.Args[0] + " --new-window %s", "--new-window http://127.0.0.1:1/authorize?x=1"},
		{os.Args[0], "http://127.0.0.1:1/authorize?x=1"},
	} {
		os.Remove(out)
		t.Setenv("BROWSER", tc.browser)
		if err := oauth.OpenBrowser(context.Background(), "http://127.0.0.1:1/authorize?x=1"); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		var got []byte
		for time.Now().Before(deadline) {
			if got, _ = os.ReadFile(out); len(got) > 0 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if string(got) != tc.want {
			t.Errorf("BROWSER=%q: args %q, want %q", tc.browser, got, tc.want)
		}
	}
	t.Setenv("BROWSER", "/nonexistent/a:/nonexistent/b")
	if err := oauth.OpenBrowser(context.Background(), "http://x"); err == nil || !strings.Contains(err.Error(), "$BROWSER") {
		t.Fatalf("err %v", err)
	}
}

func TestNoPKCERefused(t *testing.T) {
	w := newWorld(t, oauthas.Config{Dynamic: true, NoPKCE: true}, oauthas.Resource{})
	_, err := w.post(w.transport(w.config()))
	if err == nil || !strings.Contains(err.Error(), "only with PKCE") {
		t.Fatalf("err %v", err)
	}
	if w.as.Count("authorize") != 0 {
		t.Fatal("authorized without PKCE")
	}
}

func TestRegistrationRefusedSaysWhatToDo(t *testing.T) {
	w := newWorld(t, oauthas.Config{Dynamic: true, RefuseRegistration: true}, oauthas.Resource{})
	_, err := w.post(w.transport(w.config()))
	if err == nil || !strings.Contains(err.Error(), "--client-id") || !strings.Contains(err.Error(), "registration is closed") {
		t.Fatalf("err %v", err)
	}
	if k := w.kinds(); !has(k, "registration", "failed") {
		t.Fatalf("steps %v", k)
	}
}

func TestNoMetadataSaysWhereItLooked(t *testing.T) {
	// No resource metadata, no authorization server metadata, and no
	// registration at the default endpoint.
	w := newWorld(t, oauthas.Config{Metadata: "none"}, oauthas.Resource{PRM: "none"})
	_, err := w.post(w.transport(w.config()))
	t.Log(err)
	if err == nil || !strings.Contains(err.Error(), "no authorization server metadata found") || !strings.Contains(err.Error(), "metadata tried: ") ||
		!strings.Contains(err.Error(), w.srv.URL+"/.well-known/oauth-protected-resource/mcp (404)") ||
		!strings.Contains(err.Error(), w.srv.URL+"/.well-known/openid-configuration (404)") {
		t.Fatalf("err %v", err)
	}
}

// A client ID metadata document: the client_id is the document's HTTPS URL,
// which the authorization server fetches; no registration.
func TestClientIDMetadataDocument(t *testing.T) {
	cb := freeCallback(t)
	var docURL string
	doc := httptest.NewTLSServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(rw, `{"client_id":%q,"client_name":"inflight","redirect_uris":[%q],"token_endpoint_auth_method":"none"}`, docURL, cb)
	}))
	t.Cleanup(doc.Close)
	docURL = doc.URL + "/inflight/client.json"
	w := newWorld(t, oauthas.Config{Dynamic: true, CIMD: true, CIMDClient: doc.Client()}, oauthas.Resource{})
	cfg := w.config()
	cfg.CallbackURL, cfg.ClientMetadataURL = cb, docURL
	cfg.Store = &oauth.Store{Dir: t.TempDir()}
	w.mustOK(w.transport(cfg))
	if w.as.Count("cimd") != 1 || w.as.Count("register") != 0 || w.as.Count("authorization_code") != 1 {
		t.Fatalf("cimd %d register %d code %d", w.as.Count("cimd"), w.as.Count("register"), w.as.Count("authorization_code"))
	}
	if e, _ := cfg.Store.Load(w.url); e == nil || e.ClientID != docURL || e.Registered {
		t.Fatalf("kept %+v", e)
	}
}

// Headless (no browser step possible), a kept token the server refuses is
// still refreshed; only when that fails is the user told to log in.
func TestNotInteractiveRefreshesKeptToken(t *testing.T) {
	w := newWorld(t, oauthas.Config{Dynamic: true}, oauthas.Resource{})
	store := &oauth.Store{Dir: t.TempDir()}
	cfg := w.config()
	cfg.Store = store
	w.mustOK(w.transport(cfg))
	w.as.Revoke()
	headless := w.config()
	headless.Store, headless.Interactive = store, false
	w.mustOK(w.transport(headless))
	if w.as.Count("refresh_token") != 1 || w.as.Count("authorize") != 1 {
		t.Fatalf("refresh %d authorize %d", w.as.Count("refresh_token"), w.as.Count("authorize"))
	}
	w.as.Revoke()
	w.as.RevokeRefresh()
	_, err := w.post(w.transport(headless))
	if !errors.Is(err, oauth.ErrLoginNeeded) {
		t.Fatalf("err %v", err)
	}
}

// The token endpoint's auth method is the one the server supports.
func TestTokenEndpointAuthMethodChosen(t *testing.T) {
	for _, method := range []string{"client_secret_post", "client_secret_basic"} {
		t.Run(method, func(t *testing.T) {
			cb := freeCallback(t)
			w := newWorld(t, oauthas.Config{AuthMethods: []string{method},
				Clients: map[string]oauthas.Client{"pre": {Secret: "s3cret-value", RedirectURIs: []string{cb}}}}, oauthas.Resource{})
			cfg := w.config()
			cfg.CallbackURL, cfg.ClientID, cfg.ClientSecret = cb, "pre", "s3cret-value"
			w.mustOK(w.transport(cfg))
			// One exchange: the method was chosen, not found by trying
			// (golang.org/x/oauth2's auto-detection tries basic, then post).
			if n := w.as.Count("authorization_code"); n != 1 {
				t.Fatalf("%d token requests", n)
			}
		})
	}
}
