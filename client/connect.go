package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"inflight/event"
	"inflight/wire"
)

// HTTPStatusError is an HTTP reply that carried no JSON-RPC answer.
type HTTPStatusError struct {
	Status      int
	ContentType string
	// Body is the start of the body, for display.
	Body string
	// Hint says what to do about it (a 401 asking for OAuth: log in).
	Hint string
}

func (e *HTTPStatusError) Error() string {
	head := fmt.Sprintf("HTTP %d", e.Status)
	if t := http.StatusText(e.Status); t != "" {
		head += " " + t
	}
	body := e.describeBody()
	if body == "" || strings.EqualFold(body, http.StatusText(e.Status)) {
		return head + e.Hint
	}
	if r := []rune(body); len(r) > maxStatusBody {
		body = string(r[:maxStatusBody]) + "…"
	}
	return head + ": " + body + e.Hint
}

// describeBody is the body in one line; a web server's HTML error page is
// named by its title, since the rest is markup.
func (e *HTTPStatusError) describeBody() string {
	if media, _, _ := mime.ParseMediaType(e.ContentType); media == "text/html" {
		if m := htmlTitle.FindStringSubmatch(e.Body); m != nil {
			return "an HTML page titled " + strconv.Quote(strings.Join(strings.Fields(m[1]), " "))
		}
		return "an HTML page"
	}
	return strings.Join(strings.Fields(e.Body), " ")
}

// maxStatusBody bounds how much of an error body an error message quotes.
const maxStatusBody = 200

var htmlTitle = regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title>`)

// Connect starts the transport, finds the server's era and protocol
// version as versioning.mdx describes, and completes the handshake the era
// requires (none for modern; initialize and notifications/initialized for
// legacy). It must be called once, before Send.
func (c *Client) Connect(ctx context.Context) (event.ConnInfo, error) {
	if err := c.enter(); err != nil {
		return c.Info(), err
	}
	defer c.leave()
	ctx, cancel := context.WithTimeout(ctx, c.handshakeTimeout())
	defer cancel()
	c.lifeMu.Lock()
	switch {
	case c.closing:
		c.lifeMu.Unlock()
		return c.Info(), ErrClosed
	case c.started:
		c.lifeMu.Unlock()
		return c.Info(), errors.New("client: Connect called twice")
	}
	err := c.t.start(ctx)
	c.started = err == nil
	c.lifeMu.Unlock()
	if err != nil {
		return c.Info(), err
	}
	var info event.ConnInfo
	if st, ok := c.t.(*sseTransport); ok {
		info, err = c.connectSSE(ctx, st)
	} else {
		info, err = c.negotiate(ctx)
		if err != nil && c.mayBeSSE(err) {
			info, err = c.detectSSE(ctx, err)
		}
	}
	if err != nil {
		return c.Info(), err
	}
	c.mu.Lock()
	info.Transport = c.kind
	info.SessionID = c.info.SessionID
	c.info = info.Clone()
	c.connected = true
	c.mu.Unlock()
	if ht, ok := c.t.(*httpTransport); ok && info.Era == event.EraLegacy {
		ht.openGetStream(ctx)
	}
	c.measureRoundTrip(ctx, info)
	// Connected comes last, so that a consumer that waits for it has
	// applied everything the connection's set-up brought (the handshake,
	// the timed round trips and whatever a server sent meanwhile) before
	// it begins a request.
	cp := info.Clone()
	c.emit(event.Event{Kind: event.Connected, Time: time.Now(), Info: &cp})
	return info, nil
}

func (c *Client) note(format string, args ...any) {
	c.emit(event.Event{Kind: event.Note, Time: time.Now(), Text: fmt.Sprintf(format, args...)})
}

// negotiate decides the era and version.
//
// A forced legacy version skips detection and opens with initialize. A
// forced modern version still sends server/discover, once: the spec makes
// the call optional, but it is how inflight learns the server's name,
// capabilities and versions for its header, and on stdio it is what makes a
// legacy server fail at once and deterministically instead of on the first
// real request (the versioning page's "Modern client, legacy server" row).
// What forcing changes is that nothing falls back: a server that is not
// modern, or that does not support the forced version, is a connection
// error that says so, never a silent switch to another version or era.
func (c *Client) negotiate(ctx context.Context) (event.ConnInfo, error) {
	forced := c.cfg.ProtocolVersion
	if forced != "" && !wire.IsModernVersion(forced) {
		c.note("protocol version %s forced: legacy handshake", forced)
		return c.initialize(ctx, forced)
	}
	version := wire.VersionModern
	if forced != "" {
		version = forced
		c.note("protocol version %s forced: server/discover only to learn about the server, with no fallback", forced)
	}
	for attempt := 0; attempt < 2; attempt++ {
		res, err := c.probe(ctx, version)
		if err == nil {
			return c.discovered(ctx, res, version, forced)
		}
		var rpcErr *wire.Error
		if errors.As(err, &rpcErr) && wire.IsModernErrorCode(rpcErr.Code) {
			next, info, err := c.discoverRefused(ctx, rpcErr, version, forced)
			if next != "" {
				version = next
				continue
			}
			return info, err
		}
		return c.discoverFailed(ctx, err, rpcErr, forced)
	}
	return event.ConnInfo{}, errors.New("server/discover: version negotiation did not converge")
}

// discovered takes server/discover's answer under version (forced, when
// the user forced one): a modern server that supports it, or a legacy one
// to open with initialize, or no version both speak.
func (c *Client) discovered(ctx context.Context, res wire.Message, version, forced string) (event.ConnInfo, error) {
	info, verr := parseDiscover(res.Result)
	if verr != nil {
		// A success that is not a valid modern result is not proof
		// of a modern server.
		if forced != "" {
			return info, fmt.Errorf("protocol version %s was forced, but server/discover answered with an invalid result (%v): not a modern server", forced, verr)
		}
		c.note("server/discover answered but %v: not a modern server, falling back to initialize", verr)
		return c.initialize(ctx, wire.Version20251125)
	}
	if contains(info.SupportedVersions, version) {
		info.Era, info.ProtocolVersion = event.EraModern, version
		c.note("server/discover: modern server, version %s", version)
		return info, nil
	}
	if forced != "" {
		return info, fmt.Errorf("protocol version %s was forced, but the server supports only %s",
			forced, strings.Join(info.SupportedVersions, ", "))
	}
	if v := firstLegacy(info.SupportedVersions); v != "" {
		c.note("server/discover lists only %s: using the legacy handshake", strings.Join(info.SupportedVersions, ", "))
		return c.initialize(ctx, v)
	}
	return info, fmt.Errorf("no mutually supported protocol version: server supports %s, inflight speaks %s, %s",
		strings.Join(info.SupportedVersions, ", "), wire.VersionModern, strings.Join(wire.LegacyVersions, ", "))
}

// discoverRefused takes a modern error answering server/discover under
// version: another modern version to try (next), or the legacy handshake,
// or the connection's failure.
func (c *Client) discoverRefused(ctx context.Context, rpcErr *wire.Error, version, forced string) (next string, info event.ConnInfo, err error) {
	if rpcErr.Code != wire.CodeUnsupportedProtocolVersion {
		return "", event.ConnInfo{}, fmt.Errorf("modern server rejected server/discover: %w", rpcErr)
	}
	supported := wire.SupportedVersions(rpcErr.Data)
	c.note("server does not support %s; it supports %s", version, strings.Join(supported, ", "))
	if forced != "" {
		return "", event.ConnInfo{}, fmt.Errorf("protocol version %s was forced, but the server does not support it; it supports %s",
			forced, strings.Join(supported, ", "))
	}
	if v := firstModern(supported); v != "" && v != version {
		return v, event.ConnInfo{}, nil
	}
	if v := firstLegacy(supported); v != "" {
		info, err := c.initialize(ctx, v)
		return "", info, err
	}
	return "", event.ConnInfo{}, fmt.Errorf("no mutually supported protocol version: server supports %s", strings.Join(supported, ", "))
}

// discoverFailed takes server/discover's failure err (rpcErr, when set,
// a non-modern JSON-RPC error): a legacy server to open with initialize,
// or, when the failure says nothing of the era (a dead or refusing
// server, a timeout of the connection), the connection's failure.
func (c *Client) discoverFailed(ctx context.Context, err error, rpcErr *wire.Error, forced string) (event.ConnInfo, error) {
	if ctx.Err() != nil {
		// Say what it waited for (issue 14, item 12: a server that never
		// finished its headers gave "context deadline exceeded").
		return event.ConnInfo{}, fmt.Errorf("connecting: server/discover: %w", c.within(err))
	}
	var statusErr *HTTPStatusError
	if errors.As(err, &statusErr) && statusErr.Status >= 500 {
		return event.ConnInfo{}, fmt.Errorf("server/discover: %w", err)
	}
	if statusErr != nil && (statusErr.Status == http.StatusUnauthorized || statusErr.Status == http.StatusForbidden) {
		// Refused before the protocol: says nothing of the era, and
		// initialize would only be refused the same way.
		return event.ConnInfo{}, fmt.Errorf("server/discover: %w (the server refused the request itself: check the credentials given with -H, or the server's allowed origins)", err)
	}
	if errors.Is(err, ErrClosed) || (c.kind == event.TransportHTTP && statusErr == nil && rpcErr == nil) {
		return event.ConnInfo{}, fmt.Errorf("server/discover: %w", c.deadCause(err))
	}
	if errors.Is(err, ErrEchoed) {
		return event.ConnInfo{}, fmt.Errorf("server/discover: %w", err)
	}
	var silent *probeTimeout
	if c.kind == event.TransportStdio && rpcErr == nil && !errors.As(err, &silent) {
		// Not an answer and not silence: the server is gone (it exited
		// at once, or closed its stdin). That says nothing of its era,
		// and initialize would only fail in another, racier way. Wait
		// a moment for the exit status, which says more than EPIPE.
		wait := time.NewTimer(c.cfg.ShutdownWait)
		select {
		case <-c.dead:
		case <-wait.C:
		}
		wait.Stop()
		return event.ConnInfo{}, fmt.Errorf("server/discover: %w", c.deadCause(err))
	}
	if forced != "" {
		return event.ConnInfo{}, fmt.Errorf("protocol version %s was forced, but the server is not a modern server (server/discover: %w); "+
			"without a forced version inflight would fall back to the legacy initialize handshake", forced, err)
	}
	c.note("server/discover failed (%v): legacy server, falling back to initialize", err)
	return c.initialize(ctx, wire.Version20251125)
}

// probe sends server/discover under a modern version. On stdio a server that
// stays silent for ProbeTimeout is taken as legacy.
func (c *Client) probe(ctx context.Context, version string) (wire.Message, error) {
	pctx := ctx
	if c.kind == event.TransportStdio {
		var cancel context.CancelFunc
		pctx, cancel = context.WithTimeout(ctx, c.cfg.ProbeTimeout)
		defer cancel()
	}
	msg, err := c.call(pctx, wire.MethodDiscover, nil, version, true)
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return msg, &probeTimeout{c.cfg.ProbeTimeout}
		}
		return msg, err
	}
	if msg.Kind == wire.KindError {
		return msg, msg.Error
	}
	return msg, nil
}

// probeTimeout is a stdio server's silence in answer to server/discover,
// which the versioning page takes for a legacy server.
type probeTimeout struct{ d time.Duration }

func (e *probeTimeout) Error() string { return fmt.Sprintf("no answer within %s", e.d) }

// initialize runs the legacy handshake.
func (c *Client) initialize(ctx context.Context, version string) (event.ConnInfo, error) {
	caps := map[string]any{}
	if !c.cfg.NoTasks {
		// The tasks utility: inflight takes task handles for the requests
		// it sends (it serves none of the server's as tasks, so no
		// request types are listed).
		caps["tasks"] = map[string]any{}
	}
	c.cfg.Answers.add(caps)
	params, _ := json.Marshal(map[string]any{
		"protocolVersion": version,
		"capabilities":    caps,
		"clientInfo":      map[string]string{"name": c.cfg.ClientName, "version": c.cfg.ClientVersion},
	})
	msg, err := c.call(ctx, wire.MethodInitialize, params, version, false)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			// The set-up limit, not the caller's: say which, and what was
			// still awaited.
			return event.ConnInfo{}, fmt.Errorf("initialize: %w", c.within(err))
		}
		return event.ConnInfo{}, fmt.Errorf("initialize: %w", err)
	}
	if msg.Kind == wire.KindError {
		return event.ConnInfo{}, fmt.Errorf("initialize: %w", msg.Error)
	}
	var res struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
		ServerInfo      struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"serverInfo"`
		Instructions string `json:"instructions"`
	}
	if err := json.Unmarshal(msg.Result, &res); err != nil {
		return event.ConnInfo{}, fmt.Errorf("initialize: malformed result: %w", err)
	}
	if !c.speaksLegacy(res.ProtocolVersion) {
		return event.ConnInfo{}, fmt.Errorf("initialize: the server chose protocol version %q, which inflight does not speak (%s)",
			res.ProtocolVersion, strings.Join(c.legacyVersions(), ", "))
	}
	info := event.ConnInfo{
		Era: event.EraLegacy, ProtocolVersion: res.ProtocolVersion,
		ServerName: res.ServerInfo.Name, ServerVersion: res.ServerInfo.Version,
		Instructions: res.Instructions, Capabilities: res.Capabilities,
	}
	raw := wire.Notification(wire.NotifyInitialized, nil)
	c.emitOwnSent(wire.ID{}, raw, time.Now())
	if err := c.t.send(ctx, outgoing{method: wire.NotifyInitialized, raw: raw, internal: true, version: res.ProtocolVersion}); err != nil {
		return info, fmt.Errorf("notifications/initialized: %w", err)
	}
	if res.ProtocolVersion != version {
		c.note("initialize: asked for %s, the server chose %s", version, res.ProtocolVersion)
	}
	return info, nil
}

// parseDiscover reads a DiscoverResult; a result without supportedVersions
// is not a valid modern answer.
func parseDiscover(result json.RawMessage) (event.ConnInfo, error) {
	var res struct {
		SupportedVersions []string        `json:"supportedVersions"`
		Capabilities      json.RawMessage `json:"capabilities"`
		Instructions      string          `json:"instructions"`
		Meta              struct {
			ServerInfo struct {
				Name    string `json:"name"`
				Version string `json:"version"`
			} `json:"io.modelcontextprotocol/serverInfo"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(result, &res); err != nil {
		return event.ConnInfo{}, fmt.Errorf("its result is malformed (%v)", err)
	}
	if len(res.SupportedVersions) == 0 {
		return event.ConnInfo{}, errors.New("its result has no supportedVersions")
	}
	return event.ConnInfo{
		SupportedVersions: res.SupportedVersions, Capabilities: res.Capabilities, Instructions: res.Instructions,
		ServerName: res.Meta.ServerInfo.Name, ServerVersion: res.Meta.ServerInfo.Version,
	}, nil
}

func contains(list []string, v string) bool {
	for _, s := range list {
		if s == v {
			return true
		}
	}
	return false
}

func firstModern(list []string) string {
	for _, v := range list {
		if v == wire.VersionModern {
			return v
		}
	}
	return ""
}

func firstLegacy(list []string) string {
	for _, l := range wire.LegacyVersions {
		if contains(list, l) {
			return l
		}
	}
	return ""
}
