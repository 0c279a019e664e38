package client

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"inflight/event"
	"inflight/oauth"
	"inflight/wire"
)

// withAuth puts the OAuth authorization (package oauth, on the go-sdk's
// handlers) under every HTTP request of the connection when cfg.Auth is
// set: the token on each request, and on a 401 (or a 403
// insufficient_scope) the flow, then the request again. Each step is
// reported as an event.Auth.
func (c *Client) withAuth(hc *http.Client, endpoint string) error {
	if c.cfg.Auth == nil {
		return nil
	}
	cfg := *c.cfg.Auth
	if cfg.Server == "" {
		cfg.Server = endpoint
	}
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	tr, err := oauth.New(cfg, base, c.emitAuth)
	if err != nil {
		return err
	}
	hc.Transport = tr
	return nil
}

// requestKey carries, in an HTTP request's context, the JSON-RPC request
// it carries, so that the steps of the authorization it caused name it.
type requestKey struct{}

func withRequest(ctx context.Context, out outgoing) context.Context {
	if out.id.IsZero() {
		return ctx
	}
	return context.WithValue(ctx, requestKey{}, requestRef{id: out.id, internal: out.internal})
}

type requestRef struct {
	id       wire.ID
	internal bool
}

func (c *Client) emitAuth(ctx context.Context, s event.AuthStep) {
	ev := event.Event{Kind: event.Auth, Time: time.Now(), AuthStep: &s, Text: AuthText(s)}
	if ref, ok := ctx.Value(requestKey{}).(requestRef); ok {
		ev.RequestID, ev.Internal = ref.id, ref.internal
	}
	c.emit(ev)
}

// AuthText is an authorization step in one line, for the protocol log and
// traces: what was fetched or done, its status, how long it took. It holds
// no token or secret (the step has none); the server's strings in it are
// raw.
func AuthText(s event.AuthStep) string {
	var b strings.Builder
	b.WriteString("auth ")
	b.WriteString(s.Kind.String())
	if s.Method != "" || s.URL != "" {
		fmt.Fprintf(&b, ": %s %s", s.Method, s.URL)
	}
	if s.Status != 0 {
		fmt.Fprintf(&b, " → %d", s.Status)
	}
	switch {
	case s.Duration >= time.Millisecond:
		fmt.Fprintf(&b, " (%v)", s.Duration.Round(time.Millisecond))
	case s.Duration > 0:
		b.WriteString(" (<1ms)")
	}
	if s.Text != "" {
		b.WriteString("; " + s.Text)
	}
	if len(s.Scopes) > 0 {
		b.WriteString("; scopes " + strings.Join(s.Scopes, " "))
	}
	if s.Err != "" {
		b.WriteString("; error: " + s.Err)
	}
	return strings.ReplaceAll(b.String(), ":  ", ": ")
}

// loginHint is what a refusal says to do when no authorization is
// configured and the server's challenge asks for a bearer token.
func loginHint(resp *http.Response, endpoint string) string {
	for _, v := range resp.Header.Values("WWW-Authenticate") {
		if strings.HasPrefix(strings.ToLower(strings.TrimSpace(v)), "bearer") {
			return fmt.Sprintf(" (the server asks for an OAuth bearer token: run `inflight auth login %s`, or give one with -H 'Authorization: Bearer …')", oauth.ServerKey(endpoint))
		}
	}
	return ""
}

// handshakeTimeout bounds Connect: with an interactive authorization the
// browser step's own bound is added, since a person is typing a password
// meanwhile (the step has its own timeout and says so).
func (c *Client) handshakeTimeout() time.Duration {
	d := c.cfg.HandshakeTimeout
	if a := c.cfg.Auth; a != nil && a.Interactive && !a.ClientCredentials && c.cfg.URL != "" {
		bt := a.BrowserTimeout
		if bt <= 0 {
			bt = oauth.DefaultBrowserTimeout
		}
		d += bt
	}
	return d
}
