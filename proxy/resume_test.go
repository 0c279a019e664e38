package proxy

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"inflight/event"
	"inflight/session"
	"inflight/wire"
)

// Resumption on legacy Streamable HTTP through the proxy, with real peers
// at both ends: go-sdk's server with an event store (it primes each POST
// stream with an event ID and replays a broken stream from the
// Last-Event-ID a GET names) and go-sdk's client, which resumes a broken
// stream of a call with that GET. The demo server cannot serve here: its
// stateful handler has no event store, so a broken stream of its loses
// what was sent meanwhile.

// resumeSteps is how many progress notifications the upstream's tool
// sends, stepGap apart, before its answer.
const (
	resumeSteps = 5
	stepGap     = 250 * time.Millisecond
)

// seenExchange is one HTTP request and the bytes of its response, as one end
// saw it.
type seenExchange struct {
	method, lastEventID string
	body                []byte
	mu                  sync.Mutex
	resp                bytes.Buffer
}

func (e *seenExchange) bytes() []byte {
	e.mu.Lock()
	defer e.mu.Unlock()
	return bytes.Clone(e.resp.Bytes())
}

// seenExchanges is what one end saw, in order.
type seenExchanges struct {
	mu  sync.Mutex
	all []*seenExchange
}

func (x *seenExchanges) add(r *http.Request, body []byte) *seenExchange {
	e := &seenExchange{method: r.Method, lastEventID: r.Header.Get("Last-Event-ID"), body: body}
	x.mu.Lock()
	x.all = append(x.all, e)
	x.mu.Unlock()
	return e
}

// find is the first seenExchange that matches.
func (x *seenExchanges) find(match func(*seenExchange) bool) *seenExchange {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, e := range x.all {
		if match(e) {
			return e
		}
	}
	return nil
}

func isCallPOST(e *seenExchange) bool {
	return e.method == http.MethodPost && bytes.Contains(e.body, []byte(`"method":"tools/call"`))
}

func isResumeGET(e *seenExchange) bool { return e.method == http.MethodGet && e.lastEventID != "" }

// teeWriter keeps a copy of what the upstream writes.
type teeWriter struct {
	http.ResponseWriter
	e *seenExchange
}

func (w *teeWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	w.e.mu.Lock()
	w.e.resp.Write(p[:n])
	w.e.mu.Unlock()
	return n, err
}

func (w *teeWriter) Flush()                      { w.ResponseWriter.(http.Flusher).Flush() }
func (w *teeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// resumableUpstream serves go-sdk's server with an event store; its tool
// "steps" sends resumeSteps progress notifications, stepGap apart, then
// answers. closeAfter > 0: the tool closes its POST stream itself after
// that many steps (go-sdk's CloseSSEStream, with retry: 10), as a server
// that does not hold long-lived connections may.
func resumableUpstream(t *testing.T, closeAfter int) (string, *seenExchanges) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "resumable", Version: "1"}, nil)
	type noArgs struct{}
	mcp.AddTool(srv, &mcp.Tool{Name: "steps"}, func(ctx context.Context, req *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, any, error) {
		tok := req.Params.GetProgressToken()
		for i := 1; i <= resumeSteps; i++ {
			time.Sleep(stepGap)
			if tok != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: resumeSteps})
			}
			if i == closeAfter && req.Extra != nil && req.Extra.CloseSSEStream != nil {
				req.Extra.CloseSSEStream(mcp.CloseSSEStreamArgs{RetryAfter: 10 * time.Millisecond})
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "all steps done"}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil)})
	seen := &seenExchanges{}
	up := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(&teeWriter{ResponseWriter: w, e: seen.add(r, body)}, r)
	})}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = up.Serve(l) }()
	t.Cleanup(func() { up.Close() })
	return "http://" + l.Addr().String() + "/mcp", seen
}

// errBroken is the host's network failing under a stream.
var errBroken = errors.New("connection reset (the test broke the stream)")

// breakingTransport is the host's network: it keeps what each response
// delivered to the host and, when breakAfter > 0, breaks the response
// stream of the host's tools/call after that many whole SSE events (the
// priming event is one), the way a dropped connection does — the host
// reads an error, its connection is closed under the proxy.
type breakingTransport struct {
	seen       *seenExchanges
	breakAfter int
}

func (b *breakingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		r.Body.Close()
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	e := b.seen.add(r, body)
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	limit := -1
	if b.breakAfter > 0 && isCallPOST(e) {
		limit = b.breakAfter
	}
	resp.Body = &breakingBody{src: resp.Body, e: e, events: limit}
	return resp, nil
}

// breakingBody passes a response through to the host, keeping a copy;
// with events ≥ 0 it passes that many whole events and then fails.
type breakingBody struct {
	src    io.ReadCloser
	e      *seenExchange
	events int
	prev   byte
	broken bool
}

func (b *breakingBody) Read(p []byte) (int, error) {
	if b.broken {
		return 0, errBroken
	}
	n, err := b.src.Read(p)
	if b.events >= 0 {
		for i := range n {
			if p[i] == '\n' && b.prev == '\n' {
				if b.events--; b.events == 0 {
					n, err, b.broken = i+1, nil, true
					b.src.Close() // the connection goes with it
					break
				}
			}
			b.prev = p[i]
		}
	}
	b.e.mu.Lock()
	b.e.resp.Write(p[:n])
	b.e.mu.Unlock()
	return n, err
}

func (b *breakingBody) Close() error { return b.src.Close() }

// resumingCall connects go-sdk's client at 2025-11-25 through the proxy
// over the given network and calls steps; it returns the result's text and
// how many progress notifications the host was given.
func resumingCall(t *testing.T, url string, tp http.RoundTripper) (string, int) {
	t.Helper()
	var mu sync.Mutex
	progress := 0
	client := mcp.NewClient(&mcp.Implementation{Name: "resuming-host", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress++
			mu.Unlock()
		}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: tp}, MaxRetries: 3},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect through the proxy: %v", err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "steps", Meta: mcp.Meta{"progressToken": "resume-1"}})
	if err != nil {
		t.Fatalf("the host's call: %v", err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("result %+v", res)
	}
	text, _ := res.Content[0].(*mcp.TextContent)
	// go-sdk hands progress to its handler apart from the answer: what
	// was replayed with it may still be on its way.
	for deadline := time.Now().Add(time.Second); ; time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		n := progress
		mu.Unlock()
		if n >= resumeSteps || time.Now().After(deadline) {
			if text == nil {
				return "", n
			}
			return text.Text, n
		}
	}
}

// checkResumed: the host's call was answered through a GET that resumed
// its stream, and what the host read on both streams is what the upstream
// wrote — the broken stream up to the break, the resumed one whole.
func checkResumed(t *testing.T, host, upstream *seenExchanges, brokenByHost bool) {
	t.Helper()
	hp, up := host.find(isCallPOST), upstream.find(isCallPOST)
	hg, ug := host.find(isResumeGET), upstream.find(isResumeGET)
	if hp == nil || up == nil || hg == nil || ug == nil {
		t.Fatalf("want the call's POST and a resuming GET at both ends: host %v %v, upstream %v %v", hp != nil, hg != nil, up != nil, ug != nil)
	}
	if !bytes.Equal(hp.body, up.body) {
		t.Errorf("the upstream got the POST body %q, the host sent %q", up.body, hp.body)
	}
	if hg.lastEventID != ug.lastEventID {
		t.Errorf("Last-Event-ID: the host sent %q, the upstream got %q", hg.lastEventID, ug.lastEventID)
	}
	hb, ub := hp.bytes(), up.bytes()
	if brokenByHost {
		// The upstream may have written more before it saw the break;
		// the host read a prefix of it, ending on an event's end.
		if !bytes.HasPrefix(ub, hb) || !bytes.HasSuffix(hb, []byte("\n\n")) {
			t.Errorf("the broken stream: the host read\n%q\nthe upstream wrote\n%q", hb, ub)
		}
	} else if !bytes.Equal(hb, ub) {
		t.Errorf("the stream the server closed: the host read\n%q\nthe upstream wrote\n%q", hb, ub)
	}
	if !bytes.Contains(hb, []byte("id: "+hg.lastEventID+"\n")) {
		t.Errorf("the host resumed from %q, not an event of the stream it read:\n%s", hg.lastEventID, hb)
	}
	if gb, ugb := hg.bytes(), ug.bytes(); !bytes.Equal(gb, ugb) || !bytes.Contains(gb, []byte(`all steps done`)) {
		t.Errorf("the resumed stream: the host read\n%q\nthe upstream wrote\n%q\n(want them equal, with the answer)", gb, ugb)
	}
}

// TestHTTPProxyHostResumesBrokenStream: the host's network drops the
// stream of its tools/call after the priming event and the first
// progress; go-sdk's client resumes it with GET Last-Event-ID (after its
// 1 s backoff: go-sdk's server sends no retry on a priming event) through
// the proxy. The upstream replays what it sent meanwhile and goes on; the
// host gets every progress notification once and the answer, byte-exact,
// and the tracker completes the request from the resumed stream.
//
// What the tracker makes of the break: the proxy reports the host's
// closure (CancelGrace later); the era is legacy and no
// notifications/cancelled was sent. A closure alone is no fault there —
// the 2025-11-25 transport says disconnection may happen at any time and
// SHOULD NOT be taken as a cancel, and that a client resumes with
// Last-Event-ID, as this host does — so a proxy that watches for the
// resumption (and says so in its record, trace.NoteHostResumed) must
// flag nothing. A proxy that does not judges the closure at once and
// flags it host_closed_stream_legacy, "not a cancel there": wrong for a
// host that resumes, and checked here as such so that the difference
// shows.
func TestHTTPProxyHostResumesBrokenStream(t *testing.T) {
	upURL, upstream := resumableUpstream(t, 0)
	rp := startHTTPProxy(t, upURL)
	host := &seenExchanges{}
	text, progress := resumingCall(t, rp.url, &breakingTransport{seen: host, breakAfter: 2})
	if text != "all steps done" || progress != resumeSteps {
		t.Errorf("the host got %q after %d progress; want the answer after all %d", text, progress, resumeSteps)
	}
	checkResumed(t, host, upstream, true)
	rp.stop()
	rp.mu.Lock()
	defer rp.mu.Unlock()
	call := rp.request(wire.MethodToolsCall)
	if call == nil || !call.ByHost || call.State != session.StateCompleted || call.Cancel != nil ||
		call.Progress.Count != resumeSteps || call.Late.Response {
		t.Fatalf("tools/call %+v: want the host's, completed from the resumed stream with %d progress, never cancelled", call, resumeSteps)
	}
	// The verdict on the break (see above).
	flags := rp.hostFlags()
	if watches := strings.Contains(rp.trace.String(), "resumed a stream"); watches {
		if len(flags) != 0 {
			t.Errorf("the proxy saw the host resume, and still flags it: %q", flags)
		}
	} else if len(flags) != 1 || !strings.HasPrefix(flags[0], session.ViolationHostClosedStreamLegacy+":") {
		t.Errorf("host flags %q: a proxy that does not watch for the resumption flags the break %s once", flags, session.ViolationHostClosedStreamLegacy)
	}
	if !strings.Contains(rp.trace.String(), `"event":"stream_closed","byClient":true`) {
		t.Errorf("the trace does not show the host's stream closed")
	}
}

// TestHTTPProxyServerClosesStreamHostResumes: the upstream closes the
// call's stream itself after the first progress (with retry: 10, as the
// 2025-11-25 transport lets a server that does not hold connections do);
// go-sdk's client polls it back with GET Last-Event-ID 10 ms later. The
// host closed nothing, and nothing is flagged; every byte of both
// streams reaches it as the upstream wrote it.
func TestHTTPProxyServerClosesStreamHostResumes(t *testing.T) {
	upURL, upstream := resumableUpstream(t, 1)
	rp := startHTTPProxy(t, upURL)
	host := &seenExchanges{}
	text, progress := resumingCall(t, rp.url, &breakingTransport{seen: host})
	if text != "all steps done" || progress != resumeSteps {
		t.Errorf("the host got %q after %d progress; want the answer after all %d", text, progress, resumeSteps)
	}
	checkResumed(t, host, upstream, false)
	if b := host.find(isCallPOST).bytes(); !bytes.Contains(b, []byte("event: close\nretry: 10\n")) {
		t.Errorf("the server's close event did not reach the host:\n%s", b)
	}
	rp.stop()
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if info, _ := rp.tr.Conn(); info.Era != event.EraLegacy {
		t.Errorf("connection %+v: want legacy", info)
	}
	call := rp.request(wire.MethodToolsCall)
	if call == nil || call.State != session.StateCompleted || call.Progress.Count != resumeSteps || call.Cancel != nil {
		t.Fatalf("tools/call %+v: want completed from the resumed stream with %d progress", call, resumeSteps)
	}
	if f := rp.hostFlags(); len(f) != 0 {
		t.Errorf("a host that resumed a stream the server closed is flagged: %q", f)
	}
	if strings.Contains(rp.trace.String(), `"event":"stream_closed"`) {
		t.Errorf("a stream closure by the host was recorded; the server closed it")
	}
}
