package hostile

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"inflight/wire"
)

// SessionID is the Mcp-Session-Id HTTP peers give a legacy client.
const SessionID = "hostile-session"

// HTTP is a hostile Streamable HTTP server. It answers the set-up of either
// era (server/discover as a modern server, initialize as a legacy one with
// a session), accepts notifications, offers no GET stream, and hands each
// tools/call to its misbehaviour.
type HTTP struct {
	name string
	call func(w http.ResponseWriter, r *http.Request, req Request)
	// handshake, when set, writes the answer to server/discover or
	// initialize itself (reply is the well-formed answer).
	handshake func(w http.ResponseWriter, msg wire.Message, reply []byte)
	calls     atomic.Int64
	posts     atomic.Int64
	// answers counts responses the client POSTed (to the server's own
	// requests), each held answerDelay before its 202; conns counts the
	// connections NewServer accepted.
	answers     atomic.Int64
	answerDelay time.Duration
	conns       atomic.Int64
	// holdNotices holds every notifications/cancelled POST that long
	// before its 202 (or until the client gives up on it).
	holdNotices time.Duration
}

// Answers is how many responses (to the peer's own requests) the client
// POSTed.
func (h *HTTP) Answers() int { return int(h.answers.Load()) }

// Conns is how many TCP connections the server behind NewServer accepted.
func (h *HTTP) Conns() int { return int(h.conns.Load()) }

// Name says what the peer does wrong.
func (h *HTTP) Name() string { return h.name }

// Calls is how many tools/call requests reached the peer.
func (h *HTTP) Calls() int { return int(h.calls.Load()) }

// Posts is how many POSTs reached the peer.
func (h *HTTP) Posts() int { return int(h.posts.Load()) }

// ServeHTTP implements http.Handler.
func (h *HTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
	case http.MethodDelete:
		w.WriteHeader(http.StatusOK)
		return
	default:
		http.Error(w, "no GET stream here", http.StatusMethodNotAllowed)
		return
	}
	h.posts.Add(1)
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return
	}
	msg, err := wire.Decode(body)
	if err != nil {
		http.Error(w, "not JSON-RPC: "+err.Error(), http.StatusBadRequest)
		return
	}
	if msg.Kind != wire.KindRequest {
		if msg.IsResponse() {
			h.answers.Add(1)
			if h.answerDelay > 0 {
				time.Sleep(h.answerDelay)
			}
		} else if h.holdNotices > 0 && msg.Method == wire.NotifyCancelled {
			select {
			case <-time.After(h.holdNotices):
			case <-r.Context().Done():
				return
			}
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if reply, ok := setUpReply(h.name, msg); ok {
		if msg.Method == wire.MethodInitialize {
			w.Header().Set("Mcp-Session-Id", SessionID)
		}
		if h.handshake != nil && (msg.Method == wire.MethodDiscover || msg.Method == wire.MethodInitialize) {
			h.handshake(w, msg, reply)
			return
		}
		writeJSON(w, reply)
		return
	}
	if msg.Method != wire.MethodToolsCall || h.call == nil {
		writeJSON(w, wire.ErrorResponse(msg.ID, wire.CodeMethodNotFound, "hostile peer: method not found"))
		return
	}
	h.calls.Add(1)
	h.call(w, r, Request{ID: msg.ID, Method: msg.Method, Params: msg.Params, Token: progressToken(msg.Params)})
}

func writeJSON(w http.ResponseWriter, msg []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(msg)))
	_, _ = w.Write(msg)
}

// startSSE begins an event stream and flushes the headers.
func startSSE(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flush(w)
}

func flush(w http.ResponseWriter) {
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// sseEvent writes one message as an SSE event.
func sseEvent(w io.Writer, msg []byte) error {
	_, err := fmt.Fprintf(w, "event: message\ndata: %s\n\n", msg)
	return err
}

// Plain is a well-behaved peer: it answers tools/call at once. It is the
// other end of Redirect and the server behind a TLS error.
func Plain() *HTTP {
	return &HTTP{name: "plain", call: func(w http.ResponseWriter, _ *http.Request, req Request) {
		writeJSON(w, wire.ResultResponse(req.ID, []byte(textResult("a plain answer"))))
	}}
}

// SSECommentsForever answers tools/call with an event stream that carries
// nothing but SSE comments, as fast as it can, until the client goes away.
// There is never a blank line, so no event is ever dispatched either.
func SSECommentsForever() *HTTP {
	return &HTTP{name: "sse-comments-forever", call: func(w http.ResponseWriter, r *http.Request, _ Request) {
		startSSE(w)
		chunk := bytes.Repeat([]byte(": keep-alive, nothing to see\n"), 1024)
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
			flush(w)
		}
	}}
}

// GzipBombSize is what GzipBomb's body would inflate to.
const GzipBombSize = 1 << 30

var (
	bombOnce sync.Once
	bomb     []byte
)

// gzipBomb is a gzip body of GzipBombSize zero bytes: one member of 4 MiB,
// repeated (a gzip file may hold many members, and readers join them).
// Compressing a whole gibibyte would take seconds; this takes milliseconds.
func gzipBomb() []byte {
	bombOnce.Do(func() {
		const member = 4 << 20
		var one bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&one, gzip.BestCompression)
		_, _ = zw.Write(make([]byte, member))
		_ = zw.Close()
		bomb = bytes.Repeat(one.Bytes(), GzipBombSize/member)
	})
	return bomb
}

// GzipBomb answers tools/call with Content-Encoding: gzip — which the client
// never asked for — and a body that would inflate to GzipBombSize.
func GzipBomb() *HTTP {
	return &HTTP{name: "gzip-bomb", call: func(w http.ResponseWriter, _ *http.Request, _ Request) {
		b := gzipBomb()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		_, _ = w.Write(b)
	}}
}

// Redirect answers tools/call with 307 Temporary Redirect (which keeps the
// method and body) to url, typically another server: another host.
func Redirect(url string) *HTTP {
	return &HTTP{name: "redirect", call: func(w http.ResponseWriter, r *http.Request, _ Request) {
		http.Redirect(w, r, url, http.StatusTemporaryRedirect)
	}}
}

// AnswersFirstHTTP streams its answer to the set-up (server/discover or
// initialize) as SSE, preceded by answers and progress for requests 1 and 2,
// which the client has not sent yet; it answers tools/call properly.
func AnswersFirstHTTP() *HTTP {
	return &HTTP{name: "answers-first", handshake: func(w http.ResponseWriter, _ wire.Message, reply []byte) {
		startSSE(w)
		_ = sseEvent(w, wire.ResultResponse(wire.IntID(1), []byte(textResult("answered before it was asked"))))
		_ = sseEvent(w, progressNotification("2", 1, 2, "progress before the request"))
		_ = sseEvent(w, wire.ErrorResponse(wire.IntID(2), wire.CodeInternalError, "failed before it was asked"))
		_ = sseEvent(w, reply)
	}, call: func(w http.ResponseWriter, _ *http.Request, req Request) {
		writeJSON(w, wire.ResultResponse(req.ID, []byte(textResult("the real answer"))))
	}}
}

// PingFloodHTTP answers tools/call with an event stream of n pings (legacy
// era: the server may ask), then the tool's result. The client answers
// each ping with a POST of its own, which the peer holds a millisecond
// before its 202, as a busy server would: a client that POSTs every answer
// at once opens a connection for each (issue 14, item 5: 3 000 pings opened
// 3 010 descriptors).
func PingFloodHTTP(n int) *HTTP {
	return &HTTP{name: "ping-flood", answerDelay: time.Millisecond, call: func(w http.ResponseWriter, r *http.Request, req Request) {
		startSSE(w)
		for i := 1; i <= n; i++ {
			if sseEvent(w, wire.Request(wire.StringID(fmt.Sprintf("flood-%d", i)), wire.MethodPing, nil)) != nil {
				return
			}
			if i%64 == 0 {
				flush(w)
			}
		}
		_ = sseEvent(w, wire.ResultResponse(req.ID, []byte(textResult(fmt.Sprintf("sent %d pings", n)))))
		flush(w)
	}}
}

// SessionIDPeer opens a legacy session whose Mcp-Session-Id is sid, which
// a test makes invalid (non-ASCII, a space, a control): the client must not
// send it back. It is otherwise Plain.
func SessionIDPeer(sid string) *HTTP {
	h := Plain()
	h.name = "session-id"
	h.handshake = func(w http.ResponseWriter, msg wire.Message, reply []byte) {
		if msg.Method == wire.MethodInitialize {
			w.Header()["Mcp-Session-Id"] = []string{sid}
		}
		writeJSON(w, reply)
	}
	return h
}

// NoHeaders reads every POST and never sends its response headers, until
// the client goes away: a server stuck before its first byte.
func NoHeaders() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	})
}

// HugeEvent answers tools/call with an SSE event whose data is
// HugeLineBytes long, streamed.
func HugeEvent() *HTTP {
	return &HTTP{name: "huge-event", call: func(w http.ResponseWriter, _ *http.Request, _ Request) {
		startSSE(w)
		if _, err := io.WriteString(w, "event: message\ndata: "); err != nil {
			return
		}
		if writeHugeMessage(w, HugeLineBytes) != nil {
			return
		}
		_, _ = io.WriteString(w, "\n")
	}}
}

// NewServer starts h on 127.0.0.1, with TLS when useTLS is set. The TLS
// server's certificate is trusted by nothing, which is the point of a TLS
// error test. Its log of failed handshakes is dropped: they are expected.
func NewServer(h http.Handler, useTLS bool) *httptest.Server {
	ts := httptest.NewUnstartedServer(h)
	ts.Config.ErrorLog = log.New(io.Discard, "", 0)
	if hp, ok := h.(*HTTP); ok {
		ts.Config.ConnState = func(_ net.Conn, st http.ConnState) {
			if st == http.StateNew {
				hp.conns.Add(1)
			}
		}
	}
	if useTLS {
		ts.StartTLS()
	} else {
		ts.Start()
	}
	return ts
}

// ResumeOverGET is a legacy server that answers tools/call only over a
// resumed stream: the POST's SSE stream carries a priming event (an ID, no
// data) and is closed at once, and the answer comes on the GET that
// resumes with Last-Event-ID. Its standalone GET stream (no Last-Event-ID)
// opens after GetDelay and stays open, sending nothing. It records whether
// the standalone GET had been answered when tools/call arrived: a client
// that sends its first request while the GET is still being opened leaves
// the server unable to tell one GET from the other (issue 14, item 13).
type ResumeOverGET struct {
	GetDelay time.Duration

	mu         sync.Mutex
	getOpen    bool
	pending    wire.ID // the tools/call to answer on resumption
	log        []string
	raceBefore bool // tools/call arrived before the standalone GET was answered
}

// PrimingID is the event ID ResumeOverGET primes a POST's stream with.
const PrimingID = "prime-1"

// Log is what the peer saw, in order: "POST <method>", "GET", "GET
// Last-Event-ID=<id>".
func (p *ResumeOverGET) Log() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.log...)
}

// Raced reports whether a tools/call arrived while the standalone GET was
// still being opened.
func (p *ResumeOverGET) Raced() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.raceBefore
}

func (p *ResumeOverGET) note(s string) {
	p.mu.Lock()
	p.log = append(p.log, s)
	p.mu.Unlock()
}

// ServeHTTP implements http.Handler.
func (p *ResumeOverGET) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodDelete:
		w.WriteHeader(http.StatusOK)
		return
	case http.MethodGet:
		if last := r.Header.Get("Last-Event-ID"); last != "" {
			p.note("GET Last-Event-ID=" + last)
			p.mu.Lock()
			id := p.pending
			p.mu.Unlock()
			startSSE(w)
			if last == PrimingID && !id.IsZero() {
				_, _ = fmt.Fprintf(w, "id: answer-1\n")
				_ = sseEvent(w, wire.ResultResponse(id, []byte(textResult("answered on the resumed stream"))))
				flush(w)
			}
			return
		}
		p.note("GET")
		time.Sleep(p.GetDelay)
		// Marked open just before the headers go, so that a request sent
		// once they arrived can never look like one that raced them.
		p.mu.Lock()
		p.getOpen = true
		p.mu.Unlock()
		startSSE(w)
		<-r.Context().Done()
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return
	}
	msg, err := wire.Decode(body)
	if err != nil {
		http.Error(w, "not JSON-RPC", http.StatusBadRequest)
		return
	}
	p.note("POST " + msg.Method)
	if msg.Kind != wire.KindRequest {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if reply, ok := setUpReply("resume-over-get", msg); ok {
		if msg.Method == wire.MethodInitialize {
			w.Header().Set("Mcp-Session-Id", SessionID)
		}
		writeJSON(w, reply)
		return
	}
	p.mu.Lock()
	if !p.getOpen {
		p.raceBefore = true
	}
	p.pending = msg.ID
	p.mu.Unlock()
	startSSE(w)
	_, _ = fmt.Fprintf(w, "id: %s\nretry: 10\ndata:\n\n", PrimingID)
	flush(w)
}

// HoldsCancelPOST streams progress on every tools/call until the client
// goes, and holds each notifications/cancelled POST (a legacy cancel) for
// a minute: a client must not wait for that POST when its user insists.
func HoldsCancelPOST() *HTTP {
	return &HTTP{name: "holds-cancel-post", holdNotices: time.Minute, call: func(w http.ResponseWriter, r *http.Request, req Request) {
		startSSE(w)
		for i := 1; ; i++ {
			if sseEvent(w, progressNotification(req.Token.Raw(), float64(i), 0, "working")) != nil {
				return
			}
			select {
			case <-r.Context().Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}}
}
