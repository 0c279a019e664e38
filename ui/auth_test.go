package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"inflight/event"
	"inflight/wire"
)

// authHarness is a harness on a protected HTTP server: the first tool
// call is refused with a challenge, and the authorization runs up to the
// browser step, so that it is still in progress.
func authHarness(t *testing.T, w, hgt int) (*harness, int64) {
	h := newHarness(t, w, hgt)
	h.m.opts.Target, h.m.opts.Transport = "http://127.0.0.1:8080/mcp", "http"
	h.fake.info = event.ConnInfo{Transport: event.TransportHTTP, Era: event.EraLegacy, ProtocolVersion: wire.Version20241105,
		ServerName: "inflight-demo", ServerVersion: "0.1.0"}
	h.connect()
	id := h.sendTool("slow")
	step := func(d time.Duration, s event.AuthStep) {
		h.now = h.now.Add(d)
		s.Start = h.now
		h.events(event.Event{Kind: event.Auth, RequestID: wire.IntID(id), AuthStep: &s})
	}
	step(0, event.AuthStep{Kind: event.AuthChallenge, Method: "POST", URL: "http://127.0.0.1:8080/mcp", Status: 401,
		Scopes: []string{"mcp:tools"}, Text: `Bearer resource_metadata="http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp", scope="mcp:tools"`})
	step(3*time.Millisecond, event.AuthStep{Kind: event.AuthResourceMetadata, Method: "GET", URL: "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp",
		Status: 200, Duration: 2 * time.Millisecond, Issuer: "http://127.0.0.1:8080/as", Scopes: []string{"mcp:tools", "mcp:admin"},
		Text: "resource http://127.0.0.1:8080/mcp; authorization servers: http://127.0.0.1:8080/as"})
	step(4*time.Millisecond, event.AuthStep{Kind: event.AuthServerMetadata, Method: "GET", URL: "http://127.0.0.1:8080/.well-known/oauth-authorization-server/as",
		Status: 404, Duration: time.Millisecond, FellBack: true, Text: "no authorization server metadata here; the next location is tried"})
	step(2*time.Millisecond, event.AuthStep{Kind: event.AuthServerMetadata, Method: "GET", URL: "http://127.0.0.1:8080/.well-known/openid-configuration/as",
		Status: 200, Duration: time.Millisecond, Issuer: "http://127.0.0.1:8080/as", Text: "issuer http://127.0.0.1:8080/as; dynamic registration, PKCE S256"})
	step(3*time.Millisecond, event.AuthStep{Kind: event.AuthRegistration, Method: "POST", URL: "http://127.0.0.1:8080/as/register",
		Status: 201, Duration: 2 * time.Millisecond, ClientID: "client-7", Text: "dynamic client registration; token endpoint auth none"})
	step(2*time.Millisecond, event.AuthStep{Kind: event.AuthBrowser, URL: "http://127.0.0.1:8080/as/authorize", Scopes: []string{"mcp:tools"},
		Text: "opened the browser ($BROWSER); waiting for the callback on http://127.0.0.1:33418/callback"})
	h.advance(1200 * time.Millisecond)
	return h, id
}

// finishAuth completes the authorization: the token, then the retry of
// the refused request.
func finishAuth(h *harness, id int64) {
	for _, s := range []event.AuthStep{
		{Kind: event.AuthBrowser, Text: "callback received"},
		{Kind: event.AuthToken, Method: "POST", URL: "http://127.0.0.1:8080/as/token", Status: 200, Duration: 3 * time.Millisecond,
			Scopes: []string{"mcp:tools"}, Expires: h.now.Add(time.Hour), Text: "authorization_code: Bearer token and a refresh token"},
		{Kind: event.AuthRetry, Method: "POST", URL: "http://127.0.0.1:8080/mcp", Text: "sending the refused request again with the new token"},
	} {
		s.Start = h.now
		h.events(event.Event{Kind: event.Auth, RequestID: wire.IntID(id), AuthStep: &s})
		h.now = h.now.Add(5 * time.Millisecond)
	}
}

// A request refused for want of a token waits in the list as waiting for
// authorization, its timers running; a request sent meanwhile waits too;
// A shows each step with its time; once the token came the request is
// marked as retried.
func TestAuthViewAndWaiting(t *testing.T) {
	h, id := authHarness(t, 120, 35)
	other := h.sendTool("stubborn")
	h.advance(300 * time.Millisecond)
	scr := h.screen()
	if n := strings.Count(scr, "⧗ waiting for authorization"); n != 2 {
		t.Fatalf("want both requests waiting for authorization, got %d:\n%s", n, scr)
	}
	if !strings.Contains(scr, "A auth steps") {
		t.Errorf("the footer does not offer A:\n%s", scr)
	}
	if r := h.request(id); r.Elapsed(h.now) < time.Second {
		t.Errorf("the waiting request's timer does not run: %v", r.Elapsed(h.now))
	}
	h.key("A")
	scr = h.screen()
	for _, want := range []string{"AUTHORIZATION · 6 steps · in progress for", "challenge", "→ 401", "resource_metadata", "fell back",
		"openid-configuration", "registration", "client ID client-7", "browser", "for #" + fmt.Sprint(id), "scopes asked mcp:tools"} {
		if !strings.Contains(scr, want) {
			t.Errorf("auth view lacks %q:\n%s", want, scr)
		}
	}
	h.key("esc")
	finishAuth(h, id)
	scr = h.screen()
	if strings.Contains(scr, "waiting for authorization") {
		t.Errorf("still waiting after the token:\n%s", scr)
	}
	if !strings.Contains(scr, "↻ retried") {
		t.Errorf("the retried request is not marked:\n%s", scr)
	}
	h.answer(other, `{"content":[]}`)
	h.answer(id, `{"content":[{"type":"text","text":"done"}]}`)
	if !strings.Contains(h.screen(), "↻ retried") {
		t.Errorf("the mark went with the answer:\n%s", h.screen())
	}
	h.key("A")
	if scr := h.screen(); !strings.Contains(scr, "scopes granted mcp:tools") || !strings.Contains(scr, "tokens are never shown") || strings.Contains(scr, "in progress") {
		t.Errorf("auth view after the token:\n%s", scr)
	}
}

// Without any auth step, A is neither offered nor acts.
func TestAuthKeyOnlyWithSteps(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	if strings.Contains(h.screen(), "auth steps") {
		t.Errorf("A offered without auth steps:\n%s", h.screen())
	}
	h.key("A")
	if h.m.focus.mode != 0 {
		t.Errorf("A changed the screen without auth steps: mode %d", h.m.focus.mode)
	}
}

// A waiting request's timeout still applies: it expires and is cancelled.
func TestAuthWaitingTimesOut(t *testing.T) {
	h, id := authHarness(t, 120, 35)
	r := h.request(id)
	d, _ := r.Remaining(h.now)
	h.advance(d + time.Millisecond)
	if _, cancels := h.fake.calls(); cancels == 0 {
		t.Fatalf("the timeout did not cancel the waiting request (state %v)", h.request(id).State)
	}
	// The request's context went with it, and the browser step with that.
	s := event.AuthStep{Kind: event.AuthBrowser, Start: h.now, Err: "cancelled while waiting for the callback"}
	h.events(event.Event{Kind: event.Auth, RequestID: wire.IntID(id), AuthStep: &s})
	if _, ok := h.m.screens.auth.Pending(); ok {
		t.Errorf("the authorization is still in progress after its browser step was cancelled")
	}
	if strings.Contains(h.screen(), "waiting for authorization") {
		t.Errorf("a timed out request still waits:\n%s", h.screen())
	}
}

func TestGoldenAuthViews(t *testing.T) {
	for _, size := range []struct{ w, h int }{{80, 24}, {120, 35}} {
		suffix := fmt.Sprintf("%dx%d", size.w, size.h)
		t.Run("waiting-"+suffix, func(t *testing.T) {
			h, _ := authHarness(t, size.w, size.h)
			h.golden()
		})
		t.Run("steps-"+suffix, func(t *testing.T) {
			h, _ := authHarness(t, size.w, size.h)
			h.key("A")
			h.golden()
		})
		t.Run("retried-"+suffix, func(t *testing.T) {
			h, id := authHarness(t, size.w, size.h)
			finishAuth(h, id)
			h.answer(id, `{"content":[{"type":"text","text":"done"}]}`)
			h.golden()
		})
	}
}

// Two requests sent before the authorization, each refused in turn: both
// wait for the one authorization, which began at the first challenge.
func TestAuthTwoRefused(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	a, b := h.sendTool("slow"), h.sendTool("stubborn")
	h.advance(100 * time.Millisecond)
	for _, id := range []int64{a, b} {
		s := event.AuthStep{Kind: event.AuthChallenge, Method: "POST", URL: "http://127.0.0.1:8080/mcp", Status: 401, Start: h.now}
		h.events(event.Event{Kind: event.Auth, RequestID: wire.IntID(id), AuthStep: &s})
		h.advance(50 * time.Millisecond)
	}
	if n := strings.Count(h.screen(), "⧗ waiting for authorization · 0.1s"); n != 2 {
		t.Fatalf("want both waiting since the first challenge, got %d:\n%s", n, h.screen())
	}
	fail := event.AuthStep{Kind: event.AuthFailed, Start: h.now, Text: "the browser step timed out"}
	h.events(event.Event{Kind: event.Auth, AuthStep: &fail})
	if strings.Contains(h.screen(), "waiting for authorization") {
		t.Errorf("still waiting after the authorization failed:\n%s", h.screen())
	}
}

// The auth view follows the newest steps; ↑ (or the wheel) scrolls back
// and stops following, G follows again.
func TestAuthViewScroll(t *testing.T) {
	h, _ := authHarness(t, 80, 24)
	h.key("A")
	if !strings.Contains(h.screen(), "scopes asked mcp:tools") || !strings.Contains(h.screen(), "↑ more") {
		t.Fatalf("the view does not show the newest step:\n%s", h.screen())
	}
	h.key("g")
	if !strings.Contains(h.screen(), "challenge → 401") || strings.Contains(h.screen(), "↑ more") {
		t.Fatalf("g does not show the first step:\n%s", h.screen())
	}
	h.send(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	if h.m.screens.auth.Top() != wheelRows {
		t.Errorf("the wheel scrolled to %d", h.m.screens.auth.Top())
	}
	finishAuth(h, 2)
	if strings.Contains(h.screen(), "retry") {
		t.Errorf("scrolled back, the view jumped to the new steps:\n%s", h.screen())
	}
	h.key("G")
	if !strings.Contains(h.screen(), "retry") {
		t.Errorf("G does not show the newest step:\n%s", h.screen())
	}
}
