package oauth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// The client credentials grant with private_key_jwt (RFC 7523 §2.2, as
// OpenID Connect Core §9 names it): a machine client that authenticates
// at the token endpoint with a JWT it signs with its private key, instead
// of a secret. The go-sdk's client credentials handler knows only
// secrets, and golang.org/x/oauth2 signs no such assertion; the JWT is
// signed with github.com/golang-jwt/jwt, which the go-sdk already brings
// in.

// ClientAssertionType is the client_assertion_type of a JWT assertion.
const ClientAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// assertionLifetime is how long a signed assertion is good for: one token
// request, with room for clocks a little apart.
const assertionLifetime = time.Minute

// ClientKey is a machine client's private key for private_key_jwt, with
// the JWS algorithm that follows from it.
type ClientKey struct {
	Signer crypto.Signer
	// Alg is ES256, ES384 or ES512 (by the curve), RS256, or EdDSA.
	Alg string
}

// ParseClientKey reads a PEM private key — PKCS #8, SEC 1 (EC) or
// PKCS #1 (RSA) — and the algorithm it signs with: ES256 for a P-256 key
// (ES384, ES512 for P-384, P-521), RS256 for RSA, EdDSA for Ed25519.
func ParseClientKey(pemBytes []byte) (*ClientKey, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return nil, errors.New("no PEM block: want a private key (-----BEGIN PRIVATE KEY----- …)")
	}
	var key any
	var err error
	switch block.Type {
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	default:
		return nil, fmt.Errorf("a PEM %q block: want a private key (PRIVATE KEY, EC PRIVATE KEY or RSA PRIVATE KEY)", block.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the private key: %w", err)
	}
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		switch k.Curve {
		case elliptic.P256():
			return &ClientKey{Signer: k, Alg: "ES256"}, nil
		case elliptic.P384():
			return &ClientKey{Signer: k, Alg: "ES384"}, nil
		case elliptic.P521():
			return &ClientKey{Signer: k, Alg: "ES512"}, nil
		}
		return nil, fmt.Errorf("an EC key on %s: want P-256 (ES256), P-384 or P-521", k.Curve.Params().Name)
	case *rsa.PrivateKey:
		if k.N.BitLen() < 2048 {
			return nil, fmt.Errorf("an RSA key of %d bits: RS256 wants 2048 or more", k.N.BitLen())
		}
		return &ClientKey{Signer: k, Alg: "RS256"}, nil
	case ed25519.PrivateKey:
		return &ClientKey{Signer: k, Alg: "EdDSA"}, nil
	}
	return nil, fmt.Errorf("a %T key: want EC (ES256), RSA (RS256) or Ed25519", key)
}

// sign signs claims with the key.
func (k *ClientKey) sign(claims jwt.Claims) (string, error) {
	m := jwt.GetSigningMethod(k.Alg)
	if m == nil {
		return "", fmt.Errorf("no signing method %s", k.Alg)
	}
	return jwt.NewWithClaims(m, claims).SignedString(k.Signer)
}

// jwtClientHandler is an auth.OAuthHandler for the client credentials
// grant authenticated with private_key_jwt. Its discovery is the go-sdk
// handlers': the protected resource metadata (the challenge's, at the
// endpoint's path, at the root; else the server's root is the
// authorization server, as in 2025-03-26), then the authorization server's
// metadata (else the 2025-03-26 default endpoints).
type jwtClientHandler struct {
	clientID string
	key      *ClientKey
	hc       *http.Client

	mu sync.Mutex
	ts oauth2.TokenSource
	// granted are the scopes each issuer granted, so that a step-up asks
	// for them and the new ones together.
	granted map[string][]string
}

func (h *jwtClientHandler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ts, nil
}

func (h *jwtClientHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	defer io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	prm := h.resourceMetadata(ctx, challenges, req.URL)
	asURL := prm.AuthorizationServers[0]
	asm, err := auth.GetAuthServerMetadata(ctx, asURL, h.hc)
	if err != nil {
		return fmt.Errorf("authorization server metadata: %w", err)
	}
	if asm == nil {
		asm = &oauthex.AuthServerMeta{Issuer: asURL, TokenEndpoint: strings.TrimSuffix(asURL, "/") + "/token"}
	}
	if m := asm.TokenEndpointAuthMethodsSupported; len(m) > 0 && !slices.Contains(m, "private_key_jwt") {
		return fmt.Errorf("the authorization server does not take private_key_jwt at its token endpoint (it lists %s): give --client-secret instead of --client-key-file", strings.Join(m, ", "))
	}
	if algs := asm.TokenEndpointAuthSigningAlgValuesSupported; len(algs) > 0 && !slices.Contains(algs, h.key.Alg) {
		return fmt.Errorf("the authorization server takes assertions signed with %s, and the key signs with %s: give a key of one of those kinds", strings.Join(algs, ", "), h.key.Alg)
	}
	scopes := challengeScopesOf(challenges)
	if len(scopes) == 0 {
		scopes = prm.ScopesSupported
	}
	h.mu.Lock()
	for _, s := range h.granted[asm.Issuer] {
		if !slices.Contains(scopes, s) {
			scopes = append(scopes, s)
		}
	}
	h.mu.Unlock()
	src := &assertionSource{h: h, ctx: context.WithValue(context.Background(), oauth2.HTTPClient, h.hc),
		audience: asm.Issuer, tokenURL: asm.TokenEndpoint, resource: prm.Resource, scopes: scopes}
	ts := oauth2.ReuseTokenSource(nil, src)
	tok, err := ts.Token()
	if err != nil {
		return fmt.Errorf("client credentials token request (private_key_jwt): %w", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ts = ts
	if h.granted == nil {
		h.granted = map[string][]string{}
	}
	if s, ok := tok.Extra("scope").(string); ok && s != "" {
		h.granted[asm.Issuer] = strings.Fields(s)
	} else {
		h.granted[asm.Issuer] = scopes
	}
	return nil
}

// resourceMetadata finds the protected resource metadata, else the
// 2025-03-26 fallback: the server's root as the authorization server.
func (h *jwtClientHandler) resourceMetadata(ctx context.Context, challenges []oauthex.Challenge, server *url.URL) *oauthex.ProtectedResourceMetadata {
	resource := stripQuery(server)
	type candidate struct{ url, resource string }
	var tries []candidate
	for _, c := range challenges {
		if u := c.Params["resource_metadata"]; u != "" {
			tries = append(tries, candidate{u, resource})
		}
	}
	at := *server
	at.RawQuery, at.Fragment = "", ""
	at.Path = "/.well-known/oauth-protected-resource/" + strings.TrimLeft(server.Path, "/")
	tries = append(tries, candidate{at.String(), resource})
	at.Path = "/.well-known/oauth-protected-resource"
	root := *server
	root.Path, root.RawQuery, root.Fragment = "", "", ""
	tries = append(tries, candidate{at.String(), root.String()})
	for _, c := range tries {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, c.url, c.resource, h.hc)
		if err == nil && prm != nil && len(prm.AuthorizationServers) > 0 {
			return prm
		}
	}
	return &oauthex.ProtectedResourceMetadata{Resource: resource, AuthorizationServers: []string{root.String()}}
}

func challengeScopesOf(cs []oauthex.Challenge) []string {
	for _, c := range cs {
		if c.Scheme == "bearer" && c.Params["scope"] != "" {
			return strings.Fields(c.Params["scope"])
		}
	}
	return nil
}

// assertionSource asks the token endpoint for a token with a freshly
// signed assertion each time: an assertion is good for one request
// (its jti unique, its exp a minute away), so a token that expired is
// replaced with a new one, never with the old assertion.
type assertionSource struct {
	h                            *jwtClientHandler
	ctx                          context.Context
	audience, tokenURL, resource string
	scopes                       []string
}

func (s *assertionSource) Token() (*oauth2.Token, error) {
	now := time.Now()
	jti := make([]byte, 16)
	_, _ = rand.Read(jti)
	assertion, err := s.h.key.sign(jwt.RegisteredClaims{
		Issuer:    s.h.clientID,
		Subject:   s.h.clientID,
		Audience:  jwt.ClaimStrings{s.audience},
		IssuedAt:  jwt.NewNumericDate(now),
		NotBefore: jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(now.Add(assertionLifetime)),
		ID:        fmt.Sprintf("%x", jti),
	})
	if err != nil {
		return nil, fmt.Errorf("signing the client assertion: %w", err)
	}
	params := url.Values{"client_assertion_type": {ClientAssertionType}, "client_assertion": {assertion}}
	if s.resource != "" {
		params.Set("resource", s.resource)
	}
	cfg := clientcredentials.Config{ClientID: s.h.clientID, TokenURL: s.tokenURL, Scopes: s.scopes,
		EndpointParams: params, AuthStyle: oauth2.AuthStyleInParams}
	return cfg.Token(s.ctx)
}
