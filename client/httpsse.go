package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"inflight/event"
	"inflight/wire"
)

// sseTransport speaks the deprecated HTTP+SSE transport of protocol
// 2024-11-05 (shared/spec/2024-11-05/transports.mdx): one GET opens an SSE
// stream whose first event, `endpoint`, names the URL every client message
// is POSTed to; every server message (responses, progress, the server's own
// requests) comes as a `message` event on that one stream.
//
// So it is stdio over HTTP: one shared stream, nothing per request to
// close, and the cancel is notifications/cancelled POSTed to the endpoint,
// after which the request is settled by the tracker's late window. The
// stream has no resumption (no event IDs in 2024-11-05): when it ends,
// every request in flight is lost, and the connection with them.
type sseTransport struct {
	c   *Client
	url *url.URL // the stream's URL (Config.URL)
	hc  *http.Client
	ctx context.Context // ends when the transport closes
	// stop ends ctx, and with it the stream and every POST.
	stop context.CancelFunc

	mu       sync.Mutex
	endpoint *url.URL // set once the endpoint event was read
	closing  bool
}

// sseStream is an opened GET stream whose endpoint event has been read.
type sseStream struct {
	body   io.ReadCloser
	reader *sseReader
	abort  context.CancelFunc
}

// newSSETransport is the HTTP+SSE transport for Config.URL, sharing the
// Streamable HTTP transport's URL checks and HTTP client (its redirect
// policy: same host only, never a changed method).
func newSSETransport(c *Client) (*sseTransport, error) {
	ht, err := newHTTPTransport(c)
	if err != nil {
		return nil, err
	}
	ht.stop()
	return sseFrom(ht), nil
}

// sseFrom is an HTTP+SSE transport on the URL and HTTP client of a
// Streamable HTTP transport (detection: the server refused Streamable
// HTTP's POST, and its GET may offer the older transport).
func sseFrom(ht *httpTransport) *sseTransport {
	ctx, stop := context.WithCancel(context.Background())
	return &sseTransport{c: ht.c, url: ht.endpoint, hc: ht.hc, ctx: ctx, stop: stop}
}

func (t *sseTransport) start(context.Context) error { return nil }

// open GETs the stream and reads it up to its endpoint event, which it
// resolves against the stream's URL and refuses when it names another
// origin (scheme, host and port). ctx bounds the wait for the endpoint
// (bound says by how much, for the error); the stream itself lives as
// long as the transport.
func (t *sseTransport) open(ctx context.Context, bound string) (*sseStream, error) {
	sctx, abort := context.WithCancel(t.ctx)
	stopWait := context.AfterFunc(ctx, abort)
	waiting := "no response headers from the server"
	fail := func(err error) (*sseStream, error) {
		stopWait()
		abort()
		switch {
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			// Say what it waited for, and how long it was allowed.
			return nil, fmt.Errorf("GET %s: %s within %s (%w)", redactURL(t.url), waiting, bound, ctx.Err())
		case ctx.Err() != nil:
			return nil, fmt.Errorf("GET %s: %s when connecting was cancelled (%w)", redactURL(t.url), waiting, ctx.Err())
		}
		return nil, err
	}
	req, err := http.NewRequestWithContext(sctx, http.MethodGet, t.url.String(), nil)
	if err != nil {
		return fail(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	t.addUserHeaders(req.Header)
	resp, err := t.hc.Do(req)
	if err != nil {
		return fail(fmt.Errorf("GET %s: %w", redactURL(t.url), markUnreachable(sctx, plainErr(err))))
	}
	ct := resp.Header.Get("Content-Type")
	if enc := contentEncoding(resp); enc != "" {
		resp.Body.Close()
		return fail(fmt.Errorf("GET %s: %w", redactURL(t.url), errEncoded(resp.StatusCode, enc)))
	}
	media, _, _ := mime.ParseMediaType(ct)
	if resp.StatusCode != http.StatusOK || media != "text/event-stream" {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		herr := &HTTPStatusError{Status: resp.StatusCode, ContentType: ct, Body: string(body)}
		if resp.StatusCode == http.StatusOK {
			herr.Body = fmt.Sprintf("Content-Type %q, not text/event-stream: %s", ct, herr.describeBody())
		}
		return fail(fmt.Errorf("GET %s: %w", redactURL(t.url), herr))
	}
	t.c.emit(event.Event{Kind: event.StreamOpened, Time: time.Now(), Status: resp.StatusCode, ContentType: ct, Text: "HTTP+SSE stream"})
	waiting = "no endpoint event on the stream"
	sr := newSSEReader(resp.Body, t.c.cfg.MaxMessageBytes)
	for {
		// The endpoint event comes first ("When a client connects, the
		// server MUST send an endpoint event"); comments before it (keep-
		// alives) are skipped by the reader, and sseReader bounds them.
		ev, err := sr.Next()
		if err != nil {
			resp.Body.Close()
			if errors.Is(err, io.EOF) {
				err = errors.New("the stream ended")
			}
			return fail(fmt.Errorf("GET %s: no endpoint event: %w", redactURL(t.url), plainErr(err)))
		}
		if ev.Type != "endpoint" {
			resp.Body.Close()
			return fail(fmt.Errorf("GET %s: the stream's first event is %s, not the endpoint event the HTTP+SSE transport opens with",
				redactURL(t.url), describeEventType(ev.Type)))
		}
		// Resolved against the URL the stream came from (a same-host
		// redirect may have moved it).
		ep, err := t.resolveEndpoint(resp.Request.URL, ev.Data)
		if err != nil {
			resp.Body.Close()
			return fail(err)
		}
		if !stopWait() {
			// ctx ended just now: the stream is aborted.
			resp.Body.Close()
			return fail(ctx.Err())
		}
		t.mu.Lock()
		t.endpoint = ep
		t.mu.Unlock()
		t.c.note("HTTP+SSE endpoint event: messages go to %s", redactURL(ep))
		return &sseStream{body: resp.Body, reader: sr, abort: abort}, nil
	}
}

func describeEventType(typ string) string {
	if typ == "" {
		return "a message event"
	}
	return "an event of type " + quoteServer(typ)
}

// quoteServer quotes a string the server sent for an error message, cut to
// 100 bytes; strconv.Quote escapes every control character.
func quoteServer(s string) string {
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return strconv.QuoteToASCII(s)
}

// resolveEndpoint reads the endpoint event's data: a URI reference
// resolved against the stream's URL, which must stay on the stream's origin
// (a server, or whatever sits in front of it, must not be able to send
// inflight's messages, and the -H headers with them, elsewhere).
func (t *sseTransport) resolveEndpoint(base *url.URL, data []byte) (*url.URL, error) {
	s := strings.TrimSpace(string(data))
	if s == "" {
		return nil, errors.New("the HTTP+SSE endpoint event is empty: the server named no URL to POST messages to")
	}
	ref, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("the HTTP+SSE endpoint event %s is not a URL", quoteServer(s))
	}
	ep := base.ResolveReference(ref)
	if ep.Scheme != base.Scheme || ep.Host != base.Host {
		return nil, fmt.Errorf("the HTTP+SSE endpoint event names another origin (%s://%s, the stream is on %s://%s): refused, inflight POSTs only to the stream's own origin",
			termsafeScheme(ep.Scheme), quoteServer(ep.Host), base.Scheme, base.Host)
	}
	// The user's own credentials in the URL go with the POSTs as with the
	// GET (same origin); the server cannot name others.
	ep.User = t.url.User
	ep.Fragment = ""
	return ep, nil
}

// termsafeScheme is a scheme as the server spelled it, quoted unless it is
// a plain one.
func termsafeScheme(s string) string {
	if s == "http" || s == "https" || s == "" {
		return s
	}
	return quoteServer(s)
}

// startReader reads the opened stream until it ends. Called by Connect
// under the client's lifeMu, so that the goroutine is counted before Close
// can wait for it.
func (t *sseTransport) startReader(st *sseStream) {
	t.c.wg.Add(1)
	go t.read(st)
}

func (t *sseTransport) read(st *sseStream) {
	defer t.c.wg.Done()
	defer st.abort()
	defer st.body.Close()
	var err error
	for {
		var ev sseEvent
		ev, err = st.reader.Next()
		if err != nil {
			break
		}
		at := time.Now()
		switch ev.Type {
		case "", "message":
			if len(bytes.TrimSpace(ev.Data)) == 0 {
				continue
			}
			t.c.receive(ev.Data, 0, at, wire.ID{})
		case "endpoint":
			t.c.emit(event.Event{Kind: event.Note, Time: at,
				Text: "the server sent another endpoint event " + quoteServer(string(ev.Data)) + "; inflight keeps POSTing to the first"})
		default:
			t.c.emit(event.Event{Kind: event.Note, Time: at,
				Text: "ignored an SSE event of type " + quoteServer(ev.Type) + " (HTTP+SSE sends messages as message events)"})
		}
	}
	if t.isClosing() {
		return // Close ends the stream; markDead(nil) says so.
	}
	now := time.Now()
	// The stream is the only way the server's messages come, and HTTP+SSE
	// has no resumption: every request in flight is lost.
	cause := "the server closed the HTTP+SSE stream; requests in flight are lost"
	if !errors.Is(err, io.EOF) {
		cause = fmt.Sprintf("the HTTP+SSE stream broke (%v); requests in flight are lost", plainErr(err))
	}
	t.c.emit(event.Event{Kind: event.StreamClosed, Time: now, Text: "HTTP+SSE stream", Err: errors.New(cause)})
	t.c.markDead(errors.New(cause))
}

func (t *sseTransport) isClosing() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.closing
}

func (t *sseTransport) addUserHeaders(h http.Header) {
	for k, vs := range t.c.cfg.Headers {
		h.Del(k)
		for _, v := range vs {
			h.Add(k, v)
		}
	}
}

// send POSTs one message to the endpoint and waits for the server's 202.
// What it answers comes on the stream. A request is reported before its
// POST, so that its response can never overtake it.
func (t *sseTransport) send(ctx context.Context, out outgoing) error {
	if !out.id.IsZero() {
		t.c.emitSent(out)
	}
	_, err := t.post(ctx, out)
	return err
}

// post POSTs a message to the endpoint. It ends when ctx does, after 30
// seconds, or when the transport closes. It returns the HTTP status; a
// non-2xx status is an *HTTPStatusError.
func (t *sseTransport) post(ctx context.Context, out outgoing) (int, error) {
	t.mu.Lock()
	ep, closing := t.endpoint, t.closing
	t.mu.Unlock()
	switch {
	case closing || isClosed(t.c.dead):
		return 0, ErrClosed
	case ep == nil:
		return 0, ErrNotConnected
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	stop := context.AfterFunc(t.ctx, cancel)
	defer stop()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.String(), bytes.NewReader(out.raw))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if v := out.version; v != "" && v != wire.Version20241105 && out.method != wire.MethodInitialize {
		// Later versions spoken over this transport carry their version as
		// Streamable HTTP does; 2024-11-05 had no such header.
		req.Header.Set("MCP-Protocol-Version", v)
	}
	t.addUserHeaders(req.Header)
	if out.writing != nil {
		out.writing(time.Now())
	}
	resp, err := t.hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("POST %s: %w", describe(out), markUnreachable(ctx, plainErr(err)))
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	drainClose(resp.Body)
	statusEv := event.Event{Kind: event.HTTPStatus, Time: time.Now(), RequestID: out.id, Status: resp.StatusCode,
		ContentType: resp.Header.Get("Content-Type"), Text: fmt.Sprintf("POST %s: %s", describe(out), resp.Status)}
	if out.status != nil {
		out.status(statusEv)
	} else {
		t.c.emit(statusEv)
	}
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, &HTTPStatusError{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Body: string(body)}
	}
	return resp.StatusCode, nil
}

// cancel POSTs notifications/cancelled to the endpoint. There is no stream
// of the request's own to close: what the server still sends for it comes
// on the shared stream, and the tracker judges it and settles the request
// after its late window, as on stdio.
func (t *sseTransport) cancel(id wire.ID, reason string) (event.CancelSignal, error) {
	// As for legacy Streamable HTTP (postCancel).
	return event.SignalNotification, t.c.postCancel(t.ctx, id, reason, t.post)
}

// close ends the stream and every POST. HTTP+SSE has no session to end: the
// server forgets the client when its stream closes.
func (t *sseTransport) close() error {
	t.mu.Lock()
	if t.closing {
		t.mu.Unlock()
		return nil
	}
	t.closing = true
	t.mu.Unlock()
	t.stop()
	if t.c.cfg.HTTPClient == nil {
		t.hc.CloseIdleConnections()
	}
	return nil
}

// connectSSE opens the HTTP+SSE stream and runs the handshake on it: the
// transport is legacy only (the modern era defines no HTTP+SSE binding), and
// it opens with initialize under 2024-11-05, its own version, unless a
// legacy version was forced; the server may answer with any version
// inflight speaks.
func (c *Client) connectSSE(ctx context.Context, t *sseTransport) (event.ConnInfo, error) {
	st, err := t.open(ctx, fmt.Sprintf("the %s allowed for connecting", c.cfg.HandshakeTimeout))
	if err != nil {
		return event.ConnInfo{}, fmt.Errorf("HTTP+SSE: %w", err)
	}
	if err := c.adoptSSE(t, st); err != nil {
		return event.ConnInfo{}, err
	}
	version := wire.Version20241105
	if v := c.cfg.ProtocolVersion; v != "" {
		version = v
		c.note("protocol version %s forced on HTTP+SSE", v)
	}
	return c.initialize(ctx, version)
}

// adoptSSE makes t the client's transport and starts reading its stream,
// unless Close has begun.
func (c *Client) adoptSSE(t *sseTransport, st *sseStream) error {
	c.lifeMu.Lock()
	defer c.lifeMu.Unlock()
	if c.closing {
		st.body.Close()
		st.abort()
		t.stop()
		return ErrClosed
	}
	c.t = t
	c.kind = event.TransportSSE
	c.mu.Lock()
	c.info.Transport = event.TransportSSE
	c.mu.Unlock()
	t.startReader(st)
	return nil
}

// mayBeSSE reports whether a failed Streamable HTTP connection may be a
// server of the older HTTP+SSE transport: its POST was answered with a 4xx
// other than a refusal (2025-11-25 transports, backwards compatibility:
// "If it fails with an HTTP 4xx status code (e.g., 405 Method Not Allowed
// or 404 Not Found)"), no modern version was forced (HTTP+SSE has no
// modern binding), and detection was not turned off.
func (c *Client) mayBeSSE(err error) bool {
	if c.kind != event.TransportHTTP || c.cfg.NoSSEFallback || wire.IsModernVersion(c.cfg.ProtocolVersion) {
		return false
	}
	var se *HTTPStatusError
	return errors.As(err, &se) && se.Status >= 400 && se.Status < 500 &&
		se.Status != http.StatusUnauthorized && se.Status != http.StatusForbidden
}

// sseDetectWait bounds how long detection waits for a stream's endpoint
// event (a server's answer to the GET, then the event).
const sseDetectWait = 5 * time.Second

// detectSSE follows the backwards-compatibility steps: after the POST was
// refused with a 4xx, GET the URL; a text/event-stream that opens with an
// endpoint event is an HTTP+SSE server, spoken to from then on. Anything
// else leaves postErr, the Streamable HTTP failure, as the answer, with
// what the GET found.
func (c *Client) detectSSE(ctx context.Context, postErr error) (event.ConnInfo, error) {
	ht, ok := c.t.(*httpTransport)
	if !ok {
		return event.ConnInfo{}, postErr
	}
	t := sseFrom(ht)
	// Close, which closes the Streamable HTTP transport until the switch,
	// must end the GET too.
	stopOnClose := context.AfterFunc(ht.ctx, t.stop)
	// A server that opens the stream and names no endpoint is not waited
	// for the whole handshake: this is a guess that may be wrong.
	dctx, cancel := context.WithTimeout(ctx, sseDetectWait)
	st, err := t.open(dctx, fmt.Sprintf("the %s a guess at HTTP+SSE is given", sseDetectWait))
	cancel()
	stopOnClose()
	if err != nil {
		t.stop()
		return event.ConnInfo{}, fmt.Errorf("%w (nor is it an HTTP+SSE server: %v)", postErr, err)
	}
	// The Streamable HTTP attempt is over: its requests have failed, and
	// closing it waits for their goroutines.
	_ = ht.close()
	if err := c.adoptSSE(t, st); err != nil {
		return event.ConnInfo{}, err
	}
	c.note("Streamable HTTP was refused (%v), and a GET opened an HTTP+SSE stream: speaking the deprecated HTTP+SSE transport (2024-11-05)", postErr)
	version := wire.Version20241105
	if v := c.cfg.ProtocolVersion; v != "" {
		version = v
	}
	return c.initialize(ctx, version)
}

// legacyVersions are the handshake versions the connection can speak: on
// HTTP+SSE also 2024-11-05, the transport's own version (its HTTP transport
// is this one, so it is spoken nowhere else).
func (c *Client) legacyVersions() []string {
	if c.kind == event.TransportSSE || c.cfg.SSE {
		return append(append([]string(nil), wire.LegacyVersions...), wire.Version20241105)
	}
	return wire.LegacyVersions
}

func (c *Client) speaksLegacy(v string) bool {
	for _, l := range c.legacyVersions() {
		if l == v {
			return true
		}
	}
	return false
}
