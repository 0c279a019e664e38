package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"inflight/event"
	"inflight/oauth"
	"inflight/session"
	"inflight/wire"
)

// httpTransport speaks Streamable HTTP: every message is its own POST, and a
// request's reply is a JSON body or an SSE stream scoped to that request.
type httpTransport struct {
	c        *Client
	endpoint *url.URL
	hc       *http.Client
	ctx      context.Context // ends when the transport closes
	stop     context.CancelFunc

	mu        sync.Mutex
	streams   map[wire.ID]*httpStream
	sessionID string
	closing   bool
	getOpen   bool
	getGen    int // numbers GET loops, so an ending one never clears a newer one's getOpen
	renewing  bool
	// renewed is closed when the renewal in progress ends (nil when none
	// is), for a GET loop waiting for the new session.
	renewed chan struct{}

	// runs counts the request goroutines (run), so that close can wait for
	// them to report how their streams ended before the transport is
	// reported closed.
	runs sync.WaitGroup
}

// httpStream is one request's POST and its response stream.
type httpStream struct {
	id     wire.ID
	modern bool
	abort  context.CancelFunc
	// cancelled: the request was cancelled (by Cancel, or, for a modern
	// request, by Close); closedByClient: inflight closed the stream (the
	// modern cancel, or the end of the legacy late window).
	cancelled      atomic.Bool
	closedByClient atomic.Bool
	lateTimer      atomic.Pointer[time.Timer]
	// headers: the server's response headers arrived (see waitingFor).
	headers atomic.Bool
	// lateWindow is how long the stream is read after a legacy cancel (the
	// request's, see Request.LateWindow).
	lateWindow time.Duration
	// resumable is what DropStream needs of a legacy SSE stream: the
	// connection now read and the last event ID seen (http_drop.go).
	resumable
}

// closeAfter closes the stream from the client's side once d has passed:
// the end of a late window (after a legacy cancel, or after the response
// on a stream the server keeps open). A window already running is kept.
// run stops the timer when the stream ends first.
func (st *httpStream) closeAfter(d time.Duration) {
	tm := time.AfterFunc(d, func() {
		st.closedByClient.Store(true)
		st.abort()
	})
	if !st.lateTimer.CompareAndSwap(nil, tm) {
		tm.Stop()
	}
}

func newHTTPTransport(c *Client) (*httpTransport, error) {
	u, err := url.Parse(c.cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("server URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("server URL %q: scheme must be http or https", redactURL(u))
	}
	if u.Host == "" {
		return nil, fmt.Errorf("server URL %q has no host", redactURL(u))
	}
	var hc http.Client
	if c.cfg.HTTPClient != nil {
		hc = *c.cfg.HTTPClient
	} else {
		hc.Transport = &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout: 10 * time.Second,
			// A debugger shows the bytes the server sent; it also must not
			// inflate a compressed body of unbounded size.
			DisableCompression:  true,
			MaxIdleConnsPerHost: 32,
			IdleConnTimeout:     90 * time.Second,
		}
	}
	origin, scheme := u.Host, u.Scheme
	hc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if req.URL.Host != origin {
			return &redirectError{fmt.Sprintf("redirect to another host (%s) refused", req.URL.Host)}
		}
		if req.URL.Scheme != scheme {
			// https → http would send credentials (a bearer token added
			// below the http.Client) in clear text. Found in review.
			return &redirectError{fmt.Sprintf("redirect from %s to %s refused", scheme, req.URL.Scheme)}
		}
		if req.Method != via[0].Method {
			// net/http turns a POST into a bodiless GET on 301, 302 and 303;
			// that would no longer carry the message at all.
			return &redirectError{fmt.Sprintf("redirect (HTTP %d) would turn %s into %s; refused", req.Response.StatusCode, via[0].Method, req.Method)}
		}
		if len(via) >= 5 {
			return &redirectError{"stopped after 5 redirects"}
		}
		return nil
	}
	if err := c.withAuth(&hc, u.String()); err != nil {
		return nil, err
	}
	if c.cfg.RecordHTTP {
		// Above the authorization: what is recorded is what inflight asked
		// for, never OAuth's own requests (a token exchange's body is all
		// secrets).
		hc.Transport = recordHTTP(c, hc.Transport)
	}
	ctx, stop := context.WithCancel(context.Background())
	return &httpTransport{c: c, endpoint: u, hc: &hc, ctx: ctx, stop: stop, streams: map[wire.ID]*httpStream{}}, nil
}

// loginHint: for a 401 or 403 when no authorization is configured, what
// to run.
func (t *httpTransport) loginHint(resp *http.Response) string {
	if t.c.cfg.Auth != nil || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) {
		return ""
	}
	return loginHint(resp, t.endpoint.String())
}

// redirectError is a redirect inflight refused to follow. The request was
// answered (with a redirect), not lost.
type redirectError struct{ msg string }

func (e *redirectError) Error() string { return e.msg }

// redactURL drops credentials and the query from a URL for display.
func redactURL(u *url.URL) string {
	cp := *u
	cp.User = nil
	if cp.RawQuery != "" {
		cp.RawQuery = "…"
	}
	return cp.String()
}

// plainErr strips net/http's "Post <url>:" wrapper, whose URL may carry a
// secret, keeping the cause.
func plainErr(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func (t *httpTransport) start(context.Context) error { return nil }

func (t *httpTransport) session() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sessionID
}

// newPost builds the POST for one message with every header the era asks for.
func (t *httpTransport) newPost(ctx context.Context, out outgoing) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.endpoint.String(), bytes.NewReader(out.raw))
	if err != nil {
		return nil, err
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	if out.version != "" && out.method != wire.MethodInitialize {
		h.Set("MCP-Protocol-Version", out.version)
	}
	if out.modern {
		if out.method != "" {
			h.Set("Mcp-Method", out.method)
		}
		if out.name != "" {
			h.Set("Mcp-Name", headerValue(out.name))
		}
		if out.method == wire.MethodToolsCall {
			for k, v := range t.c.paramHeadersFor(out.name, out.params) {
				h.Set(k, v)
			}
		}
	} else if sid := t.session(); sid != "" {
		h.Set("Mcp-Session-Id", sid)
	}
	t.addUserHeaders(h)
	return req, nil
}

func (t *httpTransport) addUserHeaders(h http.Header) {
	for k, vs := range t.c.cfg.Headers {
		h.Del(k)
		for _, v := range vs {
			h.Add(k, v)
		}
	}
}

func (t *httpTransport) send(ctx context.Context, out outgoing) error {
	if out.id.IsZero() {
		_, err := t.postOneWay(ctx, out)
		return err
	}
	t.mu.Lock()
	if t.closing {
		t.mu.Unlock()
		return ErrClosed
	}
	sctx, abort := context.WithCancel(t.ctx)
	// The client's own requests (the handshake, its pings) have no
	// flight, and the default window.
	st := &httpStream{id: out.id, modern: out.modern, abort: abort, lateWindow: session.DefaultLateWindow}
	if out.flight != nil {
		st.lateWindow = out.flight.lateWindow
	}
	t.streams[out.id] = st
	// Counted under the lock that close takes to set closing: either close
	// sees this run and waits for it, or this send sees closing. (Counted
	// after the unlock, the Add could come after Close's wg.Wait, and run
	// would emit on a closed channel.)
	t.c.wg.Add(1)
	t.runs.Add(1)
	t.mu.Unlock()
	t.c.emitSent(out)
	go t.run(sctx, out, st)
	return nil
}

// postOneWay POSTs a notification or a response and expects 202 Accepted.
// It ends when ctx does, after 30 seconds, or when the transport closes,
// so that Close never waits long for a caller's POST.
func (t *httpTransport) postOneWay(ctx context.Context, out outgoing) (status int, err error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	stop := context.AfterFunc(t.ctx, cancel)
	defer stop()
	req, err := t.newPost(ctx, out)
	if err != nil {
		return 0, err
	}
	hadSession := req.Header.Get("Mcp-Session-Id") != ""
	resp, err := t.hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("POST %s: %w", describe(out), plainErr(err))
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	// Read to its end (bounded) before closing, so that the connection goes
	// back to the pool: every answer to a server's request is a POST of its
	// own, and a flood of them must not open a connection each.
	drainClose(resp.Body)
	statusEv := event.Event{Kind: event.HTTPStatus, Time: time.Now(), Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"),
		Text: fmt.Sprintf("POST %s: %s", describe(out), resp.Status)}
	if out.status != nil {
		out.status(statusEv)
	} else {
		t.c.emit(statusEv)
	}
	if resp.StatusCode == http.StatusNotFound && hadSession {
		t.renewSession(req.Header.Get("Mcp-Session-Id"))
	}
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, &HTTPStatusError{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Body: string(body)}
	}
	return resp.StatusCode, nil
}

// drainClose reads what is left of a body, at most 64 KiB, and closes it:
// a body read to its end lets net/http reuse the connection.
func drainClose(body io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, 64<<10))
	_ = body.Close()
}

func describe(out outgoing) string {
	if out.method != "" {
		return out.method
	}
	return "response"
}

// run performs one request's POST and reads its reply to the end.
//
// When the transport closes, a legacy request still in flight ends without
// a word from run: the event.TransportClosed that follows says the
// connection is lost, which is what happened to it (closing a legacy stream
// is no cancel). A modern one was cancelled by close and reports its stream
// closed by the client.
func (t *httpTransport) run(ctx context.Context, out outgoing, st *httpStream) {
	defer t.c.wg.Done()
	defer t.runs.Done()
	defer t.endRun(out, st)
	resp, sentSession, ok := t.post(ctx, out, st)
	if !ok {
		return
	}
	defer resp.Body.Close()
	if out.method == wire.MethodInitialize && out.internal && !t.adoptSession(out.id, resp) {
		return
	}
	t.reply(ctx, out, st, resp, sentSession)
}

// endRun forgets the request's stream once run is done with it.
func (t *httpTransport) endRun(out outgoing, st *httpStream) {
	if tm := st.lateTimer.Load(); tm != nil {
		tm.Stop()
	}
	st.abort()
	t.mu.Lock()
	if t.streams[out.id] == st {
		delete(t.streams, out.id)
	}
	t.mu.Unlock()
	t.c.endFlight(out.id, out.flight)
}

// post sends the request's POST; !ok when there is no reply to read (the
// failure is said). sentSession is the Mcp-Session-Id it carried.
func (t *httpTransport) post(ctx context.Context, out outgoing, st *httpStream) (resp *http.Response, sentSession string, ok bool) {
	id := out.id
	req, err := t.newPost(withRequest(ctx, out), out)
	if err != nil {
		t.c.failCall(id, err, true)
		return nil, "", false
	}
	sentSession = req.Header.Get("Mcp-Session-Id")
	if out.writing != nil {
		out.writing(time.Now())
	}
	resp, err = t.hc.Do(req)
	st.headers.Store(err == nil)
	if err == nil {
		return resp, sentSession, true
	}
	switch {
	case st.closedByClient.Load():
		t.c.emit(event.Event{Kind: event.StreamClosed, Time: time.Now(), RequestID: id, ByClient: true,
			Text: "request aborted before the server answered"})
	case t.isClosing() && !out.internal:
	default:
		var ae *oauth.Error
		if errors.As(err, &ae) {
			// Refused for want of an authorization: answered, not lost.
			t.c.failCall(id, fmt.Errorf("POST %s: %w", out.method, ae), false)
			break
		}
		var re *redirectError
		t.c.failCall(id, fmt.Errorf("POST %s: %w", out.method, markUnreachable(ctx, plainErr(err))), !errors.As(err, &re))
	}
	return nil, "", false
}

// adoptSession takes the session ID the answer to the client's own
// initialize (id) opens, if any; false when it is refused (the failure is
// said). One a user sends by hand (the composer accepts any method) gets
// its answer shown, but a session ID in it must not replace the
// connection's: only the client's own initialize comes here.
func (t *httpTransport) adoptSession(id wire.ID, resp *http.Response) bool {
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		return true
	}
	if err := checkSessionID(sid); err != nil {
		// Sent back, it would carry the server's bytes into every request
		// of ours; and a session inflight cannot name is no session to
		// speak in (issue 14, item 12).
		resp.Body.Close()
		t.c.emit(event.Event{Kind: event.HTTPStatus, Time: time.Now(), RequestID: id, Status: resp.StatusCode,
			ContentType: resp.Header.Get("Content-Type"), Text: err.Error()})
		t.c.failCall(id, err, false)
		return false
	}
	t.mu.Lock()
	t.sessionID = sid
	t.mu.Unlock()
	t.c.mu.Lock()
	t.c.info.SessionID = sid
	t.c.mu.Unlock()
	return true
}

// reply reads the server's reply to the request, by its status and
// Content-Type: a JSON body or an SSE stream answers it; anything else
// fails it, said as the HTTP status it was.
func (t *httpTransport) reply(ctx context.Context, out outgoing, st *httpStream, resp *http.Response, sentSession string) {
	id := out.id
	ct := resp.Header.Get("Content-Type")
	media, _, _ := mime.ParseMediaType(ct)
	now := time.Now()
	switch {
	case resp.StatusCode == http.StatusNotFound && sentSession != "":
		t.c.emit(event.Event{Kind: event.HTTPStatus, Time: now, RequestID: id, Status: resp.StatusCode, ContentType: ct,
			Text: "404: the server ended the session"})
		t.c.failCall(id, errors.New("the server ended the session (HTTP 404); inflight is starting a new session, re-issue the request"), true)
		t.renewSession(sentSession)
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		t.c.emit(event.Event{Kind: event.HTTPStatus, Time: now, RequestID: id, Status: resp.StatusCode, Text: resp.Status})
		t.c.failCall(id, &HTTPStatusError{Status: resp.StatusCode, Body: "redirect to " + resp.Header.Get("Location") + " not followed"}, false)
	case contentEncoding(resp) != "":
		enc := contentEncoding(resp)
		t.c.emit(event.Event{Kind: event.HTTPStatus, Time: now, RequestID: id, Status: resp.StatusCode, ContentType: ct,
			Text: resp.Status + ", Content-Encoding " + enc})
		t.c.failCall(id, errEncoded(resp.StatusCode, enc), false)
	case resp.StatusCode >= 400:
		t.errorStatus(id, resp, media, now)
	case resp.StatusCode == http.StatusAccepted:
		t.c.emit(event.Event{Kind: event.HTTPStatus, Time: now, RequestID: id, Status: resp.StatusCode, Text: resp.Status})
		t.c.failCall(id, errors.New("HTTP 202 Accepted for a request: the server will send no response"), true)
	case media == "application/json":
		st.jsonReply.Store(true)
		t.c.emit(event.Event{Kind: event.StreamOpened, Time: now, RequestID: id, Status: resp.StatusCode, ContentType: ct})
		t.readJSON(out, st, resp.Body)
	case media == "text/event-stream":
		t.c.emit(event.Event{Kind: event.StreamOpened, Time: now, RequestID: id, Status: resp.StatusCode, ContentType: ct})
		t.readSSE(ctx, out, st, resp.Body)
	default:
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		t.c.emit(event.Event{Kind: event.HTTPStatus, Time: now, RequestID: id, Status: resp.StatusCode, ContentType: ct, Text: resp.Status})
		what := strings.Join(strings.Fields(string(body)), " ")
		if media == "text/html" {
			what = (&HTTPStatusError{ContentType: ct, Body: string(body)}).describeBody()
		}
		t.c.failCall(id, &HTTPStatusError{Status: resp.StatusCode,
			Body: fmt.Sprintf("unexpected Content-Type %q (want application/json or text/event-stream): %s", ct, what)}, true)
	}
}

// errorStatus takes a 4xx or 5xx reply to request id: a JSON-RPC error in
// its body answers the request; otherwise the status fails it.
func (t *httpTransport) errorStatus(id wire.ID, resp *http.Response, media string, now time.Time) {
	ct := resp.Header.Get("Content-Type")
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	t.c.emit(event.Event{Kind: event.HTTPStatus, Time: now, RequestID: id, Status: resp.StatusCode, ContentType: ct, Text: resp.Status})
	if media == "application/json" {
		msg, err := wire.Decode(body)
		switch {
		case err != nil || !msg.IsResponse() || (msg.ID != id && msg.ID != wire.NullID):
		case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
			// Refused before the protocol: the status is the news (and no
			// era signal), the JSON-RPC error only its wording.
			text := string(body)
			if msg.Error != nil {
				text = msg.Error.Message
			}
			t.c.failCall(id, &HTTPStatusError{Status: resp.StatusCode, Body: text + t.loginHint(resp)}, false)
			return
		default:
			// A JSON-RPC error in the body answers the request.
			t.c.receive(body, 0, now, id)
			return
		}
	}
	t.c.failCall(id, &HTTPStatusError{Status: resp.StatusCode, ContentType: ct, Body: string(body), Hint: t.loginHint(resp)}, false)
}

// checkSessionID refuses an Mcp-Session-Id that is not visible ASCII:
// "The session ID MUST only contain visible ASCII characters (ranging from
// 0x21 to 0x7E)" (2025-11-25 transports). The error quotes it escaped and
// cut, since it is the server's.
func checkSessionID(sid string) error {
	for i := 0; i < len(sid); i++ {
		if b := sid[i]; b < 0x21 || b > 0x7e {
			shown := sid
			if len(shown) > 64 {
				shown = shown[:64] + "…"
			}
			return fmt.Errorf("the server's Mcp-Session-Id %s is not visible ASCII (byte 0x%02x at %d; the session ID must be 0x21 to 0x7E only): inflight will not send it back, so there is no session to speak in",
				strconv.QuoteToASCII(shown), b, i)
		}
	}
	return nil
}

// contentEncoding is a response's Content-Encoding when the body is really
// encoded ("" for none or identity).
func contentEncoding(resp *http.Response) string {
	enc := strings.TrimSpace(resp.Header.Get("Content-Encoding"))
	if strings.EqualFold(enc, "identity") {
		return ""
	}
	return enc
}

// errEncoded reports a body sent with a Content-Encoding inflight never
// accepted. It sends no Accept-Encoding (and turns off the transport's
// transparent gzip) because it shows the bytes a server sent; inflating a
// body nobody asked to be compressed would also let a small one grow
// without bound — a gzip bomb. So the body is not read at all.
func errEncoded(status int, enc string) error {
	return fmt.Errorf("HTTP %d with Content-Encoding %q, which inflight never asked for (it sends no Accept-Encoding); the body was not read, since a compressed body can inflate without bound",
		status, enc)
}

// readJSON reads a single-JSON reply.
func (t *httpTransport) readJSON(out outgoing, st *httpStream, body io.Reader) {
	max := t.c.cfg.MaxMessageBytes
	data, err := io.ReadAll(io.LimitReader(body, int64(max)+1))
	now := time.Now()
	if err != nil {
		if st.closedByClient.Load() {
			// Our own abort (cancel or late window) cut the body: what was
			// read is a fragment, not a message.
			t.c.emit(event.Event{Kind: event.StreamClosed, Time: now, RequestID: out.id, ByClient: true})
			return
		}
		if t.isClosing() && !out.internal {
			return // lost with the connection; see run
		}
		t.c.emit(event.Event{Kind: event.StreamClosed, Time: now, RequestID: out.id, Err: err})
		if st.cancelled.Load() {
			return
		}
		t.c.failCall(out.id, fmt.Errorf("reading the response body: %w", plainErr(err)), true)
		return
	}
	if len(data) > max {
		t.c.emit(event.Event{Kind: event.Malformed, Time: now, RequestID: out.id, Raw: keepRaw(data), Truncated: len(data) - event.MaxRawKept,
			Err: fmt.Errorf("response body exceeds the %d-byte message limit", max)})
		t.c.emit(event.Event{Kind: event.StreamClosed, Time: now, RequestID: out.id})
		t.c.failCall(out.id, fmt.Errorf("response body exceeds the %d-byte message limit", max), true)
		return
	}
	answered := t.c.receive(data, 0, now, out.id)
	t.c.emit(event.Event{Kind: event.StreamClosed, Time: time.Now(), RequestID: out.id, ByClient: st.closedByClient.Load()})
	if !answered && !st.cancelled.Load() {
		t.c.failCall(out.id, errors.New("the HTTP response body did not answer the request"), true)
	}
}

// readSSE reads a request's SSE stream until it ends, resuming a broken
// legacy stream with Last-Event-ID when the server made that possible.
func (t *httpTransport) readSSE(ctx context.Context, out outgoing, st *httpStream, body io.ReadCloser) {
	id := out.id
	answered := false
	var lastID string
	var retry time.Duration
	// fruitless counts resumes in a row that brought no event: a server
	// that closes the connection after every event to make the client poll
	// (as the legacy transport allows) is making progress, not failing.
	fruitless := 0
	for {
		st.reading(body)
		sr, streamErr := t.readStream(body, lastID, id, st.sawEventID, func() {
			if !answered {
				answered = true
				// The server SHOULD end the stream after the response; if it
				// does not, stop listening once the late window has passed.
				st.closeAfter(st.lateWindow)
			}
		})
		st.reading(nil)
		body.Close()
		dropped := st.dropped.Swap(false)
		if dropped && !answered {
			streamErr = errDropped
		}
		// The reconnection time, like the last event ID, lasts across
		// reconnections until the server sends a new one.
		if sr.LastID != lastID {
			fruitless = 0
		} else {
			fruitless++
		}
		lastID = sr.LastID
		if sr.Retry > 0 {
			retry = sr.Retry
		}
		now := time.Now()
		byClient := st.closedByClient.Load()
		if byClient && streamErr != nil && ctx.Err() != nil {
			streamErr = nil // our own abort, not a broken stream
		}
		if t.sseOver(st, id, now, answered, byClient, lastID, fruitless, streamErr) {
			return
		}
		wait := retry
		if wait <= 0 {
			// The server asked for no wait: a second for a stream that
			// broke, none for one inflight dropped on purpose.
			wait = time.Second
			if dropped {
				wait = 0
			}
		}
		var ok bool
		if body, ok = t.resumeSSE(ctx, st, id, now, lastID, wait, streamErr); !ok {
			return
		}
	}
}

// sseOver reports whether request id's stream, just ended (streamErr: how
// it broke, now), is over for good — answered, closed by the client, lost with
// the connection, or not resumable — and says so.
func (t *httpTransport) sseOver(st *httpStream, id wire.ID, now time.Time, answered, byClient bool, lastID string, fruitless int, streamErr error) bool {
	switch {
	case !byClient && t.isClosing():
		return true // lost with the connection; see run
	case answered || byClient || st.cancelled.Load():
		t.c.emit(event.Event{Kind: event.StreamClosed, Time: now, RequestID: id, ByClient: byClient, Err: streamErr})
		return true
	case st.modern:
		cause := "the response stream closed before the response; modern streams cannot be resumed, re-issue the request"
		if streamErr != nil {
			cause = fmt.Sprintf("the response stream broke before the response (%v); modern streams cannot be resumed, re-issue the request", plainErr(streamErr))
		}
		t.c.emit(event.Event{Kind: event.StreamClosed, Time: now, RequestID: id, Err: errors.New(cause)})
		t.c.failCall(id, errors.New(cause), true)
		return true
	case lastID == "" || fruitless > 5:
		cause := "the response stream closed before the response and the server gave no event ID to resume from"
		if lastID != "" {
			cause = "the response stream kept breaking without delivering anything; gave up after 5 resumes"
		}
		if streamErr != nil {
			cause += fmt.Sprintf(" (%v)", plainErr(streamErr))
		}
		t.c.emit(event.Event{Kind: event.StreamClosed, Time: now, RequestID: id, Err: errors.New(cause)})
		t.c.failCall(id, errors.New(cause), true)
		return true
	}
	return false
}

// resumeSSE resumes request id's broken legacy stream: it waits as the
// server asked (retry:), then GETs with Last-Event-ID lastID. !ok when
// the stream is over instead (said).
func (t *httpTransport) resumeSSE(ctx context.Context, st *httpStream, id wire.ID, now time.Time, lastID string, retry time.Duration, streamErr error) (body io.ReadCloser, ok bool) {
	t.c.emit(event.Event{Kind: event.StreamClosed, Time: now, RequestID: id, Err: streamErr,
		Text: fmt.Sprintf("stream broke; resuming in %s with Last-Event-ID %q", retry, lastID)})
	select {
	case <-time.After(retry):
	case <-ctx.Done():
		if !st.closedByClient.Load() && t.isClosing() {
			return nil, false // lost with the connection; see run
		}
		t.c.emit(event.Event{Kind: event.StreamClosed, Time: time.Now(), RequestID: id, ByClient: st.closedByClient.Load()})
		return nil, false
	}
	resp, err := t.getResuming(ctx, st, id, lastID)
	if err != nil {
		if !st.closedByClient.Load() && t.isClosing() {
			return nil, false
		}
		if st.closedByClient.Load() || st.cancelled.Load() {
			t.c.emit(event.Event{Kind: event.StreamClosed, Time: time.Now(), RequestID: id, ByClient: st.closedByClient.Load()})
			return nil, false
		}
		t.c.emit(event.Event{Kind: event.StreamClosed, Time: time.Now(), RequestID: id, Err: err})
		t.c.failCall(id, fmt.Errorf("resuming the response stream: %w", err), true)
		return nil, false
	}
	t.c.emit(event.Event{Kind: event.StreamOpened, Time: time.Now(), RequestID: id, Status: resp.StatusCode,
		ContentType: resp.Header.Get("Content-Type"), Text: "resumed with Last-Event-ID " + lastID, Resumed: true})
	return resp.Body, true
}

// resumeConflictWaits are the waits before each new try of a resuming GET
// the server refused with 409 Conflict: a server that has not yet seen the
// old connection go (go-sdk says "stream ID conflicts with ongoing
// stream") takes the same GET a moment later. 1.55 s in all.
var resumeConflictWaits = []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond}

// getResuming is the GET that resumes request id's stream after lastID,
// tried again (and said) while the server answers 409 Conflict.
func (t *httpTransport) getResuming(ctx context.Context, st *httpStream, id wire.ID, lastID string) (*http.Response, error) {
	for try := 0; ; try++ {
		resp, _, err := t.get(ctx, lastID)
		var se *HTTPStatusError
		if err == nil || !errors.As(err, &se) || se.Status != http.StatusConflict || try == len(resumeConflictWaits) ||
			st.closedByClient.Load() || st.cancelled.Load() {
			return resp, err
		}
		wait := resumeConflictWaits[try]
		t.c.emit(event.Event{Kind: event.Note, Time: time.Now(), RequestID: id,
			Text: fmt.Sprintf("the resuming GET was refused (%s); asking again in %s", plainErr(err), wait)})
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// readStream is the one loop that reads an SSE connection, a request's
// response stream or the legacy GET stream alike: every event's data goes
// to receive until the connection ends, and the reader is returned for the
// last event ID and retry: it leaves, with how the connection ended (nil
// at a clean end). lastID is the ID the connection resumed after. owner is
// the request whose stream it is (zero for the GET stream); seen, when set,
// is told the last event ID as each event is dispatched, before it is
// handed on; onAnswer, when set, is called for each message that answered
// it.
func (t *httpTransport) readStream(body io.Reader, lastID string, owner wire.ID, seen func(string), onAnswer func()) (*sseReader, error) {
	sr := newSSEReader(body, t.c.cfg.MaxMessageBytes)
	sr.resumeFrom(lastID)
	sr.dispatched = seen
	for {
		ev, err := sr.Next()
		if errors.Is(err, io.EOF) {
			return sr, nil
		}
		if err != nil {
			return sr, err
		}
		if len(bytes.TrimSpace(ev.Data)) == 0 {
			continue // a priming event: an ID to resume from, no message
		}
		if t.c.receive(ev.Data, 0, time.Now(), owner) && onAnswer != nil {
			onAnswer()
		}
	}
}

// get opens a legacy GET stream, optionally resuming after lastID. It
// returns the session ID the GET carried ("" for none): a 404 speaks of
// that session, which may no longer be the current one by the time it
// arrives.
func (t *httpTransport) get(ctx context.Context, lastID string) (resp *http.Response, sid string, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.endpoint.String(), nil)
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Accept", "text/event-stream")
	if v := t.c.Info().ProtocolVersion; v != "" {
		req.Header.Set("MCP-Protocol-Version", v)
	}
	sid = t.session()
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	t.addUserHeaders(req.Header)
	resp, err = t.hc.Do(req)
	if err != nil {
		return nil, sid, markUnreachable(ctx, plainErr(err))
	}
	if enc := contentEncoding(resp); enc != "" {
		resp.Body.Close()
		return nil, sid, errEncoded(resp.StatusCode, enc)
	}
	media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode != http.StatusOK || media != "text/event-stream" {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		return nil, sid, &HTTPStatusError{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Body: string(body)}
	}
	return resp, sid, nil
}

// getOpenWait bounds how long opening the legacy GET stream may hold up
// Connect (a server may be slow to answer the GET, or never answer it).
const getOpenWait = 5 * time.Second

// openGetStream starts listening on the legacy GET stream for messages the
// server sends outside any request, and returns once the server has
// answered the first GET (the stream is open, or refused, or it failed),
// or ctx ends, or getOpenWait has passed. Connecting ends there, so that
// the first request never races the GET: a server that closes a request's
// stream at once and expects the client to resume it over GET with
// Last-Event-ID cannot tell the first GET from a resumption if they cross
// (issue 14, item 13).
func (t *httpTransport) openGetStream(ctx context.Context) {
	t.mu.Lock()
	if t.getOpen || t.closing {
		t.mu.Unlock()
		return
	}
	t.getOpen = true
	t.getGen++
	gen := t.getGen
	t.c.wg.Add(1)
	t.mu.Unlock()
	answered := make(chan struct{})
	go t.getLoop(gen, answered)
	bound := time.NewTimer(getOpenWait)
	defer bound.Stop()
	select {
	case <-answered:
	case <-ctx.Done():
	case <-bound.C:
	}
}

func (t *httpTransport) getLoop(gen int, answered chan struct{}) {
	var answeredOnce sync.Once
	firstAnswer := func() { answeredOnce.Do(func() { close(answered) }) }
	defer firstAnswer()
	defer t.c.wg.Done()
	defer func() {
		t.mu.Lock()
		if t.getGen == gen {
			t.getOpen = false
		}
		t.mu.Unlock()
	}()
	lastID := ""
	retry := time.Second
	failures := 0
	for t.ctx.Err() == nil {
		resp, sentSID, err := t.get(t.ctx, lastID)
		if err != nil {
			firstAnswer()
			if t.ctx.Err() != nil {
				return
			}
			var se *HTTPStatusError
			if errors.As(err, &se) && se.Status == http.StatusNotFound && (sentSID != "" || t.isRenewing()) {
				// The 404 speaks of the session the GET carried, which may
				// be over already: renewing is for that session only (a
				// no-op when a newer one began), and a GET sent while a
				// renewal was under way carried none. Either way this loop
				// goes on in the session that follows.
				if sentSID != "" && sentSID == t.session() {
					t.c.note("GET stream: HTTP 404, the server ended the session")
					t.renewSession(sentSID)
				}
				if !t.awaitSession(sentSID) {
					return
				}
				lastID = "" // event IDs belong to the old session's stream
				continue
			}
			if errors.As(err, &se) && (se.Status == http.StatusMethodNotAllowed || se.Status == http.StatusNotFound) {
				t.c.note("the server offers no GET stream (HTTP %d)", se.Status)
				return
			}
			failures++
			if failures > 5 {
				t.c.note("GET stream: giving up after %d failures: %v", failures-1, err)
				return
			}
			t.c.note("GET stream: %v; retrying", err)
			if !sleepCtx(t.ctx, time.Duration(failures)*time.Second) {
				return
			}
			continue
		}
		failures = 0
		t.c.emit(event.Event{Kind: event.StreamOpened, Time: time.Now(), Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Text: "GET stream"})
		firstAnswer()
		sr, streamErr := t.readStream(resp.Body, lastID, wire.ID{}, nil, nil)
		resp.Body.Close()
		if t.ctx.Err() != nil {
			return
		}
		t.c.emit(event.Event{Kind: event.StreamClosed, Time: time.Now(), Err: streamErr, Text: "GET stream"})
		lastID = sr.LastID
		if sr.Retry > 0 {
			retry = sr.Retry
		}
		if !sleepCtx(t.ctx, retry) {
			return
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// isRenewing reports whether a new session is being started.
func (t *httpTransport) isRenewing() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.renewing
}

// awaitSession waits until there is a session other than old (true), or
// until none can come: the renewal failed or was never started, or the
// transport closed (false).
func (t *httpTransport) awaitSession(old string) bool {
	for {
		t.mu.Lock()
		sid, renewed := t.sessionID, t.renewed
		t.mu.Unlock()
		switch {
		case sid != "" && sid != old:
			return true
		case renewed == nil:
			return false
		}
		select {
		case <-renewed:
		case <-t.ctx.Done():
			return false
		}
	}
}

// renewSession starts a new legacy session after the server ended the old
// one (404), as the 2025-11-25 transport requires.
//
// Several requests may see the same 404; only the first starts a session.
//
// old is the session the 404 answered: a 404 that arrives after a new
// session began says nothing about the new one.
func (t *httpTransport) renewSession(old string) {
	t.mu.Lock()
	if t.closing || t.renewing || old == "" || t.sessionID != old {
		t.mu.Unlock()
		return
	}
	t.renewing = true
	t.renewed = make(chan struct{})
	t.sessionID = ""
	// Counted under the lock that close takes to set closing, for the
	// reason given in send: a caller's POST (a legacy cancel) can get here.
	t.c.wg.Add(1)
	t.mu.Unlock()
	t.c.mu.Lock()
	t.c.info.SessionID = ""
	t.c.mu.Unlock()
	version := t.c.Info().ProtocolVersion
	go func() {
		defer t.c.wg.Done()
		defer func() {
			t.mu.Lock()
			t.renewing = false
			close(t.renewed)
			t.renewed = nil
			t.mu.Unlock()
		}()
		ctx, cancel := context.WithTimeout(t.ctx, t.c.cfg.HandshakeTimeout)
		defer cancel()
		info, err := t.c.initialize(ctx, version)
		if err != nil {
			t.c.note("starting a new session failed: %v", err)
			return
		}
		t.c.mu.Lock()
		info.Transport = event.TransportHTTP
		info.SessionID = t.c.info.SessionID
		t.c.info = info.Clone()
		t.c.mu.Unlock()
		cp := info.Clone()
		t.c.emit(event.Event{Kind: event.Connected, Time: time.Now(), Info: &cp, Text: "new session"})
		t.openGetStream(t.ctx)
	}()
}

// waitingFor says what a request still in flight is waiting for, for an
// error that says more than "context deadline exceeded".
func (t *httpTransport) waitingFor(id wire.ID) string {
	t.mu.Lock()
	st := t.streams[id]
	t.mu.Unlock()
	switch {
	case st == nil:
		return ""
	case !st.headers.Load():
		return "no response headers from the server"
	}
	return "no answer on the response stream"
}

func (t *httpTransport) isClosing() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.closing
}

func (t *httpTransport) cancel(id wire.ID, reason string) (event.CancelSignal, error) {
	t.mu.Lock()
	st := t.streams[id]
	t.mu.Unlock()
	if st == nil {
		return event.SignalNone, ErrNotInFlight
	}
	if !st.cancelled.CompareAndSwap(false, true) {
		// Close got there first: closing the transport cancelled it.
		if st.modern {
			return event.SignalStreamClosed, nil
		}
		return event.SignalNone, ErrClosed
	}
	if st.modern {
		// Closing the request's stream IS the cancel; nothing is sent. The
		// event is stamped once it is closed, since that is when the
		// cancel happened: a response read until then crossed it.
		st.closedByClient.Store(true)
		st.abort()
		t.c.emit(event.Event{Kind: event.CancelSent, Time: time.Now(), RequestID: id, Signal: event.SignalStreamClosed, Reason: reason})
		return event.SignalStreamClosed, nil
	}
	err := t.c.postCancel(t.ctx, id, reason, t.postOneWay)
	// Keep reading the stream for the late window to see what the server
	// still sends, then close it.
	st.closeAfter(st.lateWindow)
	if err != nil {
		return event.SignalNotification, err
	}
	return event.SignalNotification, nil
}

// close ends every stream and, for a legacy session, the session itself.
//
// A modern request still in flight is cancelled by closing its stream,
// which is the modern cancel, so it is reported as one (event.CancelSent
// with event.SignalStreamClosed) before the stream closes. Closing a legacy
// stream cancels nothing (the legacy cancel is a notification): those
// requests are lost with the connection. close waits, bounded by
// ShutdownWait, for every request goroutine to report how its stream
// ended, so that all of it comes before the event.TransportClosed that
// follows and the outcome does not depend on goroutine scheduling.
func (t *httpTransport) close() error {
	t.mu.Lock()
	if t.closing {
		t.mu.Unlock()
		return nil
	}
	t.closing = true
	sid := t.sessionID
	streams := make([]*httpStream, 0, len(t.streams))
	for _, st := range t.streams {
		streams = append(streams, st)
	}
	t.mu.Unlock()
	now := time.Now()
	for _, st := range streams {
		if !st.modern {
			continue
		}
		if t.c.inFlight(st.id) && st.cancelled.CompareAndSwap(false, true) {
			t.c.emit(event.Event{Kind: event.CancelSent, Time: now, RequestID: st.id, Signal: event.SignalStreamClosed,
				Reason: "inflight is closing the connection"})
		}
		st.closedByClient.Store(true)
	}
	t.stop()
	runsDone := make(chan struct{})
	go func() {
		t.runs.Wait()
		close(runsDone)
	}()
	wait := time.NewTimer(t.c.cfg.ShutdownWait)
	select {
	case <-runsDone:
	case <-wait.C:
	}
	wait.Stop()
	if sid != "" {
		// End the legacy session politely; a server may answer 405. Like
		// every shutdown step it is bounded: a server may hold the DELETE
		// until its handlers end (the go-sdk does), which a tool ignoring
		// cancellation can make take indefinitely.
		ctx, cancel := context.WithTimeout(context.Background(), t.c.cfg.ShutdownWait)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodDelete, t.endpoint.String(), nil)
		if err == nil {
			req.Header.Set("Mcp-Session-Id", sid)
			if v := t.c.Info().ProtocolVersion; v != "" {
				req.Header.Set("MCP-Protocol-Version", v)
			}
			t.addUserHeaders(req.Header)
			if resp, err := t.hc.Do(req); err == nil {
				io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
				resp.Body.Close()
			}
		}
	}
	if t.c.cfg.HTTPClient == nil {
		t.hc.CloseIdleConnections()
	}
	return nil
}
