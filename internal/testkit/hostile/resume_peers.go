package hostile

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"inflight/wire"
)

// ResumeMode says how a Resumable peer misbehaves.
type ResumeMode uint8

// The modes of a Resumable peer.
const (
	// Redelivers is the well-behaved peer: every event has an ID, and a GET
	// with Last-Event-ID replays what followed it on that stream, then goes
	// on with the stream live until its response.
	Redelivers ResumeMode = iota
	// NoRedelivery gives every event an ID but answers a GET with
	// Last-Event-ID with an empty stream it holds open: the rest of the
	// interrupted stream (progress, the response) never arrives.
	NoRedelivery
	// ReplaysOther, on a GET with Last-Event-ID, first replays every event
	// of another stream (the last other call's), then redelivers the
	// stream's own rest: messages that belong to another request arrive on
	// the resumed stream.
	ReplaysOther
	// NoEventIDs gives no event an ID: nothing can be resumed.
	NoEventIDs
	// MixesProgress sends, on each call's stream, progress for the token of
	// every other call in flight as well as its own: two requests' streams
	// mixed (the token used by two requests). Its events have no IDs, so
	// that no resumption mixes in: another request's message on a resumed
	// stream reads as a replay of another stream.
	MixesProgress
	// UnknownToken sends, on each call's stream, one progress notification
	// for a token no request ever carried, before its own progress.
	UnknownToken
)

var resumeModeNames = map[ResumeMode]string{
	Redelivers: "redelivers", NoRedelivery: "no-redelivery", ReplaysOther: "replays-other-stream",
	NoEventIDs: "no-event-ids", MixesProgress: "mixes-progress", UnknownToken: "unknown-progress-token",
}

// UnknownProgressToken is the token UnknownToken reports progress for.
const UnknownProgressToken = "never-issued-token"

// Resumable is a legacy (2025-11-25) Streamable HTTP server whose calls
// outlive their connections, as a server with an event store's do: each
// tools/call runs Steps progress steps Interval apart, then answers, on a
// stream of its own whose events are kept; a client that drops the
// connection and resumes with a GET carrying Last-Event-ID gets what Mode
// says. Dropping the connection cancels nothing; notifications/cancelled
// stops the call. A GET without Last-Event-ID is refused (405): it offers
// no standalone stream.
type Resumable struct {
	Mode     ResumeMode
	Steps    int
	Interval time.Duration
	// Conflicts is how many resuming GETs are first refused with 409
	// Conflict, as a server that has not yet seen the old connection go
	// refuses them (go-sdk: "stream ID conflicts with ongoing stream").
	Conflicts  int
	conflicted int

	mu      sync.Mutex
	streams []*resumeStream
	log     []string
}

// resumeStream is one call's stream: every event it sent (data, with its
// ID), the writer of the connection now carrying it (nil: none), and
// whether it is over.
type resumeStream struct {
	n      int
	req    Request
	events [][]byte
	w      http.ResponseWriter
	// wake is closed when the stream has something new, or ended.
	wake      chan struct{}
	done      bool
	cancelled bool
}

// Name says what the peer does.
func (p *Resumable) Name() string { return "resumable-" + resumeModeNames[p.Mode] }

// Log is what the peer saw, in order: "POST <method>", "GET
// Last-Event-ID=<id>", "dropped <stream>".
func (p *Resumable) Log() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.log...)
}

func (p *Resumable) note(s string) {
	p.mu.Lock()
	p.log = append(p.log, s)
	p.mu.Unlock()
}

// ServeHTTP implements http.Handler.
func (p *Resumable) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodDelete:
		w.WriteHeader(http.StatusOK)
	case http.MethodGet:
		last := r.Header.Get("Last-Event-ID")
		if last == "" {
			http.Error(w, "no standalone GET stream here", http.StatusMethodNotAllowed)
			return
		}
		p.note("GET Last-Event-ID=" + last)
		p.resume(w, r, last)
	case http.MethodPost:
		p.post(w, r)
	default:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

func (p *Resumable) post(w http.ResponseWriter, r *http.Request) {
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
		if msg.Method == wire.NotifyCancelled {
			if c, err := wire.DecodeCancelled(msg.Params); err == nil {
				p.cancel(c.RequestID)
			}
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if reply, ok := setUpReply(p.Name(), msg); ok {
		if msg.Method == wire.MethodInitialize {
			w.Header().Set("Mcp-Session-Id", SessionID)
		}
		writeJSON(w, reply)
		return
	}
	if msg.Method != wire.MethodToolsCall {
		writeJSON(w, wire.ErrorResponse(msg.ID, wire.CodeMethodNotFound, "hostile peer: method not found"))
		return
	}
	st := p.open(Request{ID: msg.ID, Method: msg.Method, Params: msg.Params, Token: progressToken(msg.Params)})
	startSSE(w)
	if p.ids() {
		// A priming event: an ID to resume from, no message.
		_, _ = fmt.Fprintf(w, "id: %s\ndata:\n\n", eventID(st.n, 0))
		flush(w)
	}
	go p.work(st)
	p.serve(w, r, st, 0)
}

// open registers a new call's stream.
func (p *Resumable) open(req Request) *resumeStream {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := &resumeStream{n: len(p.streams) + 1, req: req, wake: make(chan struct{})}
	p.streams = append(p.streams, st)
	return st
}

// ids says the peer gives its events IDs.
func (p *Resumable) ids() bool { return p.Mode != NoEventIDs && p.Mode != MixesProgress }

func eventID(stream, i int) string { return fmt.Sprintf("s%d-%d", stream, i) }

// parseEventID reads "s<stream>-<i>".
func parseEventID(id string) (stream, i int, ok bool) {
	s, n, found := strings.Cut(strings.TrimPrefix(id, "s"), "-")
	if !found {
		return 0, 0, false
	}
	a, err1 := strconv.Atoi(s)
	b, err2 := strconv.Atoi(n)
	return a, b, err1 == nil && err2 == nil
}

// work runs one call: its progress steps, then its answer, each an event
// of its stream whether or not a connection carries it now.
func (p *Resumable) work(st *resumeStream) {
	if p.Mode == UnknownToken {
		p.emit(st, progressNotification(strconv.Quote(UnknownProgressToken), 1, 1, "a token nobody sent"))
	}
	for step := 1; step <= p.Steps; step++ {
		if !st.req.Token.IsZero() {
			p.emit(st, progressNotification(st.req.Token.Raw(), float64(step), float64(p.Steps), ""))
		}
		if p.Mode == MixesProgress {
			for _, tok := range p.othersInFlight(st) {
				p.emit(st, progressNotification(tok.Raw(), float64(step)+0.5, float64(p.Steps+1), "another call's progress"))
			}
		}
		time.Sleep(p.Interval)
		if p.isCancelled(st) {
			p.end(st)
			return
		}
	}
	p.emit(st, wire.ResultResponse(st.req.ID, []byte(textResult(fmt.Sprintf("%d steps", p.Steps)))))
	p.end(st)
}

// othersInFlight are the tokens of the other calls still running.
func (p *Resumable) othersInFlight(st *resumeStream) []wire.ID {
	p.mu.Lock()
	defer p.mu.Unlock()
	var toks []wire.ID
	for _, o := range p.streams {
		if o != st && !o.done && !o.cancelled && !o.req.Token.IsZero() {
			toks = append(toks, o.req.Token)
		}
	}
	return toks
}

// emit keeps an event of st and writes it on the connection carrying st,
// if any.
func (p *Resumable) emit(st *resumeStream, msg []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st.events = append(st.events, msg)
	if st.w != nil {
		p.write(st.w, st.n, len(st.events), msg)
	}
}

// write writes event i of stream n (with its ID unless the mode gives none).
func (p *Resumable) write(w http.ResponseWriter, n, i int, msg []byte) {
	if p.ids() {
		_, _ = fmt.Fprintf(w, "id: %s\n", eventID(n, i))
	}
	_ = sseEvent(w, msg)
	flush(w)
}

func (p *Resumable) end(st *resumeStream) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st.done = true
	close(st.wake)
}

func (p *Resumable) cancel(id wire.ID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, st := range p.streams {
		if st.req.ID == id {
			st.cancelled = true
		}
	}
}

func (p *Resumable) isCancelled(st *resumeStream) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return st.cancelled
}

// serve carries st on w from event from on, until st ends or the client
// goes (then st is detached: its events are kept for a resumption).
func (p *Resumable) serve(w http.ResponseWriter, r *http.Request, st *resumeStream, from int) {
	p.mu.Lock()
	for i := from; i < len(st.events); i++ {
		p.write(w, st.n, i+1, st.events[i])
	}
	st.w = w
	wake := st.wake
	p.mu.Unlock()
	select {
	case <-wake:
	case <-r.Context().Done():
		p.note(fmt.Sprintf("dropped s%d", st.n))
	}
	p.mu.Lock()
	if st.w == w {
		st.w = nil
	}
	p.mu.Unlock()
}

// resume answers a GET with Last-Event-ID as the mode says.
func (p *Resumable) resume(w http.ResponseWriter, r *http.Request, last string) {
	n, i, ok := parseEventID(last)
	p.mu.Lock()
	if p.conflicted < p.Conflicts {
		p.conflicted++
		p.mu.Unlock()
		http.Error(w, "stream ID conflicts with ongoing stream", http.StatusConflict)
		return
	}
	var st, other *resumeStream
	if ok && n >= 1 && n <= len(p.streams) {
		st = p.streams[n-1]
		for _, o := range p.streams {
			if o != st {
				other = o
			}
		}
	}
	p.mu.Unlock()
	if st == nil || !p.ids() {
		http.Error(w, "unknown Last-Event-ID", http.StatusBadRequest)
		return
	}
	startSSE(w)
	switch p.Mode {
	case NoRedelivery:
		<-r.Context().Done()
		return
	case ReplaysOther:
		if other != nil {
			p.mu.Lock()
			for j, msg := range other.events {
				p.write(w, other.n, j+1, msg)
			}
			p.mu.Unlock()
		}
	}
	p.serve(w, r, st, i)
}
