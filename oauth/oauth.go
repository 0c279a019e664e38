// Package oauth is the OAuth authorization of an HTTP connection to an MCP
// server (the authorization pages of the 2025-11-25 and 2026-07-28
// specifications), on the go-sdk's auth and oauthex packages: their
// handlers do the discovery (protected resource metadata, authorization
// server metadata and their fallbacks), the registration (client ID
// metadata document, pre-registered client, dynamic registration), PKCE,
// the RFC 9207 issuer check, the step-up union of scopes and the token
// exchange. This package adds what a command-line client needs around
// them: the http.RoundTripper that puts the token on every request and
// runs the flow on a 401 (or a 403 insufficient_scope), the browser step
// with its loopback callback, the tokens kept between runs, and a report
// of every step as an event.AuthStep.
package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"inflight/event"
	"inflight/redact"
)

// DefaultCallbackPort is the loopback port of the browser step's callback
// unless --callback-url says otherwise. Fixed, so that a client registered
// once (or pre-registered with this redirect URI) keeps working.
const DefaultCallbackPort = 33418

// DefaultCallbackURL is where the authorization server sends the browser
// back with the code.
var DefaultCallbackURL = fmt.Sprintf("http://127.0.0.1:%d/callback", DefaultCallbackPort)

// DefaultBrowserTimeout bounds the wait for the browser step's callback.
const DefaultBrowserTimeout = 5 * time.Minute

// Config says how to authorize.
type Config struct {
	// Server is the MCP endpoint: the resource, and the key tokens are
	// kept under.
	Server string
	// ClientID and ClientSecret are a pre-registered client. Without a
	// ClientID inflight registers itself (a client ID metadata document
	// when ClientMetadataURL is set and the server supports them, else
	// dynamic client registration).
	ClientID     string
	ClientSecret string
	// ClientMetadataURL is the HTTPS URL of a client ID metadata document
	// for inflight, if there is one.
	ClientMetadataURL string
	// ClientCredentials uses the client credentials grant (machine to
	// machine) with ClientID and ClientSecret — or ClientKey — : no
	// browser, no user.
	ClientCredentials bool
	// ClientKey, with ClientCredentials, authenticates the client with a
	// JWT it signs (private_key_jwt, RFC 7523) instead of ClientSecret.
	ClientKey *ClientKey
	// Scopes, when set, replace the scopes discovered from the challenge or
	// the resource metadata.
	Scopes []string
	// CallbackURL is the loopback redirect URI; DefaultCallbackURL if "".
	CallbackURL string
	// Interactive: a browser step may happen. When false only a kept token
	// (refreshed if need be) or client credentials are used, and a server
	// that asks for a login is refused with what to run.
	Interactive bool
	// NoBrowser only prints the authorization URL.
	NoBrowser bool
	// BrowserTimeout bounds the wait for the callback. Default 5 minutes.
	BrowserTimeout time.Duration
	// Prompt is where the authorization URL is printed (nil: nowhere; the
	// URL is in the AuthBrowser step all the same).
	Prompt io.Writer
	// OpenBrowser opens the URL; nil: $BROWSER, else the platform's opener.
	OpenBrowser func(ctx context.Context, url string) error
	// Store keeps tokens between runs; nil keeps them in memory only.
	Store *Store
	// HTTPClient carries the requests to the authorization server
	// (discovery, registration, token); nil: a default client.
	HTTPClient *http.Client
	// MaxRounds bounds the authorizations one request may cause (a 401,
	// then 403 insufficient_scope step-ups). Default 3.
	MaxRounds int
}

// Error is an authorization that ended without a token. Step is the step
// it ended at; the text says what happened and what to do.
type Error struct {
	Step event.AuthStepKind
	Err  error
}

func (e *Error) Error() string { return "authorization failed: " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// ErrLoginNeeded: the server asks for an authorization that needs a browser
// step, and none may happen (Config.Interactive is false).
var ErrLoginNeeded = errors.New("the server asks for an OAuth login")

// Transport is an http.RoundTripper that authorizes the requests it
// carries. One per connection; safe for concurrent use.
type Transport struct {
	cfg      Config
	base     http.RoundTripper
	observe  func(context.Context, event.AuthStep)
	hc       *http.Client // the handlers' client, through the observer
	handler  auth.OAuthHandler
	codeFlow bool

	// gate lets one authorization run at a time; gen counts the ones that
	// succeeded, so that a request refused with an older token is only
	// retried with the new one.
	gate chan struct{}
	gen  atomic.Uint64

	mu          sync.Mutex
	issuer      string
	stored      *Entry // the entry the current token came from or went to
	announced   bool
	preClientID string
	// prmURLs are the resource_metadata URLs challenges named.
	prmURLs map[string]bool
	// tried are the metadata documents fetched during the authorization
	// under way, for an error that says where inflight looked.
	tried    []string
	asmFound bool
	// prmFound: usable protected resource metadata came during the
	// authorization under way (so no 2025-03-26 fallback applies).
	prmFound bool
	// override is a token source refreshed after a 401 (the handler's own
	// cannot be replaced); nil after the handler authorizes again.
	override oauth2.TokenSource
}

// tokenSource is the source of the token to send.
func (t *Transport) tokenSource(ctx context.Context) oauth2.TokenSource {
	t.mu.Lock()
	o := t.override
	t.mu.Unlock()
	if o != nil {
		return o
	}
	ts, err := t.handler.TokenSource(ctx)
	if err != nil {
		return nil
	}
	return ts
}

// refresh uses the refresh token of the current token after the server
// refused it (revoked, or expired before the time it was given): the
// refresh comes before asking the user again. It reports whether a new
// token came.
func (t *Transport) refresh() bool {
	e := t.Kept()
	if e == nil || e.Token == nil || e.Token.RefreshToken == "" || e.TokenURL == "" {
		return false
	}
	ts := t.keeping(e.Config().TokenSource(t.refreshContext(), &oauth2.Token{RefreshToken: e.Token.RefreshToken}), e)
	tok, err := ts.Token()
	if err != nil || tok == nil {
		return false
	}
	t.mu.Lock()
	t.override = ts
	t.mu.Unlock()
	return true
}

func (t *Transport) noteTried(s event.AuthStep) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s.Kind == event.AuthServerMetadata && !s.FellBack && s.Status == http.StatusOK {
		t.asmFound = true
	}
	what := fmt.Sprint(s.Status)
	if s.Status == 0 {
		what = "no answer"
	} else if s.Status == http.StatusOK && s.FellBack {
		what = "200, not usable"
	}
	t.tried = append(t.tried, s.URL+" ("+what+")")
}

func (t *Transport) notePRM() {
	t.mu.Lock()
	t.prmFound = true
	t.mu.Unlock()
}

func (t *Transport) sawPRM() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.prmFound
}

func (t *Transport) isResourceMetadataURL(u *url.URL) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.prmURLs[stripQuery(u)]
}

func (t *Transport) noteChallenge(resp *http.Response) {
	cs, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	for _, c := range cs {
		if raw := c.Params["resource_metadata"]; raw != "" {
			if u, err := url.Parse(raw); err == nil {
				t.mu.Lock()
				t.prmURLs[stripQuery(u)] = true
				t.mu.Unlock()
			}
		}
	}
}

// New makes the Transport for cfg over base (nil: http.DefaultTransport).
// observe, if set, receives every step with the context of the request
// it is part of (the request that was refused, whose authorization it is);
// it must not block.
func New(cfg Config, base http.RoundTripper, observe func(context.Context, event.AuthStep)) (*Transport, error) {
	if base == nil {
		base = http.DefaultTransport
	}
	cfg.defaults()
	if err := CheckCallback(cfg.CallbackURL); err != nil {
		return nil, err
	}
	t := &Transport{cfg: cfg, base: base, observe: observe, gate: make(chan struct{}, 1), prmURLs: map[string]bool{}}
	t.hc = t.observedClient()

	if cfg.ClientCredentials && cfg.ClientKey != nil {
		if cfg.ClientID == "" || cfg.ClientSecret != "" {
			return nil, errors.New("--client-key-file goes with --client-id and no --client-secret")
		}
		t.handler = &jwtClientHandler{clientID: cfg.ClientID, key: cfg.ClientKey, hc: t.hc}
		return t, nil
	}
	if cfg.ClientCredentials {
		if cfg.ClientID == "" || cfg.ClientSecret == "" {
			return nil, errors.New("--client-credentials needs --client-id and --client-secret (or --client-key-file)")
		}
		h, err := extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{
			Credentials: &oauthex.ClientCredentials{ClientID: cfg.ClientID, ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: cfg.ClientSecret}},
			HTTPClient:  t.hc,
		})
		if err != nil {
			return nil, err
		}
		t.handler = h
		return t, nil
	}
	t.codeFlow = true
	hcfg := t.codeHandlerConfig()
	if err := t.useKept(hcfg); err != nil {
		return nil, err
	}
	h, err := auth.NewAuthorizationCodeHandler(hcfg)
	if err != nil {
		return nil, err
	}
	t.handler = h
	return t, nil
}

// defaults fills in what cfg leaves unset.
func (cfg *Config) defaults() {
	if cfg.CallbackURL == "" {
		cfg.CallbackURL = DefaultCallbackURL
	}
	if cfg.BrowserTimeout <= 0 {
		cfg.BrowserTimeout = DefaultBrowserTimeout
	}
	if cfg.MaxRounds <= 0 {
		cfg.MaxRounds = 3
	}
}

// observedClient is the HTTP client of the authorization's own requests
// (metadata, registration, tokens): cfg's, or a new one with a 30s
// timeout, its every round trip observed as a step.
func (t *Transport) observedClient() *http.Client {
	under := http.DefaultTransport
	var hc http.Client
	if t.cfg.HTTPClient != nil {
		hc = *t.cfg.HTTPClient
		if hc.Transport != nil {
			under = hc.Transport
		}
	}
	hc.Transport = &observer{base: under, t: t}
	if hc.Timeout == 0 {
		hc.Timeout = 30 * time.Second
	}
	return &hc
}

// codeHandlerConfig configures the authorization code flow: the browser
// step on the loopback callback, PKCE, dynamic registration or a client
// ID metadata document, the scopes asked for.
func (t *Transport) codeHandlerConfig() *auth.AuthorizationCodeHandlerConfig {
	cfg := t.cfg
	hcfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              cfg.CallbackURL,
		AuthorizationCodeFetcher: t.fetchCode,
		RequestRefreshToken:      true,
		// RFC 9207 §2.4: a matching iss the metadata did not advertise
		// is accepted; a mismatching one is always refused.
		AcceptUnadvertisedIss: true,
		Client:                t.hc,
		NewTokenSource:        t.newTokenSource,
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs:            []string{cfg.CallbackURL},
			TokenEndpointAuthMethod: "none",
			GrantTypes:              []string{"authorization_code", "refresh_token"},
			ResponseTypes:           []string{"code"},
			ClientName:              "inflight",
		}},
	}
	if len(cfg.Scopes) > 0 {
		scopes := append([]string(nil), cfg.Scopes...)
		hcfg.ScopeFilter = func([]string) []string { return scopes }
	}
	if cfg.ClientMetadataURL != "" {
		hcfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: cfg.ClientMetadataURL}
	}
	return hcfg
}

// useKept sets up hcfg with what the store keeps for the server: the
// client an earlier login registered (unless cfg names a client of its
// own, which comes first) and the tokens issued to that client.
func (t *Transport) useKept(hcfg *auth.AuthorizationCodeHandlerConfig) error {
	cfg := t.cfg
	var entry *Entry
	if cfg.Store != nil {
		var err error
		if entry, err = cfg.Store.Load(cfg.Server); err != nil {
			return fmt.Errorf("reading the kept tokens: %w", err)
		}
	}
	switch {
	case cfg.ClientID != "":
		pre := &oauthex.ClientCredentials{ClientID: cfg.ClientID}
		if cfg.ClientSecret != "" {
			pre.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: cfg.ClientSecret}
		}
		hcfg.PreregisteredClient = pre
		t.preClientID = cfg.ClientID
		if entry != nil && entry.ClientID != cfg.ClientID {
			entry = nil // issued to another client
		}
	case entry != nil && entry.Registered:
		// Registered by an earlier login: reuse it rather than register
		// again, for the issuer it was registered with.
		pre := &oauthex.ClientCredentials{ClientID: entry.ClientID, Issuer: entry.Issuer}
		if entry.ClientSecret != "" {
			pre.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: entry.ClientSecret}
		}
		hcfg.PreregisteredClient = pre
		t.preClientID = entry.ClientID
	}
	if entry != nil && cfg.Interactive && !covers(entry.Scopes, cfg.Scopes) {
		// --scope asks for more than the kept token has (the login a
		// refused step-up said to run): authorize afresh, with the client
		// kept, rather than find the narrow token still good.
		entry = nil
	}
	if entry != nil {
		t.stored, t.issuer = entry, entry.Issuer
		hcfg.InitialTokenSource = t.keeping(entry.Config().TokenSource(t.refreshContext(), entry.Token), entry)
	}
	return nil
}

// covers reports whether the scopes granted include every scope wanted.
func covers(granted, wanted []string) bool {
	for _, s := range wanted {
		if !slices.Contains(granted, s) {
			return false
		}
	}
	return true
}

func (t *Transport) emit(ctx context.Context, s event.AuthStep) {
	if t.observe != nil {
		t.observe(ctx, s)
	}
}

func (t *Transport) setIssuer(iss string) {
	t.mu.Lock()
	t.issuer = iss
	t.mu.Unlock()
}

func (t *Transport) refreshContext() context.Context {
	return context.WithValue(context.Background(), oauth2.HTTPClient, t.hc)
}

// Token is the current token, refreshed if need be (nil when there is
// none yet). For `inflight auth login` and status; never print it.
func (t *Transport) Token(ctx context.Context) (*oauth2.Token, error) {
	ts := t.tokenSource(ctx)
	if ts == nil {
		return nil, nil
	}
	return ts.Token()
}

// Kept is the stored entry of the current token, if it is kept.
func (t *Transport) Kept() *Entry {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stored
}

// CloseIdleConnections closes the idle connections of the transport
// underneath, as http.Client.CloseIdleConnections asks.
func (t *Transport) CloseIdleConnections() {
	if ci, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}

// RoundTrip sends req with the current token; on a 401 (or a 403
// insufficient_scope) it runs the authorization and sends req again, at
// most MaxRounds times.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	t.announce(ctx)
	refreshed := false
	for round := 0; ; round++ {
		gen := t.gen.Load()
		r := req.Clone(ctx)
		if round > 0 {
			if req.Body != nil && req.GetBody == nil {
				return nil, errors.New("the request cannot be sent again after authorization (its body cannot be replayed)")
			}
			if req.GetBody != nil {
				b, err := req.GetBody()
				if err != nil {
					return nil, err
				}
				r.Body = b
			}
		}
		if tok := t.currentToken(ctx); tok != "" {
			r.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := t.base.RoundTrip(r)
		if err != nil {
			return nil, err
		}
		if !needsAuthorization(resp) {
			return resp, nil
		}
		challenge := strings.Join(resp.Header.Values("WWW-Authenticate"), ", ")
		t.noteChallenge(resp)
		t.emit(ctx, event.AuthStep{Kind: event.AuthChallenge, Method: req.Method, URL: stripQuery(req.URL), Status: resp.StatusCode,
			Start: time.Now(), Scopes: challengeScopes(resp), Text: challenge})
		if round >= t.cfg.MaxRounds {
			t.emit(ctx, event.AuthStep{Kind: event.AuthFailed, Start: time.Now(), Status: resp.StatusCode,
				Text: fmt.Sprintf("still refused after %d tries with new tokens: inflight stops asking; the account may lack the scope (see the challenge)", round)})
			return resp, nil
		}
		if err := t.authorize(ctx, gen, r, resp, &refreshed); err != nil {
			return nil, err
		}
		t.emit(ctx, event.AuthStep{Kind: event.AuthRetry, Method: req.Method, URL: stripQuery(req.URL), Start: time.Now(),
			Text: "sending the refused request again with the new token"})
	}
}

func (t *Transport) loginHint() string {
	return fmt.Sprintf("run `inflight auth login %s` (it opens a browser), or set $BROWSER so that inflight opens one itself, or give a machine client with --client-credentials --client-id ID --client-secret SECRET",
		ServerKey(t.cfg.Server))
}

// stepUpHint is what to run when a request needs more scope than the token
// has and no browser step may happen: a login that asks for scopes, the
// kept token's and the challenge's together (the step-up's union).
func (t *Transport) stepUpHint(resp *http.Response) string {
	var scopes []string
	if e := t.Kept(); e != nil {
		scopes = append(scopes, e.Scopes...)
	}
	for _, s := range challengeScopes(resp) {
		if !slices.Contains(scopes, s) {
			scopes = append(scopes, s)
		}
	}
	cmd := "inflight auth login " + shellQuote(ServerKey(t.cfg.Server))
	if len(scopes) > 0 {
		cmd += " --scope " + shellQuote(strings.Join(scopes, " "))
	}
	return fmt.Sprintf("run `%s` (it opens a browser), or set $BROWSER so that inflight opens one itself", cmd)
}

// shellQuote quotes s for a POSIX shell when it needs it: a command
// inflight suggests may carry a server's words (its scopes).
func shellQuote(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.:/@%+=,", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// insufficientScope reports a 403 whose bearer challenge says
// insufficient_scope: the token is good, but too narrow (a step-up).
func insufficientScope(resp *http.Response) bool {
	return resp.StatusCode == http.StatusForbidden && needsAuthorization(resp)
}

// needsAuthorization: a 401, or a 403 whose challenge says
// insufficient_scope (the step-up of the authorization pages). Any other
// 403 is the server's answer.
func needsAuthorization(resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		// A bearer challenge, or none at all (a 2025-03-26 server, whose
		// metadata is found by the fallbacks); a challenge of another
		// scheme only (Basic) is no OAuth server's.
		vs := resp.Header.Values("WWW-Authenticate")
		if len(vs) == 0 {
			return true
		}
		cs, err := oauthex.ParseWWWAuthenticate(vs)
		if err != nil {
			return false
		}
		for _, c := range cs {
			if c.Scheme == "bearer" {
				return true
			}
		}
		return false
	case http.StatusForbidden:
		cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
		if err != nil {
			return false
		}
		for _, c := range cs {
			if c.Scheme == "bearer" && c.Params["error"] == "insufficient_scope" {
				return true
			}
		}
	}
	return false
}

func challengeScopes(resp *http.Response) []string {
	cs, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	for _, c := range cs {
		if c.Scheme == "bearer" && c.Params["scope"] != "" {
			return strings.Fields(c.Params["scope"])
		}
	}
	return nil
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// authorize runs the handler's flow, one at a time: a request that waited
// while another one authorized is sent again with the token it got.
func (t *Transport) authorize(ctx context.Context, gen uint64, req *http.Request, resp *http.Response, refreshed *bool) error {
	select {
	case t.gate <- struct{}{}:
	case <-ctx.Done():
		drain(resp)
		return ctx.Err()
	}
	defer func() { <-t.gate }()
	if t.gen.Load() != gen {
		drain(resp)
		return nil
	}
	if resp.StatusCode == http.StatusUnauthorized && !*refreshed {
		// Once per request: a refreshed token refused too means the
		// grant itself is gone.
		*refreshed = true
		if t.refresh() {
			t.gen.Add(1)
			drain(resp)
			return nil
		}
	}
	if t.codeFlow && !t.cfg.Interactive {
		// No one to open a browser for: say what to run, and register
		// nothing that could not be used.
		hint, err := t.loginHint(), fmt.Errorf("%w (HTTP %d)", ErrLoginNeeded, resp.StatusCode)
		if insufficientScope(resp) {
			hint = t.stepUpHint(resp)
			err = fmt.Errorf("%w: the token has too little scope for this request (HTTP 403 insufficient_scope, scope %q), and a step-up needs the browser step",
				ErrLoginNeeded, strings.Join(challengeScopes(resp), " "))
		}
		drain(resp)
		t.emit(ctx, event.AuthStep{Kind: event.AuthFailed, Start: time.Now(), Status: resp.StatusCode, Text: hint})
		return &Error{Step: event.AuthChallenge, Err: fmt.Errorf("%w: %s", err, hint)}
	}
	start := time.Now()
	t.mu.Lock()
	t.tried, t.asmFound, t.prmFound = nil, false, false
	t.mu.Unlock()
	if err := t.handler.Authorize(ctx, req, resp); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		t.mu.Lock()
		tried, found := t.tried, t.asmFound
		t.mu.Unlock()
		if !found && len(tried) > 0 {
			err = fmt.Errorf("no authorization server metadata found, and the 2025-03-26 default endpoints did not work either: %w", err)
		} else {
			err = explain(err)
		}
		if len(tried) > 0 {
			err = fmt.Errorf("%w [metadata tried: %s]", err, strings.Join(tried, ", "))
		}
		err = oneLine{err}
		ae := &Error{Step: event.AuthFailed, Err: err}
		t.emit(ctx, event.AuthStep{Kind: event.AuthFailed, Start: start, Duration: time.Since(start), Err: ae.Err.Error()})
		return ae
	}
	t.mu.Lock()
	t.override = nil // the handler's token is the newest now
	t.mu.Unlock()
	t.gen.Add(1)
	if tok, err := t.Token(ctx); err == nil && tok != nil {
		t.emit(ctx, event.AuthStep{Kind: event.AuthToken, Start: start, Duration: time.Since(start), Scopes: tokenScopes(tok),
			Expires: tok.Expiry, Issuer: t.issuerNow(), Text: "authorized"})
	}
	return nil
}

func (t *Transport) issuerNow() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.issuer
}

func tokenScopes(tok *oauth2.Token) []string {
	if s, ok := tok.Extra("scope").(string); ok {
		return strings.Fields(s)
	}
	return nil
}

// explain adds what to do to the handlers' errors a user can act on.
func explain(err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "no configured client registration methods"):
		return fmt.Errorf("%w: the authorization server offers no registration inflight can use; give a pre-registered client with --client-id (and --client-secret)", err)
	case strings.Contains(msg, "failed to register client"):
		return fmt.Errorf("%w: the authorization server refused to register inflight; give a pre-registered client with --client-id", err)
	case strings.Contains(msg, "does not match expected issuer"), strings.Contains(msg, "iss parameter"):
		return fmt.Errorf("%w: the authorization response came from another issuer than the one discovered (a mix-up): refused", err)
	case strings.Contains(msg, "does not implement PKCE"):
		return fmt.Errorf("%w: inflight authorizes only with PKCE", err)
	case strings.Contains(msg, "state mismatch"):
		return fmt.Errorf("%w: the callback did not carry the state inflight sent (a stale tab or a forged redirect): refused; log in again", err)
	}
	return err
}

// currentToken is the access token to send, refreshed by the token source
// when it has expired. A token source that cannot give one (the refresh
// refused) sends none: the server's 401 starts a new authorization.
func (t *Transport) currentToken(ctx context.Context) string {
	ts := t.tokenSource(ctx)
	if ts == nil {
		return ""
	}
	tok, err := ts.Token()
	if err != nil || tok == nil {
		return ""
	}
	keepSecret(tok)
	return tok.AccessToken
}

// keepSecret has every Redactor mask a token from now on: one a server
// echoes back is never shown, logged or traced.
func keepSecret(tok *oauth2.Token) {
	if tok == nil {
		return
	}
	redact.AddRuntime(tok.AccessToken)
	redact.AddRuntime(tok.RefreshToken)
}

// announce reports, once, that a kept token is in use.
func (t *Transport) announce(ctx context.Context) {
	t.mu.Lock()
	e := t.stored
	done := t.announced
	t.announced = true
	t.mu.Unlock()
	if done || e == nil {
		return
	}
	t.emit(ctx, event.AuthStep{Kind: event.AuthStored, Start: time.Now(), Issuer: e.Issuer, ClientID: e.ClientID, Scopes: e.Scopes,
		Expires: e.Token.Expiry, Text: "using the token kept from " + e.Saved.Local().Format(time.DateTime)})
}

// newTokenSource is the handler's hook after a token exchange: keep the
// token (and the client it was issued to) for the next run.
func (t *Transport) newTokenSource(ctx context.Context, cfg *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
	t.mu.Lock()
	e := &Entry{Server: t.cfg.Server, Issuer: t.issuer, ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret,
		Registered: cfg.ClientID != t.cfg.ClientID && cfg.ClientID != t.cfg.ClientMetadataURL,
		AuthURL:    cfg.Endpoint.AuthURL, TokenURL: cfg.Endpoint.TokenURL, AuthStyle: cfg.Endpoint.AuthStyle,
		Scopes: cfg.Scopes, Token: tok}
	if e.Issuer == "" {
		e.Issuer = origin(cfg.Endpoint.TokenURL)
	}
	t.stored, t.announced = e, true
	t.mu.Unlock()
	t.save(e)
	return t.keeping(cfg.TokenSource(ctx, tok), e), nil
}

func (t *Transport) save(e *Entry) {
	keepSecret(e.Token)
	redact.AddRuntime(e.ClientSecret) // a registered client's secret too (found in review)
	if t.cfg.Store == nil {
		return
	}
	step := event.AuthStep{Kind: event.AuthStored, Start: time.Now(), Issuer: e.Issuer, ClientID: e.ClientID, Expires: e.Token.Expiry,
		Text: "token kept in " + t.cfg.Store.Dir}
	if err := t.cfg.Store.Save(e); err != nil {
		step.Text, step.Err = "the token could not be kept", err.Error()
	}
	// Not tied to a request: a refresh happens inside the token source.
	t.emit(context.Background(), step)
}

// keeping wraps ts so that a refreshed token is kept too.
func (t *Transport) keeping(ts oauth2.TokenSource, e *Entry) oauth2.TokenSource {
	return &keepingSource{ts: ts, t: t, e: e, last: e.Token.AccessToken}
}

type keepingSource struct {
	ts   oauth2.TokenSource
	t    *Transport
	mu   sync.Mutex
	e    *Entry
	last string
}

func (k *keepingSource) Token() (*oauth2.Token, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	tok, err := k.ts.Token()
	if err != nil {
		return nil, err
	}
	keepSecret(tok)
	if tok.AccessToken != k.last {
		k.last = tok.AccessToken
		cp := *k.e
		cp.Token = tok
		k.e = &cp
		k.t.mu.Lock()
		k.t.stored = &cp
		k.t.mu.Unlock()
		k.t.save(&cp)
	}
	return tok, nil
}

func origin(u string) string {
	i := strings.Index(u, "://")
	if i < 0 {
		return u
	}
	if j := strings.IndexByte(u[i+3:], '/'); j >= 0 {
		return u[:i+3+j]
	}
	return u
}

// oneLine is an error whose text is one line (a server's error body may
// end in a newline, or hold several).
type oneLine struct{ err error }

func (e oneLine) Error() string { return strings.Join(strings.Fields(e.err.Error()), " ") }
func (e oneLine) Unwrap() error { return e.err }
