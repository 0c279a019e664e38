// Package oauthas is a small OAuth 2.1 authorization server and a
// protected-resource wrapper, both speaking real HTTP, for inflight's tests
// and the protected demo (`inflight demo-server --auth`). It approves
// every authorization at once (there is no user to ask), but checks what a
// real server checks: the client, the exact redirect URI, PKCE (S256), the
// state round trip, the resource, the grant, the client's secret, and the
// scopes a request needs (a 403 insufficient_scope asks for more).
package oauthas

import (
	"crypto"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Client is a registered client.
type Client struct {
	Secret       string
	RedirectURIs []string
	// Key, when set, authenticates the client with a JWT it signs
	// (private_key_jwt, RFC 7523 §2.2) instead of a secret.
	Key crypto.PublicKey
}

// Config shapes the server.
type Config struct {
	// Metadata says where the authorization server metadata is served:
	// "oauth" (/.well-known/oauth-authorization-server), "oidc"
	// (/.well-known/openid-configuration), "both", or "none" (the
	// 2025-03-26 fallback: /authorize, /token and /register at the root).
	Metadata string
	// Dynamic enables dynamic client registration at /register.
	Dynamic bool
	// Clients are pre-registered.
	Clients map[string]Client
	// ClientCredentials enables that grant for clients with a secret.
	ClientCredentials bool
	// Scopes is scopes_supported.
	Scopes []string
	// TokenLifetime is how long an access token lives. Default 1 hour.
	TokenLifetime time.Duration
	// NoIss leaves out the RFC 9207 iss parameter (and its advertisement).
	NoIss bool
	// WrongIss sends another issuer's iss in the redirect (a mix-up).
	WrongIss bool
	// WrongState sends the browser back with another state.
	WrongState bool
	// Withhold are scopes the server never grants (a step-up that cannot
	// succeed).
	Withhold []string
	// NoPKCE leaves code_challenge_methods_supported out of the metadata.
	NoPKCE bool
	// RefuseRegistration answers every registration with an error.
	RefuseRegistration bool
	// CIMD accepts client ID metadata documents: a client_id that is an
	// HTTPS URL is fetched (with CIMDClient, default http.DefaultClient)
	// and its redirect_uris used.
	CIMD       bool
	CIMDClient *http.Client
	// AuthMethods, when set, are the token endpoint auth methods the
	// server advertises and accepts (client_secret_basic,
	// client_secret_post, none, private_key_jwt); a client authenticating
	// otherwise is refused.
	AuthMethods []string
	// SigningAlgs are the token_endpoint_auth_signing_alg_values_supported
	// it advertises and accepts for private_key_jwt (default ES256, RS256).
	SigningAlgs []string
}

// Server is the authorization server. Mount Handler at the root of Issuer.
type Server struct {
	cfg    Config
	Issuer string

	mu       sync.Mutex
	clients  map[string]Client
	codes    map[string]grant
	access   map[string]Token
	refresh  map[string]grant
	requests map[string]int
	// jtis are the client assertions already used.
	jtis map[string]bool
}

type grant struct {
	client, redirect, challenge, resource string
	scopes                                []string
}

// Token is what an access token stands for.
type Token struct {
	Client   string
	Scopes   []string
	Resource string
	Expires  time.Time
}

// New makes a server whose issuer is issuer (no trailing slash).
func New(issuer string, cfg Config) *Server {
	if cfg.TokenLifetime == 0 {
		cfg.TokenLifetime = time.Hour
	}
	if cfg.Metadata == "" {
		cfg.Metadata = "oauth"
	}
	s := &Server{cfg: cfg, Issuer: strings.TrimSuffix(issuer, "/"), clients: map[string]Client{}, codes: map[string]grant{},
		access: map[string]Token{}, refresh: map[string]grant{}, requests: map[string]int{}, jtis: map[string]bool{}}
	for id, c := range cfg.Clients {
		s.clients[id] = c
	}
	return s
}

// Count is how many requests the server had of a kind: "register",
// "authorize", "authorization_code", "refresh_token", "client_credentials",
// "metadata".
func (s *Server) Count(kind string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[kind]
}

func (s *Server) count(kind string) {
	s.mu.Lock()
	s.requests[kind]++
	s.mu.Unlock()
}

func random() string { return rand.Text() }

// Metadata is the server's RFC 8414 document.
func (s *Server) Metadata() map[string]any {
	m := map[string]any{
		"issuer":                                s.Issuer,
		"authorization_endpoint":                s.Issuer + "/authorize",
		"token_endpoint":                        s.Issuer + "/token",
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token", "client_credentials"},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"none", "client_secret_post", "client_secret_basic"},
	}
	if len(s.cfg.AuthMethods) > 0 {
		m["token_endpoint_auth_methods_supported"] = s.cfg.AuthMethods
	}
	if slices.Contains(s.cfg.AuthMethods, "private_key_jwt") {
		m["token_endpoint_auth_signing_alg_values_supported"] = s.signingAlgs()
	}
	if len(s.cfg.Scopes) > 0 {
		m["scopes_supported"] = s.cfg.Scopes
	}
	if s.cfg.NoPKCE {
		delete(m, "code_challenge_methods_supported")
	}
	if s.cfg.Dynamic {
		m["registration_endpoint"] = s.Issuer + "/register"
	}
	if !s.cfg.NoIss {
		m["authorization_response_iss_parameter_supported"] = true
	}
	if s.cfg.CIMD {
		m["client_id_metadata_document_supported"] = true
	}
	return m
}

// Handler serves the metadata, /authorize, /token and /register.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	meta := func(w http.ResponseWriter, r *http.Request) {
		s.count("metadata")
		writeJSON(w, http.StatusOK, s.Metadata())
	}
	switch s.cfg.Metadata {
	case "oauth":
		mux.HandleFunc("GET /.well-known/oauth-authorization-server", meta)
	case "oidc":
		mux.HandleFunc("GET /.well-known/openid-configuration", meta)
	case "both":
		mux.HandleFunc("GET /.well-known/oauth-authorization-server", meta)
		mux.HandleFunc("GET /.well-known/openid-configuration", meta)
	}
	mux.HandleFunc("GET /authorize", s.authorize)
	mux.HandleFunc("POST /token", s.token)
	if s.cfg.Dynamic {
		mux.HandleFunc("POST /register", s.register)
	}
	return mux
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func oauthErr(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	s.count("register")
	if s.cfg.RefuseRegistration {
		oauthErr(w, http.StatusForbidden, "access_denied", "registration is closed to new clients")
		return
	}
	var m struct {
		RedirectURIs []string `json:"redirect_uris"`
		AuthMethod   string   `json:"token_endpoint_auth_method"`
	}
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil || len(m.RedirectURIs) == 0 {
		oauthErr(w, http.StatusBadRequest, "invalid_client_metadata", "redirect_uris is required")
		return
	}
	id := "dyn-" + random()[:12]
	c := Client{RedirectURIs: m.RedirectURIs}
	resp := map[string]any{"client_id": id, "redirect_uris": m.RedirectURIs, "client_id_issued_at": time.Now().Unix()}
	if m.AuthMethod != "none" {
		c.Secret = random()
		resp["client_secret"] = c.Secret
		resp["token_endpoint_auth_method"] = "client_secret_basic"
	} else {
		resp["token_endpoint_auth_method"] = "none"
	}
	s.mu.Lock()
	s.clients[id] = c
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, resp)
}

func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	s.count("authorize")
	q := r.URL.Query()
	if s.cfg.CIMD && strings.HasPrefix(q.Get("client_id"), "https://") {
		if err := s.fetchClientMetadata(q.Get("client_id")); err != nil {
			http.Error(w, "client ID metadata document: "+err.Error(), http.StatusBadRequest)
			return
		}
	}
	s.mu.Lock()
	c, ok := s.clients[q.Get("client_id")]
	s.mu.Unlock()
	if !ok {
		http.Error(w, "unknown client_id", http.StatusBadRequest)
		return
	}
	redirect := q.Get("redirect_uri")
	if !slices.Contains(c.RedirectURIs, redirect) {
		// Never redirect to an unregistered URI: say so to the user.
		http.Error(w, "redirect_uri does not match a registered redirect URI", http.StatusBadRequest)
		return
	}
	back, _ := url.Parse(redirect)
	bq := back.Query()
	state := q.Get("state")
	if s.cfg.WrongState {
		state = "not-" + state
	}
	bq.Set("state", state)
	switch {
	case q.Get("response_type") != "code":
		bq.Set("error", "unsupported_response_type")
	case q.Get("code_challenge") == "" || q.Get("code_challenge_method") != "S256":
		bq.Set("error", "invalid_request")
		bq.Set("error_description", "PKCE with S256 is required")
	default:
		code := random()
		s.mu.Lock()
		s.codes[code] = grant{client: q.Get("client_id"), redirect: redirect, challenge: q.Get("code_challenge"),
			resource: q.Get("resource"), scopes: s.grantable(strings.Fields(q.Get("scope")))}
		s.mu.Unlock()
		bq.Set("code", code)
	}
	switch {
	case s.cfg.WrongIss:
		bq.Set("iss", "https://attacker.example")
	case !s.cfg.NoIss:
		bq.Set("iss", s.Issuer)
	}
	back.RawQuery = bq.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

// fetchClientMetadata fetches a client ID metadata document and takes the
// client it describes (a public client) as known.
func (s *Server) fetchClientMetadata(id string) error {
	hc := s.cfg.CIMDClient
	if hc == nil {
		hc = http.DefaultClient
	}
	s.count("cimd")
	resp, err := hc.Get(id)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	var doc struct {
		ClientID     string   `json:"client_id"`
		RedirectURIs []string `json:"redirect_uris"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		return err
	}
	if doc.ClientID != id {
		return fmt.Errorf("the document's client_id %q is not its URL", doc.ClientID)
	}
	s.mu.Lock()
	s.clients[id] = Client{RedirectURIs: doc.RedirectURIs}
	s.mu.Unlock()
	return nil
}

func (s *Server) signingAlgs() []string {
	if len(s.cfg.SigningAlgs) > 0 {
		return s.cfg.SigningAlgs
	}
	return []string{"ES256", "RS256"}
}

// clientAuth checks the client's credentials (basic, post, or a JWT
// assertion).
func (s *Server) clientAuth(r *http.Request) (string, Client, bool) {
	if r.PostForm.Get("client_assertion_type") != "" {
		return s.assertionAuth(r)
	}
	id, secret, basic := r.BasicAuth()
	method := "client_secret_basic"
	if basic {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
		method = "client_secret_post"
		if secret == "" {
			method = "none"
		}
	}
	if len(s.cfg.AuthMethods) > 0 && !slices.Contains(s.cfg.AuthMethods, method) {
		return id, Client{}, false
	}
	s.mu.Lock()
	c, ok := s.clients[id]
	s.mu.Unlock()
	if !ok || subtle.ConstantTimeCompare([]byte(c.Secret), []byte(secret)) != 1 {
		return id, c, false
	}
	return id, c, true
}

// assertionAuth checks a private_key_jwt assertion as RFC 7523 §3 asks:
// signed by the client's key with an advertised algorithm, iss and sub the
// client, aud this server (its issuer or token endpoint), not expired,
// and its jti never seen before.
func (s *Server) assertionAuth(r *http.Request) (string, Client, bool) {
	f := r.PostForm
	if f.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" {
		return "", Client{}, false
	}
	if len(s.cfg.AuthMethods) > 0 && !slices.Contains(s.cfg.AuthMethods, "private_key_jwt") {
		return "", Client{}, false
	}
	var claims jwt.RegisteredClaims
	var client Client
	tok, err := jwt.ParseWithClaims(f.Get("client_assertion"), &claims, func(t *jwt.Token) (any, error) {
		iss, _ := t.Claims.GetIssuer()
		s.mu.Lock()
		c, ok := s.clients[iss]
		s.mu.Unlock()
		if !ok || c.Key == nil {
			return nil, fmt.Errorf("no client %q with a key", iss)
		}
		client = c
		return c.Key, nil
	}, jwt.WithValidMethods(s.signingAlgs()), jwt.WithExpirationRequired(), jwt.WithAudience(s.Issuer, s.Issuer+"/token"))
	if err != nil || !tok.Valid || claims.Subject != claims.Issuer || claims.ID == "" || (f.Get("client_id") != "" && f.Get("client_id") != claims.Issuer) {
		return claims.Issuer, Client{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.jtis[claims.ID] {
		return claims.Issuer, Client{}, false // replayed
	}
	s.jtis[claims.ID] = true
	s.requests["private_key_jwt"]++
	return claims.Issuer, client, true
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthErr(w, http.StatusBadRequest, "invalid_request", "bad form")
		return
	}
	f := r.PostForm
	grantType := f.Get("grant_type")
	s.count(grantType)
	id, client, authed := s.clientAuth(r)
	if !authed {
		oauthErr(w, http.StatusUnauthorized, "invalid_client", "client authentication failed")
		return
	}
	var g grant
	switch grantType {
	case "authorization_code":
		s.mu.Lock()
		g, ok := s.codes[f.Get("code")]
		delete(s.codes, f.Get("code"))
		s.mu.Unlock()
		if !ok || g.client != id || g.redirect != f.Get("redirect_uri") {
			oauthErr(w, http.StatusBadRequest, "invalid_grant", "unknown code, or another client or redirect URI")
			return
		}
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		if base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
			oauthErr(w, http.StatusBadRequest, "invalid_grant", "PKCE verification failed")
			return
		}
		s.issue(w, g, true)
		return
	case "refresh_token":
		s.mu.Lock()
		g, ok := s.refresh[f.Get("refresh_token")]
		delete(s.refresh, f.Get("refresh_token")) // rotated
		s.mu.Unlock()
		if !ok || g.client != id {
			oauthErr(w, http.StatusBadRequest, "invalid_grant", "unknown refresh token")
			return
		}
		s.issue(w, g, true)
		return
	case "client_credentials":
		if !s.cfg.ClientCredentials || (client.Secret == "" && client.Key == nil) {
			oauthErr(w, http.StatusBadRequest, "unauthorized_client", "client credentials grant not allowed")
			return
		}
		g = grant{client: id, resource: f.Get("resource"), scopes: s.grantable(strings.Fields(f.Get("scope")))}
		s.issue(w, g, false)
		return
	}
	oauthErr(w, http.StatusBadRequest, "unsupported_grant_type", grantType)
}

func (s *Server) grantable(scopes []string) []string {
	return slices.DeleteFunc(scopes, func(sc string) bool { return slices.Contains(s.cfg.Withhold, sc) })
}

// Issued is every access and refresh token issued and still known (for
// tests that check none was shown).
func (s *Server) Issued() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for t := range s.access {
		out = append(out, t)
	}
	for t := range s.refresh {
		out = append(out, t)
	}
	return out
}

func (s *Server) issue(w http.ResponseWriter, g grant, withRefresh bool) {
	tok := random()
	s.mu.Lock()
	s.access[tok] = Token{Client: g.client, Scopes: g.scopes, Resource: g.resource, Expires: time.Now().Add(s.cfg.TokenLifetime)}
	resp := map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": int(s.cfg.TokenLifetime.Seconds()),
		"scope": strings.Join(g.scopes, " ")}
	if withRefresh {
		rt := random()
		s.refresh[rt] = g
		resp["refresh_token"] = rt
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, resp)
}

// Lookup is the access token's grant, if it is valid now.
func (s *Server) Lookup(token string) (Token, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.access[token]
	if !ok || time.Now().After(t.Expires) {
		return Token{}, false
	}
	return t, true
}

// Revoke forgets every access token (an expiry, as the resource sees it).
func (s *Server) Revoke() {
	s.mu.Lock()
	s.access = map[string]Token{}
	s.mu.Unlock()
}

// RevokeRefresh forgets every refresh token.
func (s *Server) RevokeRefresh() {
	s.mu.Lock()
	s.refresh = map[string]grant{}
	s.mu.Unlock()
}

// Resource protects an MCP endpoint with tokens of this server.
type Resource struct {
	AS *Server
	// URL is the protected endpoint (the resource, as the metadata names it).
	URL string
	// Scopes are needed for every request; Need, if set, adds those a
	// request needs (the step-up).
	Scopes []string
	Need   func(r *http.Request) []string
	// PRM says where the protected resource metadata is: "path"
	// (/.well-known/oauth-protected-resource/<endpoint path>), "root",
	// "challenge" (only at the URL the challenge names, under /meta/), or
	// "none" (the 2025-03-26 fallback: the server's root is the
	// authorization server).
	PRM string
	// NoResourceMetadata leaves resource_metadata out of the challenge.
	NoResourceMetadata bool
}

func (p *Resource) prmURL() string {
	u, _ := url.Parse(p.URL)
	switch p.PRM {
	case "root":
		u.Path = "/.well-known/oauth-protected-resource"
	case "challenge":
		u.Path = "/meta/resource.json"
	default:
		u.Path = "/.well-known/oauth-protected-resource" + u.Path
	}
	return u.String()
}

// Mount adds the metadata to mux and returns next behind the token check.
func (p *Resource) Mount(mux *http.ServeMux, next http.Handler) http.Handler {
	resource := p.URL
	if p.PRM == "root" {
		ru, _ := url.Parse(p.URL)
		ru.Path = ""
		resource = ru.String()
	}
	if p.PRM != "none" {
		u, _ := url.Parse(p.prmURL())
		doc := map[string]any{"resource": resource, "authorization_servers": []string{p.AS.Issuer}}
		if len(p.AS.cfg.Scopes) > 0 {
			doc["scopes_supported"] = p.AS.cfg.Scopes
		}
		mux.HandleFunc("GET "+u.Path, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, doc) })
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		need := append([]string(nil), p.Scopes...)
		if p.Need != nil {
			need = append(need, p.Need(r)...)
		}
		tok, ok := "", false
		if f := strings.Fields(r.Header.Get("Authorization")); len(f) == 2 && strings.EqualFold(f[0], "bearer") {
			tok, ok = f[1], true
		}
		var t Token
		if ok {
			t, ok = p.AS.Lookup(tok)
		}
		if ok && t.Resource != "" && t.Resource != resource {
			ok = false // issued for another resource
		}
		if !ok {
			p.challenge(w, http.StatusUnauthorized, "", need)
			return
		}
		for _, sc := range need {
			if !slices.Contains(t.Scopes, sc) {
				p.challenge(w, http.StatusForbidden, "insufficient_scope", need)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (p *Resource) challenge(w http.ResponseWriter, status int, errCode string, need []string) {
	var params []string
	if errCode != "" {
		params = append(params, fmt.Sprintf("error=%q", errCode))
	}
	if len(need) > 0 {
		params = append(params, fmt.Sprintf("scope=%q", strings.Join(need, " ")))
	}
	if p.PRM != "none" && !p.NoResourceMetadata {
		params = append(params, fmt.Sprintf("resource_metadata=%q", p.prmURL()))
	}
	h := "Bearer"
	if len(params) > 0 {
		h += " " + strings.Join(params, ", ")
	}
	w.Header().Set("WWW-Authenticate", h)
	http.Error(w, http.StatusText(status), status)
}
