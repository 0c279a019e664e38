package event

import "time"

// AuthStepKind says which step of an OAuth authorization an AuthStep is.
type AuthStepKind uint8

// The steps of an authorization, in the order they usually come.
const (
	// AuthChallenge: the server answered 401 (or 403 insufficient_scope)
	// with a WWW-Authenticate challenge; Text is the challenge as sent.
	AuthChallenge AuthStepKind = iota + 1
	// AuthResourceMetadata: a protected resource metadata document (RFC
	// 9728) was fetched, or its fetch failed and the next URL is tried.
	AuthResourceMetadata
	// AuthServerMetadata: an authorization server metadata document (RFC
	// 8414 or OpenID Connect discovery) was fetched or tried.
	AuthServerMetadata
	// AuthRegistration: the client registered itself (dynamic client
	// registration, RFC 7591), or a pre-registered or stored client was
	// used.
	AuthRegistration
	// AuthBrowser: the authorization URL was printed and opened, or the
	// callback arrived (or did not).
	AuthBrowser
	// AuthToken: an authorization code or client credentials were
	// exchanged for a token.
	AuthToken
	// AuthRefresh: a refresh token was used for a new access token.
	AuthRefresh
	// AuthStored: a token kept from an earlier login was used or saved.
	AuthStored
	// AuthRetry: the request that was refused is sent again with the token.
	AuthRetry
	// AuthFailed: the authorization ended without a token; Text says why
	// and what to do.
	AuthFailed
	// AuthHTTP: another request of the authorization, as it went.
	AuthHTTP
)

var authStepNames = map[AuthStepKind]string{
	AuthChallenge:        "challenge",
	AuthResourceMetadata: "resource_metadata",
	AuthServerMetadata:   "server_metadata",
	AuthRegistration:     "registration",
	AuthBrowser:          "browser",
	AuthToken:            "token",
	AuthRefresh:          "refresh",
	AuthStored:           "stored",
	AuthRetry:            "retry",
	AuthFailed:           "failed",
	AuthHTTP:             "http",
}

func (k AuthStepKind) String() string {
	if s, ok := authStepNames[k]; ok {
		return s
	}
	return "unknown"
}

// MarshalText makes an AuthStepKind encode as its name in JSON.
func (k AuthStepKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// AuthStep is one step of an authorization as inflight saw it. Every string
// is the server's or the authorization server's, raw: sanitise before
// display. No field ever holds an access token, a refresh token, an
// authorization code, a PKCE verifier or a client secret.
type AuthStep struct {
	Kind AuthStepKind
	// Method and URL are the HTTP request of the step, when it made one
	// (the URL without its query).
	Method string
	URL    string
	// Status is the HTTP status of the answer (0: no answer, Err says why).
	Status int
	// Start is when the step began; Duration how long it took.
	Start    time.Time
	Duration time.Duration
	// FellBack: this document was not found (or not usable) and the next
	// candidate URL is tried.
	FellBack bool
	// Scopes are the scopes asked for (challenge, browser) or granted
	// (token, refresh).
	Scopes []string
	// Issuer is the authorization server's issuer, when known.
	Issuer string
	// ClientID is the client identifier used (it is not a secret).
	ClientID string
	// Expires is when the access token obtained expires (zero: not said).
	Expires time.Time
	// Text says what happened in a few words.
	Text string
	// Flag, when set, names what the step went on past that a
	// specification forbids (oauth.FlagIssuerMismatch); Text says it in
	// words.
	Flag string
	// Err is set when the step failed.
	Err string
}
