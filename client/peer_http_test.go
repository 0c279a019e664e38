package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"inflight/client"
	"inflight/event"
	"inflight/session"
	"inflight/wire"
)

// Hand-written Streamable HTTP servers, for what no SDK does on purpose.

const discoverResult = `{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"fake","version":"1"}}}`

// rpcHandler decodes each POST body and hands it to serve.
func rpcHandler(serve func(w http.ResponseWriter, r *http.Request, m wire.Message)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var body []byte
		if r.Body != nil {
			buf := make([]byte, 0, 512)
			for {
				n, err := r.Body.Read(buf[len(buf):cap(buf)])
				buf = buf[:len(buf)+n]
				if err != nil {
					break
				}
				if len(buf) == cap(buf) {
					buf = append(buf, 0)[:len(buf)]
				}
			}
			body = buf
		}
		m, _ := wire.Decode(body)
		serve(w, r, m)
	}
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func sseStart(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
}

func sseWrite(w http.ResponseWriter, text string) {
	_, _ = fmt.Fprint(w, text)
	w.(http.Flusher).Flush()
}

func progressJSON(token wire.ID, n int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":%d}}`, token.Raw(), n)
}

// modernFake answers server/discover as a modern server and everything else
// with call.
func modernFake(call func(w http.ResponseWriter, r *http.Request, m wire.Message)) http.Handler {
	return rpcHandler(func(w http.ResponseWriter, r *http.Request, m wire.Message) {
		if m.Method == wire.MethodDiscover {
			writeJSON(w, http.StatusOK, wire.ResultResponse(m.ID, json.RawMessage(discoverResult)))
			return
		}
		call(w, r, m)
	})
}

func TestHTTPReplyErrors(t *testing.T) {
	tests := []struct {
		name  string
		serve func(w http.ResponseWriter, r *http.Request, m wire.Message)
		// answered: a JSON-RPC response is delivered; otherwise the request
		// fails with errText, lost or not.
		answered bool
		errText  string
		lost     bool
		status   int
	}{
		{name: "500", status: 500, errText: "HTTP 500 Internal Server Error: boom", serve: func(w http.ResponseWriter, r *http.Request, m wire.Message) {
			http.Error(w, "boom", http.StatusInternalServerError)
		}},
		{name: "404 without a session", status: 404, errText: "HTTP 404", serve: func(w http.ResponseWriter, r *http.Request, m wire.Message) {
			http.NotFound(w, r)
		}},
		{name: "400 with a JSON-RPC error", answered: true, serve: func(w http.ResponseWriter, r *http.Request, m wire.Message) {
			writeJSON(w, http.StatusBadRequest, wire.ErrorResponse(m.ID, wire.CodeInvalidParams, "bad arguments"))
		}},
		{name: "400 with an id-less JSON-RPC error", answered: true, serve: func(w http.ResponseWriter, r *http.Request, m wire.Message) {
			writeJSON(w, http.StatusBadRequest, []byte(`{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request"}}`))
		}},
		// Refused before the protocol: the status is what matters, the
		// JSON-RPC error only its wording.
		{name: "403 with a JSON-RPC error", errText: "HTTP 403 Forbidden: Origin not allowed", serve: func(w http.ResponseWriter, r *http.Request, m wire.Message) {
			writeJSON(w, http.StatusForbidden, []byte(`{"jsonrpc":"2.0","error":{"code":-32600,"message":"Origin not allowed"}}`))
		}},
		{name: "401", errText: "HTTP 401 Unauthorized: missing token", serve: func(w http.ResponseWriter, r *http.Request, m wire.Message) {
			http.Error(w, "missing token", http.StatusUnauthorized)
		}},
		{name: "an HTML error page", errText: `HTTP 502 Bad Gateway: an HTML page titled "502 Bad Gateway"`, serve: func(w http.ResponseWriter, r *http.Request, m wire.Message) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusBadGateway)
			_, _ = w.Write([]byte("<html><head><title>502 Bad\n Gateway</title></head><body>" + strings.Repeat("<p>x</p>", 500) + "</body></html>"))
		}},
		{name: "wrong content type", lost: true, errText: "unexpected Content-Type", serve: func(w http.ResponseWriter, r *http.Request, m wire.Message) {
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte("<html>login</html>"))
		}},
		{name: "202 for a request", lost: true, errText: "202", serve: func(w http.ResponseWriter, r *http.Request, m wire.Message) {
			w.WriteHeader(http.StatusAccepted)
		}},
		{name: "JSON body that is no message", lost: true, errText: "did not answer", serve: func(w http.ResponseWriter, r *http.Request, m wire.Message) {
			writeJSON(w, http.StatusOK, []byte(`{"hello":"world"}`))
		}},
		{name: "SSE cut mid-event", lost: true, errText: "middle of an event", serve: func(w http.ResponseWriter, r *http.Request, m wire.Message) {
			sseStart(w)
			sseWrite(w, "data: "+progressJSON(m.ID, 1)+"\n\n")
			sseWrite(w, `data: {"jsonrpc":"2.0","id":`)
		}},
		{name: "SSE ended without a response", lost: true, errText: "closed before the response", serve: func(w http.ResponseWriter, r *http.Request, m wire.Message) {
			sseStart(w)
			sseWrite(w, "data: "+progressJSON(m.ID, 1)+"\n\n")
		}},
		{name: "SSE response", answered: true, serve: func(w http.ResponseWriter, r *http.Request, m wire.Message) {
			sseStart(w)
			sseWrite(w, ": keep-alive\n\nevent: message\ndata: "+progressJSON(m.ID, 1)+"\r\n\r\n")
			sseWrite(w, "data: "+string(wire.ResultResponse(m.ID, json.RawMessage(`{"resultType":"complete"}`)))+"\r\r")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(modernFake(tc.serve))
			t.Cleanup(srv.Close)
			c, rec, info := connectClient(t, client.Config{URL: srv.URL})
			if info.Era != event.EraModern {
				t.Fatalf("era %s", info.Era)
			}
			id := send(t, c, 1, wire.MethodToolsCall, toolCall("t", map[string]any{}))
			if tc.answered {
				ev := rec.wait(t, "the answer", responseTo(id))
				if !ev.Msg.IsResponse() || ev.Internal {
					t.Errorf("answer %s", describeEvent(ev))
				}
				if n := rec.count(failed(id)); n != 0 {
					t.Errorf("an answered request also failed")
				}
				return
			}
			ev := rec.wait(t, "the failure", failed(id))
			if ev.Err == nil || !strings.Contains(ev.Err.Error(), tc.errText) || ev.LostConnection != tc.lost {
				t.Errorf("failure %s; want error containing %q, lost=%t", describeEvent(ev), tc.errText, tc.lost)
			}
			var se *client.HTTPStatusError
			if tc.status != 0 && (!errors.As(ev.Err, &se) || se.Status != tc.status) {
				t.Errorf("error %v, want an HTTPStatusError with status %d", ev.Err, tc.status)
			}
			if rec.count(kind(event.TransportClosed)) != 0 {
				t.Errorf("one failed request closed the connection")
			}
			// The tracker ends the request, lost or failed.
			tr := session.NewTracker(session.Config{})
			tr.Begin(wire.MethodToolsCall, nil, session.RequestOptions{}, time.Now())
			for _, e := range rec.all() {
				tr.Apply(e)
			}
			want := session.StateFailed
			if tc.lost {
				want = session.StateConnectionLost
			}
			if r, _ := tr.Get(id); r.State != want {
				t.Errorf("tracker state %s, want %s", r.State, want)
			}
		})
	}
}

// legacyFake is a legacy (2025-11-25) Streamable HTTP server with sessions.
type legacyFake struct {
	t    testing.TB
	call func(w http.ResponseWriter, r *http.Request, m wire.Message)
	get  func(w http.ResponseWriter, r *http.Request) // nil: 405

	mu       sync.Mutex
	session  string
	sessions int
	posts    []wire.Message // responses and notifications the client POSTed
	changed  chan struct{}
}

func newLegacyFake(t testing.TB) *legacyFake { return &legacyFake{t: t, changed: make(chan struct{})} }

func (f *legacyFake) current() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.session
}

// endSession makes the current session unknown, as a server restart would.
func (f *legacyFake) endSession() {
	f.mu.Lock()
	f.session = "expired"
	f.mu.Unlock()
}

func (f *legacyFake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rpcHandler(f.serve).ServeHTTP(w, r)
}

func (f *legacyFake) serve(w http.ResponseWriter, r *http.Request, m wire.Message) {
	switch r.Method {
	case http.MethodGet:
		if r.Header.Get("Mcp-Session-Id") != f.current() {
			http.NotFound(w, r)
			return
		}
		if f.get == nil {
			http.Error(w, "no GET stream", http.StatusMethodNotAllowed)
			return
		}
		f.get(w, r)
		return
	case http.MethodDelete:
		w.WriteHeader(http.StatusOK)
		return
	}
	switch {
	case m.Method == wire.MethodDiscover:
		http.Error(w, "Bad Request: session ID required", http.StatusBadRequest)
	case m.Method == wire.MethodInitialize:
		if r.Header.Get("Mcp-Session-Id") != "" {
			http.Error(w, "initialize with a session", http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.sessions++
		f.session = fmt.Sprintf("session-%d", f.sessions)
		sid := f.session
		f.mu.Unlock()
		w.Header().Set("Mcp-Session-Id", sid)
		writeJSON(w, http.StatusOK, wire.ResultResponse(m.ID, json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"legacy-fake","version":"1"}}`)))
	case r.Header.Get("Mcp-Session-Id") != f.current():
		http.NotFound(w, r)
	case m.Kind == wire.KindNotification || m.IsResponse():
		f.mu.Lock()
		f.posts = append(f.posts, m)
		close(f.changed)
		f.changed = make(chan struct{})
		f.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	default:
		f.call(w, r, m)
	}
}

// waitPost waits for a notification or response the client POSTed.
func (f *legacyFake) waitPost(t testing.TB, what string, match func(wire.Message) bool) wire.Message {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		f.mu.Lock()
		for _, m := range f.posts {
			if match(m) {
				f.mu.Unlock()
				return m
			}
		}
		changed := f.changed
		f.mu.Unlock()
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("the client never POSTed %s", what)
		}
	}
}

func TestHTTPDetection(t *testing.T) {
	tests := []struct {
		name     string
		forced   string
		discover func(w http.ResponseWriter, r *http.Request, m wire.Message)
		era      event.Era
		version  string
		wantErr  string
	}{
		{name: "discover result", era: event.EraModern, version: wire.VersionModern,
			discover: func(w http.ResponseWriter, r *http.Request, m wire.Message) {
				writeJSON(w, 200, wire.ResultResponse(m.ID, json.RawMessage(discoverResult)))
			}},
		{name: "400 plain body", era: event.EraLegacy, version: wire.Version20251125,
			discover: func(w http.ResponseWriter, r *http.Request, m wire.Message) {
				http.Error(w, "Bad Request: missing session", 400)
			}},
		{name: "400 empty body", era: event.EraLegacy, version: wire.Version20251125,
			discover: func(w http.ResponseWriter, r *http.Request, m wire.Message) { w.WriteHeader(400) }},
		{name: "400 non-modern JSON-RPC error", era: event.EraLegacy, version: wire.Version20251125,
			discover: func(w http.ResponseWriter, r *http.Request, m wire.Message) {
				writeJSON(w, 400, wire.ErrorResponse(wire.NullID, wire.CodeInvalidRequest, "Bad Request: No valid session ID provided"))
			}},
		{name: "404 method not found", era: event.EraLegacy, version: wire.Version20251125,
			discover: func(w http.ResponseWriter, r *http.Request, m wire.Message) {
				writeJSON(w, 404, wire.ErrorResponse(m.ID, wire.CodeMethodNotFound, "Method not found"))
			}},
		{name: "400 unsupported version lists a legacy one", era: event.EraLegacy, version: wire.Version20250618,
			discover: func(w http.ResponseWriter, r *http.Request, m wire.Message) {
				writeJSON(w, 400, []byte(`{"jsonrpc":"2.0","id":`+m.ID.Raw()+`,"error":{"code":-32022,"message":"unsupported","data":{"supported":["2025-06-18"],"requested":"2026-07-28"}}}`))
			}},
		{name: "200 success that is not a discover result", era: event.EraLegacy, version: wire.Version20251125,
			discover: func(w http.ResponseWriter, r *http.Request, m wire.Message) {
				writeJSON(w, 200, wire.ResultResponse(m.ID, json.RawMessage(`{"tools":[]}`)))
			}},
		{name: "400 header mismatch is modern", wantErr: "modern server rejected",
			discover: func(w http.ResponseWriter, r *http.Request, m wire.Message) {
				writeJSON(w, 400, wire.ErrorResponse(m.ID, wire.CodeHeaderMismatch, "header mismatch"))
			}},
		{name: "500 is no answer", wantErr: "HTTP 500",
			discover: func(w http.ResponseWriter, r *http.Request, m wire.Message) { http.Error(w, "down", 500) }},
		{name: "forced legacy skips the probe", forced: wire.Version20250618, era: event.EraLegacy, version: wire.Version20250618,
			discover: func(w http.ResponseWriter, r *http.Request, m wire.Message) {
				t.Errorf("a forced version probed")
				http.Error(w, "no", 400)
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var inits []string
			h := rpcHandler(func(w http.ResponseWriter, r *http.Request, m wire.Message) {
				switch {
				case r.Method != http.MethodPost:
					http.Error(w, "no", http.StatusMethodNotAllowed)
				case m.Method == wire.MethodDiscover:
					tc.discover(w, r, m)
				case m.Method == wire.MethodInitialize:
					var p struct {
						ProtocolVersion string `json:"protocolVersion"`
					}
					_ = json.Unmarshal(m.Params, &p)
					mu.Lock()
					inits = append(inits, p.ProtocolVersion)
					mu.Unlock()
					if r.Header.Get("MCP-Protocol-Version") != "" {
						t.Errorf("initialize carries MCP-Protocol-Version")
					}
					w.Header().Set("Mcp-Session-Id", "s")
					writeJSON(w, 200, wire.ResultResponse(m.ID, json.RawMessage(`{"protocolVersion":"`+p.ProtocolVersion+`","capabilities":{},"serverInfo":{"name":"l","version":"1"}}`)))
				default:
					w.WriteHeader(http.StatusAccepted)
				}
			})
			srv := httptest.NewServer(h)
			t.Cleanup(srv.Close)
			c, rec := newClient(t, client.Config{URL: srv.URL, ProtocolVersion: tc.forced})
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
			defer cancel()
			info, err := c.Connect(ctx)
			mu.Lock()
			defer mu.Unlock()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Connect = %+v, %v; want an error containing %q", info, err, tc.wantErr)
				}
				if len(inits) != 0 {
					t.Errorf("fell back to initialize")
				}
				return
			}
			if err != nil {
				t.Fatalf("Connect: %v\n%s", err, rec.dump())
			}
			if info.Era != tc.era || info.ProtocolVersion != tc.version {
				t.Errorf("era %s version %s, want %s %s", info.Era, info.ProtocolVersion, tc.era, tc.version)
			}
			if tc.era == event.EraLegacy && (len(inits) != 1 || inits[0] != tc.version) {
				t.Errorf("initialize asked for %v, want %s", inits, tc.version)
			}
		})
	}
}

func TestHTTPLegacySessionEnded(t *testing.T) {
	f := newLegacyFake(t)
	f.call = func(w http.ResponseWriter, r *http.Request, m wire.Message) {
		writeJSON(w, 200, wire.ResultResponse(m.ID, json.RawMessage(`{"tools":[]}`)))
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	c, rec, info := connectClient(t, client.Config{URL: srv.URL})
	if info.SessionID != "session-1" {
		t.Fatalf("session %q", info.SessionID)
	}
	rec.wait(t, "the note that there is no GET stream", func(ev event.Event) bool {
		return ev.Kind == event.Note && strings.Contains(ev.Text, "no GET stream")
	})
	id := send(t, c, 1, wire.MethodToolsList, nil)
	rec.wait(t, "the first answer", responseTo(id))

	f.endSession()
	id = send(t, c, 2, wire.MethodToolsList, nil)
	ev := rec.wait(t, "the request failed by the 404", failed(id))
	if !ev.LostConnection || !strings.Contains(ev.Err.Error(), "404") {
		t.Errorf("404 failure %s", describeEvent(ev))
	}
	re := rec.wait(t, "the new session", func(ev event.Event) bool {
		return ev.Kind == event.Connected && ev.Text == "new session"
	})
	if re.Info == nil || re.Info.SessionID != "session-2" || c.Info().SessionID != "session-2" {
		t.Errorf("new session info %+v / %+v", re.Info, c.Info())
	}
	id = send(t, c, 3, wire.MethodToolsList, nil)
	rec.wait(t, "an answer in the new session", responseTo(id))
}

func TestHTTPModernStreamNeverCloses(t *testing.T) {
	handlerDone := make(chan struct{})
	var once sync.Once
	srv, log := serveHTTP(t, modernFake(func(w http.ResponseWriter, r *http.Request, m wire.Message) {
		sseStart(w)
		sseWrite(w, "data: "+progressJSON(m.ID, 1)+"\n\n")
		<-r.Context().Done() // never ends the stream on its own
		once.Do(func() { close(handlerDone) })
	}))
	c, rec, _ := connectClient(t, client.Config{URL: srv.URL})
	id := send(t, c, 1, wire.MethodToolsCall, toolCall("hang", nil))
	rec.wait(t, "progress", progressFor(id))
	before := len(log.all())
	if sig, err := c.Cancel(id, "enough"); sig != event.SignalStreamClosed || err != nil {
		t.Fatalf("Cancel = %s, %v", sig, err)
	}
	select {
	case <-handlerDone:
	case <-time.After(waitLimit):
		t.Fatal("the server never saw the stream close")
	}
	ev := rec.wait(t, "the stream closed", streamClosed(id))
	if !ev.ByClient || ev.Err != nil {
		t.Errorf("close %s, want by the client without error", describeEvent(ev))
	}
	quietly(100 * time.Millisecond)
	if len(log.all()) != before {
		t.Errorf("the modern cancel POSTed:\n%s", log.dump())
	}
	if rec.count(failed(id)) != 0 {
		t.Errorf("a cancelled request reported failed")
	}
}

func TestHTTPLegacyResume(t *testing.T) {
	const retry = 300 * time.Millisecond
	f := newLegacyFake(t)
	var mu sync.Mutex
	var closedAt time.Time
	resumed := make(chan *http.Request, 4)
	f.call = func(w http.ResponseWriter, r *http.Request, m wire.Message) {
		sseStart(w)
		// A priming event with an id and a retry, progress, then the server
		// closes the connection without ending the request.
		sseWrite(w, "id: "+m.ID.Raw()+"-0\nretry: 300\ndata:\n\n")
		sseWrite(w, "id: "+m.ID.Raw()+"-1\ndata: "+progressJSON(m.ID, 1)+"\n\n")
		mu.Lock()
		closedAt = time.Now()
		mu.Unlock()
	}
	f.get = func(w http.ResponseWriter, r *http.Request) {
		last := r.Header.Get("Last-Event-ID")
		if last == "" {
			http.Error(w, "no standalone stream", http.StatusMethodNotAllowed)
			return
		}
		resumed <- r
		id, _, _ := strings.Cut(last, "-")
		sseStart(w)
		sseWrite(w, "id: "+id+"-2\ndata: "+string(wire.ResultResponse(mustID(id), json.RawMessage(`{"tools":[]}`)))+"\n\n")
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	c, rec, info := connectClient(t, client.Config{URL: srv.URL})

	id := send(t, c, 1, wire.MethodToolsList, nil)
	rec.wait(t, "the response on the resumed stream", responseTo(id))
	var get *http.Request
	select {
	case get = <-resumed:
	default:
		t.Fatal("answered without a resume")
	}
	resumedAt := time.Now()
	if got := get.Header.Get("Last-Event-ID"); got != "1-1" {
		t.Errorf("Last-Event-ID %q, want 1-1", got)
	}
	if get.Header.Get("Mcp-Session-Id") != info.SessionID || get.Header.Get("Accept") != "text/event-stream" {
		t.Errorf("resume GET headers %v", get.Header)
	}
	mu.Lock()
	waited := resumedAt.Sub(closedAt)
	mu.Unlock()
	// Roughly: at least the retry the server asked for (a little slack for
	// the clock reads), not the 1s default.
	if waited < retry-50*time.Millisecond {
		t.Errorf("resumed %s after the stream closed; the server asked for retry: %s", waited, retry)
	}
	t.Logf("resumed %s after the close (retry: %s)", waited, retry)
	rec.wait(t, "the resume note", func(ev event.Event) bool {
		return ev.Kind == event.StreamOpened && ev.RequestID == id && strings.Contains(ev.Text, "Last-Event-ID 1-1")
	})

	// (A cancelled request is never resumed: TestHTTPLegacyNoResumeAfterCancel.)
}

func mustID(raw string) wire.ID {
	id, err := wire.ParseID([]byte(raw))
	if err != nil {
		panic(err)
	}
	return id
}

func TestHTTPLegacyNoResumeAfterCancel(t *testing.T) {
	f := newLegacyFake(t)
	gets := make(chan string, 4)
	f.call = func(w http.ResponseWriter, r *http.Request, m wire.Message) {
		sseStart(w)
		sseWrite(w, "id: a1\nretry: 10\ndata: "+progressJSON(m.ID, 1)+"\n\n")
		// Hold the stream until the client's cancel arrives, then close it
		// without a response, as a server that honours cancellation does.
		select {
		case <-r.Context().Done():
		case <-cancelSeen(f):
		}
	}
	f.get = func(w http.ResponseWriter, r *http.Request) {
		gets <- r.Header.Get("Last-Event-ID")
		http.Error(w, "no", http.StatusMethodNotAllowed)
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	c, rec, _ := connectClient(t, client.Config{URL: srv.URL})
	id := send(t, c, 1, wire.MethodToolsCall, toolCall("x", nil))
	rec.wait(t, "progress", progressFor(id))
	if sig, err := c.Cancel(id, "stop"); sig != event.SignalNotification || err != nil {
		t.Fatalf("Cancel = %s, %v", sig, err)
	}
	m := f.waitPost(t, "notifications/cancelled", func(m wire.Message) bool { return m.Method == wire.NotifyCancelled })
	if cp, _ := wire.DecodeCancelled(m.Params); cp.RequestID != id || cp.Reason != "stop" {
		t.Errorf("cancel %s", m.Params)
	}
	ev := rec.wait(t, "the stream closed by the server", streamClosed(id))
	if ev.ByClient {
		t.Errorf("the server closed the stream, not the client: %s", describeEvent(ev))
	}
	quietly(200 * time.Millisecond)
	for {
		select {
		case last := <-gets:
			if last != "" {
				t.Errorf("resumed a cancelled request's stream (Last-Event-ID %q)", last)
			}
			continue
		default:
		}
		break
	}
	if rec.count(failed(id)) != 0 {
		t.Errorf("a cancelled request reported failed")
	}
}

// cancelSeen returns a channel closed once the fake has received a
// notifications/cancelled.
func cancelSeen(f *legacyFake) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		deadline := time.After(waitLimit)
		for {
			f.mu.Lock()
			for _, m := range f.posts {
				if m.Method == wire.NotifyCancelled {
					f.mu.Unlock()
					return
				}
			}
			changed := f.changed
			f.mu.Unlock()
			select {
			case <-changed:
			case <-deadline:
				return
			}
		}
	}()
	return ch
}

func TestHTTPLegacyServerPingOnGetStream(t *testing.T) {
	f := newLegacyFake(t)
	f.get = func(w http.ResponseWriter, r *http.Request) {
		sseStart(w)
		sseWrite(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"p1\",\"method\":\"ping\"}\n\n")
		sseWrite(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"r1\",\"method\":\"roots/list\"}\n\n")
		<-r.Context().Done()
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	_, rec, _ := connectClient(t, client.Config{URL: srv.URL})
	pong := f.waitPost(t, "the ping answer", func(m wire.Message) bool { return m.ID == wire.StringID("p1") })
	if pong.Kind != wire.KindResult {
		t.Errorf("ping answer %+v", pong)
	}
	refusal := f.waitPost(t, "the roots/list refusal", func(m wire.Message) bool { return m.ID == wire.StringID("r1") })
	if refusal.Kind != wire.KindError || refusal.Error.Code != wire.CodeMethodNotFound {
		t.Errorf("roots/list answer %+v", refusal)
	}
	rec.wait(t, "the ping in the log", func(ev event.Event) bool {
		return ev.Kind == event.Received && ev.Msg.Method == wire.MethodPing && ev.Internal
	})
}

func TestHTTPRedirects(t *testing.T) {
	other, otherLog := serveHTTP(t, modernFake(func(w http.ResponseWriter, r *http.Request, m wire.Message) {
		writeJSON(w, 200, wire.ResultResponse(m.ID, json.RawMessage(`{}`)))
	}))
	var mu sync.Mutex
	var moved []string
	mux := http.NewServeMux()
	mux.Handle("/mcp", modernFake(func(w http.ResponseWriter, r *http.Request, m wire.Message) {
		switch m.Method {
		case "test/elsewhere":
			http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
		case "test/moved":
			http.Redirect(w, r, "/mcp2", http.StatusPermanentRedirect)
		case "test/found":
			http.Redirect(w, r, "/mcp2", http.StatusFound)
		}
	}))
	mux.Handle("/mcp2", rpcHandler(func(w http.ResponseWriter, r *http.Request, m wire.Message) {
		mu.Lock()
		moved = append(moved, r.Method+" "+m.Method+" "+r.Header.Get("Mcp-Method"))
		mu.Unlock()
		writeJSON(w, 200, wire.ResultResponse(m.ID, json.RawMessage(`{"moved":true}`)))
	}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c, rec, _ := connectClient(t, client.Config{URL: srv.URL + "/mcp"})

	id := send(t, c, 1, "test/elsewhere", nil)
	ev := rec.wait(t, "the refused redirect", failed(id))
	if ev.LostConnection || !strings.Contains(ev.Err.Error(), "another host") {
		t.Errorf("cross-host redirect: %s", describeEvent(ev))
	}
	if n := len(otherLog.all()); n != 0 {
		t.Errorf("the other host received %d requests", n)
	}

	id = send(t, c, 2, "test/moved", nil)
	ev = rec.wait(t, "the answer after a same-host redirect", responseTo(id))
	if !strings.Contains(string(ev.Raw), "moved") {
		t.Errorf("answer %s", ev.Raw)
	}
	mu.Lock()
	if len(moved) != 1 || moved[0] != "POST test/moved test/moved" {
		t.Errorf("the redirected request arrived as %q, want the POST with its headers", moved)
	}
	mu.Unlock()

	id = send(t, c, 3, "test/found", nil)
	ev = rec.wait(t, "the refused method-changing redirect", failed(id))
	if !strings.Contains(ev.Err.Error(), "would turn POST into GET") {
		t.Errorf("302 redirect: %s", describeEvent(ev))
	}
}
