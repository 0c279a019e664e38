package proxy

import (
	"bytes"
	"context"
	"encoding/json"
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
	"inflight/internal/loopback"
	"inflight/redact"
	"inflight/session"
	"inflight/wire"
)

// This file is `inflight proxy --listen ADDR --url UPSTREAM`: a reverse
// proxy for Streamable HTTP. Every request the host makes (POST, GET,
// DELETE) goes to UPSTREAM with its headers and body as they come, and
// the upstream's status, headers and body go back the same way: a body is
// forwarded as it is read (an SSE stream flushed after every read, which
// the upstream makes at least once an event), never held whole. A copy of
// each message — the host's POST body, each SSE event's data, a JSON
// response — goes to the same bounded queue and recorder as on stdio: the
// wire never waits for the record.
//
// The host closing a request's response stream before it ended is
// reported to the tracker (Tracker.HostClosedStream), which judges it: on
// modern HTTP it is the host's cancel; on legacy HTTP it is not one, and
// flagged. The upstream request is cancelled with it, so the upstream sees
// the same closure.

// CancelGrace is how long after the host closed a request's stream the
// proxy waits before telling the tracker: a legacy host (go-sdk's client)
// closes the stream and posts notifications/cancelled at the same moment,
// and the POST may well be read second. A cancel read within it counts as
// sent with the closure; the closure keeps its own time.
const CancelGrace = 250 * time.Millisecond

// DefaultMaxHTTPBody bounds what of one HTTP message body the recorder
// keeps (the body itself is forwarded whole).
const DefaultMaxHTTPBody = 4 << 20

// hopHeaders are the hop-by-hop headers a proxy must not pass on.
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
	"Proxy-Connection", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// LoopbackAddr reports whether a listen address's host is loopback
// (localhost, 127.0.0.0/8, ::1).
func LoopbackAddr(addr string) bool { return loopback.Addr(addr) }

// RunHTTP serves the reverse proxy on l, forwarding to upstream (an http
// or https URL), until ctx ends; then it stops serving (streams still open
// are closed after opts.ShutdownWait) and returns once the record is
// complete.
func RunHTTP(ctx context.Context, l net.Listener, upstream string, opts Options) (Result, error) {
	opts = opts.withDefaults()
	up, err := url.Parse(upstream)
	if err != nil || (up.Scheme != "http" && up.Scheme != "https") || up.Host == "" {
		l.Close()
		return Result{}, fmt.Errorf("--url %q: want an http:// or https:// URL", opts.Redactor.String(upstream))
	}
	start := time.Now()
	shown := opts.Redactor.String(up.Redacted())
	q, rec, bc, socket := startRecording(opts, start, event.TransportHTTP, "http://"+l.Addr().String()+" → "+shown)
	res := Result{Socket: socket}

	tp := http.DefaultTransport.(*http.Transport).Clone()
	tp.Proxy = nil               // loopback upstreams stay direct
	tp.DisableCompression = true // the body goes on as the upstream encoded it
	hp := &httpProxy{up: up, client: &http.Client{Transport: tp,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		q: q, maxBody: min(opts.MaxLineBytes, DefaultMaxHTTPBody), say: rec.say, red: opts.Redactor}
	if rec.httpTrace != nil {
		hp.recordExchanges(opts.RecordHTTPBodies)
	}
	// The injector follows every host request in flight, so that the
	// attach view's keys can act on any of them (as on stdio);
	// --read-only without rules is the plain copy.
	if len(opts.Rules) > 0 || !opts.ReadOnly {
		hp.inj = newHTTPInjector(opts.Rules, q, hp.client, opts.Redactor)
		if onHTTPInjector != nil {
			onHTTPInjector(hp.inj)
		}
	}
	if hp.inj == nil {
		bc.takeCommands(nil, opts) // a nil *httpInjector is no actor
	} else {
		bc.takeCommands(hp.inj, opts)
		if opts.Release != nil {
			stopRelease := make(chan struct{})
			defer close(stopRelease)
			go func() {
				for {
					select {
					case <-opts.Release:
						hp.inj.releaseAll()
					case <-stopRelease:
						return
					}
				}
			}()
		}
	}
	srv := &http.Server{Handler: hp, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	select {
	case <-ctx.Done():
		res.End = EndInterrupted
	case err := <-served:
		res.End = EndServerExited
		res.Err = err
	}
	hp.closing.Store(true)
	if hp.inj != nil {
		// What the rules hold goes to the hosts before their streams end.
		hp.inj.beginClose()
	}
	sctx, cancel := context.WithTimeout(context.Background(), opts.ShutdownWait)
	if srv.Shutdown(sctx) != nil {
		srv.Close()
	}
	cancel()
	hp.wg.Wait()
	if hp.inj != nil {
		hp.inj.close(opts.ShutdownWait)
	}
	tp.CloseIdleConnections()
	q.pushControl(line{ctl: ctlClosed, at: time.Now(), err: res.Err})
	q.close()
	<-rec.done
	if bc != nil {
		bc.close()
	}
	res.PeakQueueBytes = q.peakBytes()
	return res, nil
}

// onHTTPInjector, when set, is handed the injector RunHTTP makes (tests
// call its actOn and releaseOne).
var onHTTPInjector func(*httpInjector)

// httpProxy is the reverse proxy's handler.
type httpProxy struct {
	up      *url.URL
	client  *http.Client
	q       *queue
	maxBody int
	say     func(string)
	red     *redact.Redactor
	wg      sync.WaitGroup
	// closing: the proxy is shutting down, so streams it cuts are not
	// the host's cancels (found in review).
	closing atomic.Bool
	// taps numbers the host's POSTs (bodyTap.seq).
	taps atomic.Uint64
	// inj, when rules may act (--rule), sees every POST (http_inject.go).
	inj *httpInjector
}

func (p *httpProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.wg.Add(1)
	defer p.wg.Done()
	if p.refused(w, r) {
		return
	}
	switch sid := r.Header.Get("Mcp-Session-Id"); {
	case r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "":
		// The host resumes a stream: a closure it made before may be a
		// broken connection it recovers from (Tracker.HostResumed).
		p.q.pushControl(line{ctl: ctlHostResumed, at: time.Now(), session: sid})
	case r.Method == http.MethodGet && sid != "":
		// A stream opened afresh: one the server ended before its answer
		// is not resumed by it (Tracker.HostReopenedIn).
		p.q.pushControl(line{ctl: ctlHostReopened, at: time.Now(), session: sid})
	case r.Method == http.MethodDelete && sid != "":
		p.q.pushControl(line{ctl: ctlHostEnded, at: time.Now(), session: sid})
	}
	target := p.upstreamURL(r)
	if creds := hostSecrets(r); len(creds) > 0 {
		defer p.q.afterRecorded(redact.Hold(creds...))
	}
	// The host's body is still being read by the upstream request when
	// the answer's headers are written back: by default Go's HTTP/1
	// server then consumes and closes what is left of it, and the
	// transport's last read of it (for EOF) fails, which closes the
	// upstream connection under the answer's stream — an SSE stream cut
	// mid-way, seen in the benchmark once in three floods (and with
	// httputil.ReverseProxy alike). Full duplex leaves the body alone.
	_ = http.NewResponseController(w).EnableFullDuplex()
	tap, body, sess, seq := p.tapHostBody(r)
	ctx := withTapRef(r.Context(), sess, seq)
	var ex *exchange
	if p.inj != nil && r.Method == http.MethodPost {
		var upCancel context.CancelFunc
		ctx, upCancel = context.WithCancel(ctx)
		defer upCancel()
		ex = p.inj.newExchange(r, target, upCancel)
		ex.session, ex.tap = sess, seq
		if tap != nil {
			tap.onWhole = func(msgs []wire.Message, at time.Time) { p.inj.hostMessages(ex, msgs, at) }
		}
	}
	out, err := upstreamRequest(ctx, r, target, body, tap)
	if err != nil {
		writeJSONError(w, http.StatusBadGateway, "inflight proxy: "+p.red.Error(err))
		return
	}
	if ex != nil {
		p.serveInjected(w, r, out, tap, ex)
		return
	}
	p.forward(w, r, out, tap, sess, seq)
}

// refused answers a request from outside the loopback (a foreign Origin
// or Host header: DNS rebinding) with 403, and reports whether it did.
func (p *httpProxy) refused(w http.ResponseWriter, r *http.Request) bool {
	if origin := r.Header.Get("Origin"); !loopback.Origin(origin) {
		p.say(fmt.Sprintf("refused %s with a foreign Origin %q", r.Method, origin))
		writeJSONError(w, http.StatusForbidden, "Forbidden: Origin is not a loopback origin (inflight proxy)")
		return true
	}
	if !loopback.HostHeader(r) {
		p.say(fmt.Sprintf("refused %s with a foreign Host %q (the proxy listens on loopback)", r.Method, r.Host))
		writeJSONError(w, http.StatusForbidden, "Forbidden: Host is not a loopback name or address (inflight proxy)")
		return true
	}
	return false
}

// upstreamURL is where r goes: the upstream's URL with r's query added to
// its own.
func (p *httpProxy) upstreamURL(r *http.Request) string {
	target := *p.up
	if r.URL.RawQuery != "" {
		if target.RawQuery != "" {
			target.RawQuery += "&"
		}
		target.RawQuery += r.URL.RawQuery
	}
	return target.String()
}

// hostSecrets are the host's credentials: secrets for everything
// inflight shows or writes, like those on its own command line (found in
// review), held until the lines of this exchange are written
// (redact.Hold), then among the newest remembered.
func hostSecrets(r *http.Request) []string {
	var creds []string
	for name, vals := range r.Header {
		if redact.IsSecretName(name) || strings.EqualFold(name, "Authorization") || strings.EqualFold(name, "Cookie") {
			for _, v := range vals {
				creds = append(creds, v)
				if i := strings.IndexByte(v, ' '); i > 0 && len(v)-i > 8 {
					creds = append(creds, strings.TrimSpace(v[i+1:])) // "Bearer <token>"
				}
			}
		}
	}
	return creds
}

// tapHostBody is the body the upstream request reads: a POST's through a
// bodyTap that records the host's messages (numbered seq), nothing
// otherwise. sess is the host session the messages of this exchange are
// of: a legacy host's Mcp-Session-Id; a modern host's POST is one of its
// own (the era has no sessions), so that two hosts using one ID at once
// are told apart (session/observe_reuse.go); none known otherwise.
func (p *httpProxy) tapHostBody(r *http.Request) (tap *bodyTap, body io.Reader, sess string, seq uint64) {
	body = http.NoBody
	sess = r.Header.Get("Mcp-Session-Id")
	modern := wire.IsModernVersion(r.Header.Get("MCP-Protocol-Version"))
	if r.Body != nil && r.Method == http.MethodPost {
		seq = p.taps.Add(1)
		if sess == "" && modern {
			sess = session.PostSession + strconv.FormatUint(seq, 10)
		}
		tap = &bodyTap{src: r.Body, max: p.maxBody, q: p.q, want: r.ContentLength, session: sess, seq: seq}
		body = tap
	}
	return tap, body, sess, seq
}

// upstreamRequest is r as it goes to target, with r's headers, reading
// body.
func upstreamRequest(ctx context.Context, r *http.Request, target string, body io.Reader, tap *bodyTap) (*http.Request, error) {
	out, err := http.NewRequestWithContext(ctx, r.Method, target, body)
	if err != nil {
		return nil, err
	}
	out.ContentLength = r.ContentLength
	if r.ContentLength == 0 && tap != nil {
		out.Body = http.NoBody
	}
	copyHeader(out.Header, r.Header)
	if _, ok := r.Header["User-Agent"]; !ok {
		out.Header["User-Agent"] = nil // Go's client adds none then
	}
	return out, nil
}

// forward sends out upstream and passes its answer on to the host as it
// comes, recording it (no rule may act).
func (p *httpProxy) forward(w http.ResponseWriter, r *http.Request, out *http.Request, tap *bodyTap, sess string, seq uint64) {
	resp, err := p.client.Do(out)
	if tap != nil {
		tap.finish() // the host's message is recorded before any answer to it
	}
	if err != nil {
		if r.Context().Err() != nil {
			p.hostClosed(tap)
			return
		}
		// The error names the upstream's URL: what it carries is masked.
		msg := p.red.Error(err)
		p.say(fmt.Sprintf("%s to the upstream failed: %s", r.Method, msg))
		writeJSONError(w, http.StatusBadGateway, "inflight proxy: the upstream did not answer: "+msg)
		return
	}
	defer resp.Body.Close()
	copyHeader(w.Header(), resp.Header)
	w.WriteHeader(resp.StatusCode)
	hostGone, readErr := p.copyBody(w, resp, sess, seq)
	if hostGone || (readErr != nil && r.Context().Err() != nil) {
		p.hostClosed(tap)
		return
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/event-stream" {
		p.upstreamEnded(tap)
	}
	if readErr != nil {
		// The upstream broke off: say so, and let the host see the broken
		// response rather than a clean end (found in review).
		p.say(fmt.Sprintf("%s: the upstream's response broke off: %s", r.Method, p.red.Error(readErr)))
		panic(http.ErrAbortHandler)
	}
}

// copyBody passes resp's body on to the host, an SSE stream flushed event
// by event, and records it: an SSE stream's events as they come, a JSON
// body whole. It ends with the body, or as soon as the host is gone
// (hostGone); readErr is how the upstream's body broke off.
func (p *httpProxy) copyBody(w http.ResponseWriter, resp *http.Response, sess string, seq uint64) (hostGone bool, readErr error) {
	rc := http.NewResponseController(w)
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	sse := mt == "text/event-stream"
	var events *sseSplitter
	var whole *bodyTap
	switch {
	case sse:
		events = &sseSplitter{max: p.maxBody, session: sess, tap: seq}
		_ = rc.Flush() // the host sees the stream open at once
	case mt == "application/json":
		whole = &bodyTap{max: p.maxBody, q: p.q, from: FromServer, session: sess, seq: seq}
	}
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			at := time.Now()
			// What the server said is queued before the host can read it:
			// no rule acts on this path, and a host acts on what it reads at
			// once — answers a question, or ends its session (DELETE) on
			// the answer it was waiting for — which must not reach the
			// recorder before what it answers.
			if events != nil {
				p.q.push(expandBatches(events.feed(buf[:n], at)))
			}
			if _, werr := w.Write(buf[:n]); werr != nil {
				hostGone = true
			} else if sse {
				if rc.Flush() != nil {
					hostGone = true
				}
			}
			if whole != nil {
				whole.keep(buf[:n])
			}
		}
		if hostGone {
			break
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				readErr = err
			}
			break
		}
	}
	if whole != nil && !hostGone {
		whole.finish()
	}
	return hostGone, readErr
}

// hostClosed reports that the host closed the response stream of the
// request its POST carried (nothing for a GET stream or a notification),
// CancelGrace after it did. It runs on the handler's goroutine, whose host
// is gone: nothing waits for it but the proxy's shutdown.
func (p *httpProxy) hostClosed(tap *bodyTap) {
	if tap == nil || len(tap.ids) == 0 || p.closing.Load() {
		return
	}
	at := time.Now()
	if !strings.HasPrefix(tap.session, session.PostSession) {
		// A legacy host posts notifications/cancelled with the closure:
		// it is waited for. A modern host's closure is its cancel, said
		// at once (a host that comes next with the ID must find it over).
		time.Sleep(CancelGrace)
	}
	for _, id := range tap.ids {
		p.q.pushControl(line{ctl: ctlStreamClosed, at: at, id: id, session: tap.session, tap: tap.seq})
	}
}

// upstreamEnded reports that the upstream's SSE stream of the request
// its POST carried ended while the host still read it (a legacy
// session's; the recorder lets an answered request be).
func (p *httpProxy) upstreamEnded(tap *bodyTap) {
	if tap == nil || strings.HasPrefix(tap.session, session.PostSession) || p.closing.Load() {
		return
	}
	at := time.Now()
	for _, id := range tap.ids {
		p.q.pushControl(line{ctl: ctlUpstreamEnded, at: at, id: id, session: tap.session, tap: tap.seq})
	}
}

// bodyTap keeps the first max bytes of a body for the recorder as it is
// forwarded (src set: it reads through), and hands them over as one line
// at its end.
type bodyTap struct {
	src   io.Reader
	max   int
	q     *queue
	from  Source
	buf   []byte
	total int
	// read is when the last of the body was read: when the host's
	// message was sent on, which the record's time is.
	read time.Time
	// mu: the transport may still read the body (Read) when the upstream
	// answered early and the handler records it (finish).
	mu   sync.Mutex
	once sync.Once
	// ids are the IDs of the requests the body carried (one, or a
	// batch's); msgs its messages, decoded (host bodies only).
	ids  []wire.ID
	msgs []wire.Message
	// onWhole, when set, sees the host's messages once they are recorded
	// (http_inject.go), before the upstream has the body's end.
	onWhole func(msgs []wire.Message, at time.Time)
	// want is the body's Content-Length (0: unknown); eof: its end was
	// read (Read's goroutine only).
	want int64
	eof  bool
	// session is the host's Mcp-Session-Id on the request; seq numbers
	// the POST (line.tap).
	session string
	seq     uint64
}

func (b *bodyTap) Read(p []byte) (int, error) {
	if b.eof {
		// Never the host's body again once its end was seen: the server
		// closes it as soon as the answer's head is written, and the
		// transport's last read (looking for bytes past Content-Length)
		// would fail, and take the upstream connection with it.
		return 0, io.EOF
	}
	n, err := b.src.Read(p)
	b.mu.Lock()
	b.keep(p[:n])
	b.read = time.Now()
	whole := err == io.EOF || (b.want > 0 && int64(b.total) >= b.want)
	b.mu.Unlock()
	if whole && err == nil {
		// Read the host's body to its end, which the transport stops
		// short of: only then does the server watch the host's connection,
		// and see the host close it while the upstream is silent (or a
		// rule holds the answer).
		var one [1]byte
		if m, e := b.src.Read(one[:]); m == 0 && e == io.EOF {
			err = io.EOF
		}
	}
	if err == io.EOF {
		b.eof = true
	}
	if whole {
		// Recorded as soon as it is sent on, not when the upstream answers
		// (a slow tools/call would show as nothing in flight): found in
		// review.
		b.finish()
	}
	return n, err
}

func (b *bodyTap) keep(p []byte) {
	b.total += len(p)
	if room := b.max - len(b.buf); room > 0 {
		b.buf = append(b.buf, p[:min(room, len(p))]...)
	}
}

// finish hands the body to the recorder, once.
func (b *bodyTap) finish() {
	b.once.Do(func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		raw := bytes.Clone(bytes.TrimSpace(b.buf))
		if len(raw) == 0 {
			return
		}
		total := len(raw) + (b.total - len(b.buf))
		at := b.read
		if at.IsZero() || b.src == nil {
			at = time.Now()
		}
		ls := expandBatch(line{from: b.from, at: at, raw: raw, total: total, session: b.session, tap: b.seq})
		if b.from == FromHost {
			for _, l := range ls {
				if l.total != len(l.raw) {
					continue
				}
				if m, err := wire.Decode(l.raw); err == nil {
					if m.Kind == wire.KindRequest {
						b.ids = append(b.ids, m.ID)
					}
					b.msgs = append(b.msgs, m)
				}
			}
		}
		b.q.push(ls)
		if b.onWhole != nil {
			// After the push: the host's message is recorded before
			// anything a rule does about it.
			b.onWhole(b.msgs, at)
		}
	})
}

// expandBatch cuts a JSON-RPC batch (a JSON array of messages, which a
// 2025-03-26 host may POST and a server answer with) into one line per
// message, each its bytes as they stand in the array; anything else, and a
// body recorded only in part, stays one line.
func expandBatch(l line) []line {
	if l.total != len(l.raw) || len(l.raw) < 2 || l.raw[0] != '[' {
		return []line{l}
	}
	var elems []json.RawMessage
	if json.Unmarshal(l.raw, &elems) != nil || len(elems) == 0 {
		return []line{l}
	}
	out := make([]line, 0, len(elems))
	for _, e := range elems {
		out = append(out, line{from: l.from, at: l.at, raw: []byte(e), total: len(e), end: l.end, session: l.session, tap: l.tap})
	}
	return out
}

// expandBatches is expandBatch over lines.
func expandBatches(ls []line) []line {
	for i := range ls {
		if len(ls[i].raw) > 0 && ls[i].raw[0] == '[' {
			var out []line
			for _, l := range ls {
				out = append(out, expandBatch(l)...)
			}
			return out
		}
	}
	return ls
}

// sseSplitter cuts an SSE stream into its events' data, one line each for
// the recorder (the stream itself is forwarded as it came).
type sseSplitter struct {
	max int
	// session and tap are the exchange's, for every line it cuts.
	session string
	tap     uint64
	// partial is an unfinished line of the stream (its first max+64
	// bytes), partialLen its whole length so far.
	partial    []byte
	partialLen int
	data       []byte // the event's data so far (its first max bytes)
	total      int    // the event's data's whole length
	hasData    bool
	lastCR     bool
}

func (s *sseSplitter) feed(chunk []byte, at time.Time) []line {
	var out []line
	keep := s.max + 64
	for len(chunk) > 0 {
		if s.lastCR && chunk[0] == '\n' {
			chunk = chunk[1:]
			s.lastCR = false
			continue
		}
		s.lastCR = false
		i := bytes.IndexAny(chunk, "\r\n")
		if i < 0 {
			s.partial = append(s.partial, chunk[:min(len(chunk), max(keep-len(s.partial), 0))]...)
			s.partialLen += len(chunk)
			return out
		}
		s.lastCR = chunk[i] == '\r'
		ln, lnLen := chunk[:i], i
		if s.partialLen > 0 {
			s.partial = append(s.partial, ln[:min(len(ln), max(keep-len(s.partial), 0))]...)
			ln, lnLen = s.partial, s.partialLen+i
		}
		chunk = chunk[i+1:]
		if l, ok := s.line(ln, lnLen, at); ok {
			out = append(out, l)
		}
		s.partial, s.partialLen = s.partial[:0], 0
	}
	return out
}

// line takes one line of the stream (ln its first bytes, lnLen its whole
// length); a blank one ends an event.
func (s *sseSplitter) line(ln []byte, lnLen int, at time.Time) (line, bool) {
	if lnLen == 0 {
		if !s.hasData {
			return line{}, false
		}
		l := line{from: FromServer, at: at, raw: bytes.Clone(s.data), total: s.total, session: s.session, tap: s.tap}
		s.data, s.total, s.hasData = s.data[:0], 0, false
		return l, len(bytes.TrimSpace(l.raw)) > 0
	}
	field, value, _ := bytes.Cut(ln, []byte(":"))
	if string(field) != "data" {
		return line{}, false
	}
	value = bytes.TrimPrefix(value, []byte(" "))
	valueLen := lnLen - (len(ln) - len(value))
	if s.hasData {
		s.total++
		if len(s.data) < s.max {
			s.data = append(s.data, '\n')
		}
	}
	s.hasData = true
	s.total += valueLen
	if room := s.max - len(s.data); room > 0 {
		s.data = append(s.data, value[:min(room, len(value))]...)
	}
	return line{}, false
}

func copyHeader(dst, src http.Header) {
	for k, vs := range src {
		dst[k] = append([]string(nil), vs...)
	}
	for _, h := range hopHeaders {
		dst.Del(h)
	}
	if c := src.Get("Connection"); c != "" {
		for _, f := range strings.Split(c, ",") {
			dst.Del(strings.TrimSpace(f))
		}
	}
}

// writeJSONError answers with a JSON-RPC error without an id.
func writeJSONError(w http.ResponseWriter, status int, message string) {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0",
		"error": map[string]any{"code": -32000, "message": message}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
