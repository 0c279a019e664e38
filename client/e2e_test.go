package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"inflight/client"
	"inflight/event"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"inflight/demo"
	"inflight/session"
	"inflight/wire"
)

// End-to-end tests against real servers running in-process: the demo server
// (built on the official go-sdk) in both protocol eras over both transports,
// and plain go-sdk servers where detection needs a legacy-only server.

// demoStdio serves the demo over a pair of io.Pipes and returns the client's
// ends, plus a tap on everything the client wrote.
func demoStdio(t testing.TB) (*client.Pipes, *lineTap) {
	t.Helper()
	srv := demo.New(demo.Options{})
	fromServer, serverOut := io.Pipe()
	serverIn, toServer := io.Pipe()
	lt := tap(serverIn)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.ServeStdio(ctx, lt, serverOut)
	}()
	t.Cleanup(func() {
		cancel()
		srv.Close()
		<-done
		fromServer.Close()
		<-lt.done
	})
	return &client.Pipes{Stdin: toServer, Stdout: fromServer}, lt
}

// sdkStdio serves a go-sdk server over io.Pipes.
func sdkStdio(t testing.TB, s *mcp.Server) (*client.Pipes, *lineTap) {
	t.Helper()
	fromServer, serverOut := io.Pipe()
	serverIn, toServer := io.Pipe()
	lt := tap(serverIn)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Run(ctx, &mcp.IOTransport{Reader: lt, Writer: serverOut})
		serverOut.Close()
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		fromServer.Close()
		<-lt.done
	})
	return &client.Pipes{Stdin: toServer, Stdout: fromServer}, lt
}

// httpRecord is one HTTP request a server received.
type httpRecord struct {
	Method string
	URL    string // path and query
	Header http.Header
	Body   []byte
	At     time.Time
	// ended is closed when the handler returned: for a request whose
	// response stream the client closed, that is when the server saw it.
	ended chan struct{}
	endAt time.Time
}

// httpLog wraps a handler and records every request it serves.
type httpLog struct {
	h       http.Handler
	mu      sync.Mutex
	reqs    []*httpRecord
	changed chan struct{}
}

func newHTTPLog(h http.Handler) *httpLog { return &httpLog{h: h, changed: make(chan struct{})} }

func (l *httpLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	rec := &httpRecord{Method: r.Method, URL: r.URL.RequestURI(), Header: r.Header.Clone(), Body: body, At: time.Now(), ended: make(chan struct{})}
	l.mu.Lock()
	l.reqs = append(l.reqs, rec)
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		rec.endAt = time.Now()
		l.mu.Unlock()
		close(rec.ended)
	}()
	l.h.ServeHTTP(w, r)
}

func (l *httpLog) all() []*httpRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*httpRecord(nil), l.reqs...)
}

// wait returns the first request that matches, waiting for it.
func (l *httpLog) wait(t testing.TB, what string, match func(*httpRecord) bool) *httpRecord {
	t.Helper()
	deadline := time.NewTimer(waitLimit)
	defer deadline.Stop()
	for {
		l.mu.Lock()
		for _, r := range l.reqs {
			if match(r) {
				l.mu.Unlock()
				return r
			}
		}
		changed := l.changed
		l.mu.Unlock()
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("the server never received %s; it received:\n%s", what, l.dump())
		}
	}
}

func (l *httpLog) dump() string {
	var b strings.Builder
	for _, r := range l.all() {
		b.WriteString("  " + r.Method + " " + r.Header.Get("Mcp-Method") + " " + string(r.Body) + "\n")
	}
	return b.String()
}

// rpcMethod returns the JSON-RPC method of a recorded POST body.
func (r *httpRecord) rpcMethod() string {
	m, err := wire.Decode(r.Body)
	if err != nil {
		return ""
	}
	return m.Method
}

// isCall matches a POST of a tools/call with the given ID.
func isCall(id wire.ID) func(*httpRecord) bool {
	return func(r *httpRecord) bool {
		m, err := wire.Decode(r.Body)
		return err == nil && r.Method == http.MethodPost && m.Kind == wire.KindRequest && m.ID == id
	}
}

// serveHTTP serves h on 127.0.0.1 through a recording wrapper.
func serveHTTP(t testing.TB, h http.Handler) (*httptest.Server, *httpLog) {
	t.Helper()
	log := newHTTPLog(h)
	srv := httptest.NewServer(log)
	t.Cleanup(srv.Close)
	return srv, log
}

// demoHTTP serves the demo's dual-era handler.
func demoHTTP(t testing.TB) (*httptest.Server, *httpLog) {
	t.Helper()
	d := demo.New(demo.Options{})
	srv, log := serveHTTP(t, d.HTTPHandler())
	// Registered after the server's own cleanup, so it runs first: closing
	// the demo ends the tools that hold requests open.
	t.Cleanup(func() { d.Close() })
	return srv, log
}

// feeder applies a client's recorded events to a session tracker in order,
// as the UI would.
type feeder struct {
	tr   *session.Tracker
	rec  *recorder
	next int
}

func (f *feeder) feed() {
	evs := f.rec.all()
	for ; f.next < len(evs); f.next++ {
		f.tr.Apply(evs[f.next])
	}
}

func metaOf(t testing.TB, line []byte) map[string]json.RawMessage {
	t.Helper()
	var m struct {
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatalf("unmarshal %s: %v", line, err)
	}
	return m.Params.Meta
}

func TestStdioModernDemo(t *testing.T) {
	pipes, lt := demoStdio(t)
	c, rec, info := connectClient(t, client.Config{Pipes: pipes, ClientName: "inflight-test", ClientVersion: "9.9"})
	if info.Era != event.EraModern || info.ProtocolVersion != wire.VersionModern {
		t.Fatalf("era %s version %q, want modern %s", info.Era, info.ProtocolVersion, wire.VersionModern)
	}
	if info.ServerName != "inflight-demo" || len(info.SupportedVersions) == 0 {
		t.Errorf("server info %+v", info)
	}
	if first := lt.all()[0]; !strings.Contains(first, `"server/discover"`) {
		t.Errorf("first line the server read is %s, want the server/discover probe", first)
	}
	connected := rec.wait(t, "event.Connected", kind(event.Connected))
	if connected.Info == nil || connected.Info.Era != event.EraModern {
		t.Errorf("event.Connected.Info = %+v", connected.Info)
	}

	tr := session.NewTracker(session.Config{})
	fd := &feeder{tr: tr, rec: rec}
	params := toolCall("slow", map[string]any{"seconds": 0.2, "steps": 4})
	r := tr.Begin(wire.MethodToolsCall, params, session.RequestOptions{}, time.Now())
	id := send(t, c, 1, wire.MethodToolsCall, params)
	if r.ID != id {
		t.Fatalf("tracker ID %s, client ID %s", r.ID, id)
	}
	resp := rec.wait(t, "the response to 1", responseTo(id))
	if resp.Msg.Kind != wire.KindResult {
		t.Fatalf("response %s", resp.Raw)
	}
	if n := rec.count(progressFor(id)); n != 4 {
		t.Errorf("%d progress notifications, want 4", n)
	}
	fd.feed()
	if got, _ := tr.Get(id); got.State != session.StateCompleted || got.Progress.Count != 4 {
		t.Errorf("tracker: state %s, progress count %d; want completed after 4", got.State, got.Progress.Count)
	}
	// The request on the wire carries the modern _meta.
	meta := metaOf(t, []byte(lt.wait(t, `"id":1,`)))
	for _, k := range []string{wire.MetaProtocolVersion, wire.MetaClientCapabilities, wire.MetaClientInfo, wire.MetaProgressToken} {
		if _, ok := meta[k]; !ok {
			t.Errorf("request _meta lacks %s: %v", k, meta)
		}
	}
	if string(meta[wire.MetaProtocolVersion]) != `"2026-07-28"` || !strings.Contains(string(meta[wire.MetaClientInfo]), "inflight-test") {
		t.Errorf("request _meta %v", meta)
	}

	testStdioCancel(t, c, rec, lt, tr, fd, 2)
}

// testStdioCancel cancels a long request and checks that exactly one
// notifications/cancelled naming it reached the server, and that the
// tracker sees the request cancelled.
func testStdioCancel(t *testing.T, c *client.Client, rec *recorder, lt *lineTap, tr *session.Tracker, fd *feeder, n int64) {
	t.Helper()
	params := toolCall("slow", map[string]any{"seconds": 60, "steps": 600})
	r := tr.Begin(wire.MethodToolsCall, params, session.RequestOptions{}, time.Now())
	id := send(t, c, n, wire.MethodToolsCall, params)
	if r.ID != id {
		t.Fatalf("tracker ID %s, client ID %s", r.ID, id)
	}
	rec.wait(t, "progress for the long request", progressFor(id))
	fd.feed()
	if _, err := tr.RequestCancel(id, "user pressed x", session.CauseUser, time.Now()); err != nil {
		t.Fatalf("tracker refused the cancel: %s", err)
	}
	sig, err := c.Cancel(id, "user pressed x")
	if err != nil || sig != event.SignalNotification {
		t.Fatalf("Cancel = %s, %v; want notifications/cancelled", sig, err)
	}
	// Idempotent: a second Cancel reports the first signal and sends nothing.
	if sig, err := c.Cancel(id, "again"); err != nil || sig != event.SignalNotification {
		t.Errorf("second Cancel = %s, %v", sig, err)
	}
	line := lt.wait(t, wire.NotifyCancelled)
	msg, err := wire.Decode([]byte(line))
	if err != nil {
		t.Fatalf("the cancel line %s: %v", line, err)
	}
	cp, err := wire.DecodeCancelled(msg.Params)
	if err != nil || cp.RequestID != id || cp.Reason != "user pressed x" {
		t.Errorf("cancel params %s (%v), want requestId %s with the reason", msg.Params, err, id)
	}
	rec.wait(t, "event.CancelSent", func(ev event.Event) bool { return ev.Kind == event.CancelSent && ev.RequestID == id })
	// Nothing more may follow: a bounded window, then exactly one.
	quietly(200 * time.Millisecond)
	cancels := 0
	for _, l := range lt.all() {
		if strings.Contains(l, wire.NotifyCancelled) {
			cancels++
		}
	}
	if cancels != 1 {
		t.Errorf("%d notifications/cancelled on the wire, want exactly 1:\n%s", cancels, strings.Join(lt.all(), "\n"))
	}
	if rec.count(responseTo(id)) != 0 {
		t.Errorf("the demo answered a cancelled slow request")
	}
	// Cancelling what is not in flight sends nothing and says so.
	if _, err := c.Cancel(wire.IntID(999), ""); !errors.Is(err, client.ErrNotInFlight) {
		t.Errorf("Cancel(999) = %v, want client.ErrNotInFlight", err)
	}
	fd.feed()
	got, _ := tr.Get(id)
	if got.State != session.StateCancelRequested || got.Cancel == nil || got.Cancel.Signal != event.SignalNotification {
		t.Errorf("tracker: state %s cancel %+v; want cancel_requested with the notification signal", got.State, got.Cancel)
	}
}

func TestStdioLegacyDemoForced(t *testing.T) {
	pipes, lt := demoStdio(t)
	c, rec, info := connectClient(t, client.Config{Pipes: pipes, ProtocolVersion: wire.Version20251125})
	if info.Era != event.EraLegacy || info.ProtocolVersion != wire.Version20251125 {
		t.Fatalf("era %s version %q, want legacy 2025-11-25", info.Era, info.ProtocolVersion)
	}
	// notifications/initialized needs no answer, so it may still be on its
	// way: only the first line is known to have arrived.
	lines := lt.all()
	if !strings.Contains(lines[0], `"initialize"`) {
		t.Fatalf("a forced legacy version must skip detection and open with initialize; the server read:\n%s", strings.Join(lines, "\n"))
	}
	lt.wait(t, wire.NotifyInitialized)
	for _, l := range lt.all() {
		if strings.Contains(l, wire.MethodDiscover) {
			t.Errorf("forced version sent a probe: %s", l)
		}
	}
	// initialize is the client's own: it is never in flight for Cancel.
	var initID wire.ID
	for _, ev := range rec.all() {
		if ev.Kind == event.Sent && ev.Msg.Method == wire.MethodInitialize {
			initID = ev.RequestID
			if !ev.Internal {
				t.Errorf("initialize not marked internal")
			}
		}
	}
	if _, err := c.Cancel(initID, ""); !errors.Is(err, client.ErrNotInFlight) {
		t.Errorf("Cancel(initialize) = %v, want client.ErrNotInFlight", err)
	}

	tr := session.NewTracker(session.Config{})
	fd := &feeder{tr: tr, rec: rec}
	params := toolCall("slow", map[string]any{"seconds": 0.2, "steps": 2})
	tr.Begin(wire.MethodToolsCall, params, session.RequestOptions{}, time.Now())
	id := send(t, c, 1, wire.MethodToolsCall, params)
	rec.wait(t, "the response", responseTo(id))
	if n := rec.count(progressFor(id)); n != 2 {
		t.Errorf("%d progress notifications, want 2", n)
	}
	// Legacy requests carry only the progress token in _meta.
	meta := metaOf(t, []byte(lt.wait(t, `"id":1,`)))
	if _, ok := meta[wire.MetaProtocolVersion]; ok || meta[wire.MetaProgressToken] == nil {
		t.Errorf("legacy request _meta %v", meta)
	}
	testStdioCancel(t, c, rec, lt, tr, fd, 2)
}

// legacyOnlySDK is a go-sdk server that supports only legacy versions, with
// a tool that reports progress.
func legacyOnlySDK() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "legacy-only", Version: "1"}, &mcp.ServerOptions{
		SupportedProtocolVersions: []string{wire.Version20251125, wire.Version20250618},
	})
	mcp.AddTool(s, &mcp.Tool{Name: "count", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
			for i := 1; i <= 3; i++ {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i), Total: 3})
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "counted"}}}, nil, nil
		})
	return s
}

func TestStdioLegacyDetectedSDK(t *testing.T) {
	pipes, lt := sdkStdio(t, legacyOnlySDK())
	c, rec, info := connectClient(t, client.Config{Pipes: pipes})
	if info.Era != event.EraLegacy || info.ProtocolVersion != wire.Version20251125 || info.ServerName != "legacy-only" {
		t.Fatalf("info %+v, want legacy 2025-11-25 from legacy-only", info)
	}
	lines := lt.all()
	if !strings.Contains(lines[0], wire.MethodDiscover) || !strings.Contains(lines[1], `"initialize"`) {
		t.Errorf("want the probe, then initialize; the server read:\n%s", strings.Join(lines, "\n"))
	}
	id := send(t, c, 1, wire.MethodToolsCall, toolCall("count", map[string]any{}))
	rec.wait(t, "the response", responseTo(id))
	if n := rec.count(progressFor(id)); n != 3 {
		t.Errorf("%d progress notifications, want 3", n)
	}
}

func TestHTTPModernDemo(t *testing.T) {
	srv, log := demoHTTP(t)
	hdr := http.Header{"Authorization": {"Bearer secret-token"}}
	c, rec, info := connectClient(t, client.Config{URL: srv.URL, Headers: hdr})
	if info.Era != event.EraModern || info.ProtocolVersion != wire.VersionModern || info.SessionID != "" {
		t.Fatalf("info %+v, want modern without a session", info)
	}
	probe := log.all()[0]
	if probe.Header.Get("Mcp-Method") != wire.MethodDiscover || probe.Header.Get("MCP-Protocol-Version") != wire.VersionModern {
		t.Errorf("probe headers %v", probe.Header)
	}

	tr := session.NewTracker(session.Config{})
	fd := &feeder{tr: tr, rec: rec}
	params := toolCall("slow", map[string]any{"seconds": 0.2, "steps": 4})
	tr.Begin(wire.MethodToolsCall, params, session.RequestOptions{}, time.Now())
	id := send(t, c, 1, wire.MethodToolsCall, params)
	rec.wait(t, "the response", responseTo(id))
	if n := rec.count(progressFor(id)); n != 4 {
		t.Errorf("%d progress notifications, want 4", n)
	}
	post := log.wait(t, "the tools/call", isCall(id))
	want := map[string]string{
		"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
		"Mcp-Method": "tools/call", "Mcp-Name": "slow", "MCP-Protocol-Version": wire.VersionModern,
		"Authorization": "Bearer secret-token",
	}
	for k, v := range want {
		if got := post.Header.Get(k); got != v {
			t.Errorf("POST header %s = %q, want %q", k, got, v)
		}
	}
	if post.Header.Get("Mcp-Session-Id") != "" {
		t.Errorf("a modern POST carried Mcp-Session-Id")
	}

	// Cancel: the stream closes and nothing at all is POSTed.
	params = toolCall("slow", map[string]any{"seconds": 60, "steps": 600})
	tr.Begin(wire.MethodToolsCall, params, session.RequestOptions{}, time.Now())
	id = send(t, c, 2, wire.MethodToolsCall, params)
	rec.wait(t, "progress", progressFor(id))
	fd.feed()
	before := len(log.all())
	call := log.wait(t, "the long call", isCall(id))
	if _, err := tr.RequestCancel(id, "user", session.CauseUser, time.Now()); err != nil {
		t.Fatal(err)
	}
	sig, err := c.Cancel(id, "user")
	if err != nil || sig != event.SignalStreamClosed {
		t.Fatalf("Cancel = %s, %v; want stream_closed", sig, err)
	}
	closed := rec.wait(t, "the stream closed by the client", streamClosed(id))
	if !closed.ByClient {
		t.Errorf("stream closed event %s, want ByClient", describeEvent(closed))
	}
	select {
	case <-call.ended:
	case <-time.After(waitLimit):
		t.Fatal("the server never saw the stream close")
	}
	quietly(200 * time.Millisecond)
	if after := log.all(); len(after) != before {
		t.Errorf("a modern HTTP cancel POSTed something:\n%s", log.dump())
	}
	if rec.count(failed(id)) != 0 {
		t.Errorf("a cancelled request was reported failed")
	}
	fd.feed()
	if got, _ := tr.Get(id); got.State != session.StateCancelled || got.Cancel.Signal != event.SignalStreamClosed {
		t.Errorf("tracker: %s %+v, want cancelled by stream_closed", got.State, got.Cancel)
	}
	if _, err := c.Cancel(id, ""); !errors.Is(err, client.ErrNotInFlight) {
		t.Errorf("Cancel after the stream ended = %v, want client.ErrNotInFlight", err)
	}

	// Close sends no DELETE (no session) and opens no GET.
	c.Close()
	for _, r := range log.all() {
		if r.Method != http.MethodPost {
			t.Errorf("modern client sent %s", r.Method)
		}
		if r.Header.Get("Authorization") != "Bearer secret-token" {
			t.Errorf("%s %s without the user's Authorization header", r.Method, r.rpcMethod())
		}
	}
}

func TestHTTPLegacyDemoForced(t *testing.T) {
	srv, log := demoHTTP(t)
	// The stubborn request sets its own late window, shorter than the
	// default: the stream is closed at the request's.
	const late = 400 * time.Millisecond
	c, rec, info := connectClient(t, client.Config{URL: srv.URL, ProtocolVersion: wire.Version20251125,
		// The demo's DELETE waits for the stubborn tool; do not wait long.
		ShutdownWait: 300 * time.Millisecond})
	if info.Era != event.EraLegacy || info.SessionID == "" {
		t.Fatalf("info %+v, want a legacy session", info)
	}
	reqs := log.all()
	if reqs[0].rpcMethod() != wire.MethodInitialize || reqs[1].rpcMethod() != wire.NotifyInitialized {
		t.Fatalf("want initialize then notifications/initialized:\n%s", log.dump())
	}
	if reqs[1].Header.Get("Mcp-Session-Id") != info.SessionID || reqs[1].Header.Get("MCP-Protocol-Version") != wire.Version20251125 {
		t.Errorf("notifications/initialized headers %v", reqs[1].Header)
	}
	rec.wait(t, "the 202 for notifications/initialized", func(ev event.Event) bool {
		return ev.Kind == event.HTTPStatus && ev.Status == http.StatusAccepted
	})
	log.wait(t, "the GET stream", func(r *httpRecord) bool {
		return r.Method == http.MethodGet && r.Header.Get("Mcp-Session-Id") == info.SessionID
	})

	tr := session.NewTracker(session.Config{})
	fd := &feeder{tr: tr, rec: rec}
	params := toolCall("slow", map[string]any{"seconds": 0.2, "steps": 3})
	tr.Begin(wire.MethodToolsCall, params, session.RequestOptions{}, time.Now())
	id := send(t, c, 1, wire.MethodToolsCall, params)
	rec.wait(t, "the response", responseTo(id))
	if n := rec.count(progressFor(id)); n != 3 {
		t.Errorf("%d progress notifications, want 3", n)
	}

	// Cancel a request whose server ignores cancellation: the notification
	// is POSTed with the session, and the stream is read for the late
	// window, then closed by the client.
	params = toolCall("stubborn", map[string]any{"seconds": 60, "steps": 600})
	tr.Begin(wire.MethodToolsCall, params, session.RequestOptions{LateWindow: late}, time.Now())
	id = wire.IntID(2)
	if err := c.Send(context.Background(), client.Request{ID: id, Method: wire.MethodToolsCall, Params: params, ProgressToken: id, LateWindow: late}); err != nil {
		t.Fatal(err)
	}
	rec.wait(t, "progress", progressFor(id))
	call := log.wait(t, "the stubborn call", isCall(id))
	fd.feed()
	if _, err := tr.RequestCancel(id, "user", session.CauseUser, time.Now()); err != nil {
		t.Fatal(err)
	}
	cancelAt := time.Now()
	sig, err := c.Cancel(id, "user")
	if err != nil || sig != event.SignalNotification {
		t.Fatalf("Cancel = %s, %v; want notifications/cancelled", sig, err)
	}
	note := log.wait(t, "notifications/cancelled", func(r *httpRecord) bool { return r.rpcMethod() == wire.NotifyCancelled })
	if note.Header.Get("Mcp-Session-Id") != info.SessionID {
		t.Errorf("notifications/cancelled POSTed without the session: %v", note.Header)
	}
	if m, _ := wire.Decode(note.Body); m.Kind != wire.KindNotification {
		t.Errorf("cancel body %s", note.Body)
	} else if cp, _ := wire.DecodeCancelled(m.Params); cp.RequestID != id {
		t.Errorf("cancel names %s, want %s", cp.RequestID, id)
	}
	closed := rec.wait(t, "the stream closed after the late window", streamClosed(id))
	if !closed.ByClient {
		t.Errorf("stream close %s, want by the client at the end of the late window", describeEvent(closed))
	}
	if d := closed.Time.Sub(cancelAt); d < late || d >= session.DefaultLateWindow {
		t.Errorf("stream closed %s after the cancel, want the request's %s late window, not the default %s", d, late, session.DefaultLateWindow)
	}
	// Progress kept coming during the window: the stubborn tool ignores
	// cancellation and the client kept reading.
	select {
	case <-call.ended:
	case <-time.After(waitLimit):
		t.Fatal("the server never saw the stream close")
	}
	fd.feed()
	got, _ := tr.Get(id)
	if got.State != session.StateCancelled || got.Late.ProgressAfterCancel == 0 {
		t.Errorf("tracker: %s, progress after cancel %d; want cancelled with late progress flagged", got.State, got.Late.ProgressAfterCancel)
	}

	// Close ends the session with DELETE.
	c.Close()
	log.wait(t, "DELETE", func(r *httpRecord) bool {
		return r.Method == http.MethodDelete && r.Header.Get("Mcp-Session-Id") == info.SessionID
	})
}

func TestHTTPLegacyDetectedSDK(t *testing.T) {
	s := legacyOnlySDK()
	srv, log := serveHTTP(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	c, rec, info := connectClient(t, client.Config{URL: srv.URL})
	if info.Era != event.EraLegacy || info.SessionID == "" {
		t.Fatalf("info %+v, want a legacy session", info)
	}
	reqs := log.all()
	if reqs[0].rpcMethod() != wire.MethodDiscover || reqs[1].rpcMethod() != wire.MethodInitialize {
		t.Errorf("want the modern probe, then initialize:\n%s", log.dump())
	}
	id := send(t, c, 1, wire.MethodToolsCall, toolCall("count", map[string]any{}))
	rec.wait(t, "the response", responseTo(id))
	if n := rec.count(progressFor(id)); n != 3 {
		t.Errorf("%d progress notifications, want 3", n)
	}
	post := log.wait(t, "the call", isCall(id))
	if post.Header.Get("Mcp-Session-Id") != info.SessionID || post.Header.Get("MCP-Protocol-Version") != info.ProtocolVersion {
		t.Errorf("legacy POST headers %v", post.Header)
	}
	if post.Header.Get("Mcp-Method") != "" {
		t.Errorf("legacy POST carries Mcp-Method")
	}
}
