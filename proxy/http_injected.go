package proxy

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"slices"
	"strconv"
	"time"

	"inflight/wire"
)

// injectedReply is the handler's side of one POST of the host's while
// rules may act (see http_inject.go's comment): it alone writes to the
// host, and it keeps what it has written and what it holds back between
// the upstream's pieces, the rules' commands, the host's end and the
// proxy's.
type injectedReply struct {
	p   *httpProxy
	in  *httpInjector
	w   http.ResponseWriter
	rc  *http.ResponseController
	r   *http.Request
	tap *bodyTap
	ex  *exchange

	// headersDone: the host has its response's head; sse, judged: what
	// the upstream answered with (an SSE stream; a body judged whole or
	// a stream of events); mute: nothing more of the upstream's goes to
	// the host (inflight answered it); upEnded: the upstream's answer is
	// over; hostGone: the host's stream is; over: the host has its whole
	// answer from inflight, and the handler ends once nothing is held.
	headersDone, sse, judged, mute, upEnded, hostGone, over bool

	fr sseFramer
	sp *sseSplitter
	// units are the pieces of the upstream's answer held back, in order.
	units []*heldUnit
	// whole records an oversized JSON body that went on unjudged.
	whole *bodyTap
	// closing is the proxy's end, nil once seen.
	closing <-chan struct{}
}

// serveInjected is the handler of a POST while rules may act: see
// http_inject.go's comment.
func (p *httpProxy) serveInjected(w http.ResponseWriter, r *http.Request, out *http.Request, tap *bodyTap, ex *exchange) {
	in := p.inj
	x := &injectedReply{
		p: p, in: in, w: w, rc: http.NewResponseController(w), r: r, tap: tap, ex: ex,
		fr:      sseFramer{max: p.maxBody},
		sp:      &sseSplitter{max: p.maxBody, session: ex.session, tap: ex.tap},
		closing: in.closing,
	}
	ups := make(chan upMsg)
	quit := make(chan struct{})
	out = out.WithContext(httptrace.WithClientTrace(out.Context(), &httptrace.ClientTrace{
		WroteRequest: func(httptrace.WroteRequestInfo) { in.wrote(ex) },
	}))
	go p.readUpstream(out, tap, ex, ups, quit)
	defer func() {
		close(quit)
		ex.upCancel()
		in.endExchange(ex)
	}()
	x.serve(ups)
}

// serve waits on the upstream, the commands, the host and the proxy's end
// until the exchange is over.
func (x *injectedReply) serve(ups <-chan upMsg) {
	for {
		if (x.upEnded || x.over) && len(x.units) == 0 && !x.leftWaiting() {
			x.cmds() // a cancel's record that came with the end
			if x.hostGone {
				x.p.hostClosed(x.tap)
			}
			return
		}
		select {
		case m := <-ups:
			if x.upstream(m) {
				return
			}
		case <-x.ex.wake:
			x.cmds()
		case <-x.r.Context().Done():
			x.hostClosed()
			return
		case <-x.closing:
			if x.proxyEnding() {
				return
			}
		}
	}
}

// upstream takes one piece of the upstream's answer; true when the
// exchange is over.
func (x *injectedReply) upstream(m upMsg) (over bool) {
	at := time.Now()
	switch {
	case m.resp == nil && m.err != nil && m.data == nil && !m.end:
		return x.upstreamFailed(m.err)
	case m.resp != nil:
		x.head(m.resp)
	case m.whole:
		x.wholeBody(m, at)
	case len(m.data) > 0:
		if x.sse {
			x.events(m.data, at)
		} else {
			x.unjudgedBody(m.data)
		}
	case m.end:
		x.upstreamEnded(m.err)
	}
	return false
}

// upstreamFailed: the upstream request failed. True when the host is
// answered with the failure and the exchange is over.
func (x *injectedReply) upstreamFailed(err error) bool {
	x.upEnded = true
	if x.r.Context().Err() != nil {
		return false // the host's end is seen next
	}
	if x.ex.upCancelled() {
		return false // inflight's own cancel: its command says what next
	}
	msg := x.p.red.Error(err)
	x.p.say(fmt.Sprintf("%s to the upstream failed: %s", x.r.Method, msg))
	writeJSONError(x.w, http.StatusBadGateway, "inflight proxy: the upstream did not answer: "+msg)
	return true
}

// head takes the upstream's response head: an SSE stream's or an
// unjudged body's goes on at once; a judged JSON body's waits for its
// body's fate.
func (x *injectedReply) head(resp *http.Response) {
	x.sse = isSSE(resp)
	x.judged = x.sse || judgedJSON(resp)
	switch {
	case x.headersDone:
		// Answered by inflight already.
		x.mute = true
	case x.sse || !x.judged:
		copyHeader(x.w.Header(), resp.Header)
		x.w.WriteHeader(resp.StatusCode)
		x.headersDone = true
		x.flush()
	}
	x.ex.resp = resp
}

// wholeBody takes a JSON body read whole (or its read's failure).
func (x *injectedReply) wholeBody(m upMsg, at time.Time) {
	x.upEnded = true
	if m.err != nil {
		if x.r.Context().Err() == nil && !x.ex.upCancelled() {
			x.p.say(fmt.Sprintf("%s: the upstream's response broke off: %s", x.r.Method, x.p.red.Error(m.err)))
			if len(x.units) == 0 && !x.leftWaiting() && !x.headersDone {
				panic(http.ErrAbortHandler)
			}
		}
		return
	}
	raw := bytes.TrimSpace(m.data)
	u := &heldUnit{raw: m.data, json: true, status: x.ex.resp.StatusCode, header: x.ex.resp.Header}
	if len(raw) > 0 {
		u.lines = expandBatch(line{from: FromServer, at: at, raw: bytes.Clone(raw), total: len(raw), session: x.ex.session, tap: x.ex.tap})
	}
	x.decide(u, at)
	if x.headersDone && !x.hostGone && !x.mute {
		x.flush() // a flush before the head would send one of its own
	}
}

// events takes a chunk of an SSE stream: each whole event is judged, and a
// piece of one past the bound goes on as it comes.
func (x *injectedReply) events(data []byte, at time.Time) {
	for _, pc := range x.fr.feed(data) {
		ls := expandBatches(x.sp.feed(pc.b, at))
		if pc.whole {
			x.decide(&heldUnit{raw: pc.b, lines: ls}, at)
			continue
		}
		// A piece of an event past the bound: on as it comes, unjudged
		// (what it carries is recorded cut).
		x.put(pc.b)
		x.p.q.push(ls)
		x.p.unjudged(x.ex, ls, at)
	}
	if x.headersDone && !x.hostGone && !x.mute {
		x.flush()
	}
}

// unjudgedBody passes on a chunk of a body that is not judged: an
// oversized JSON body (recorded as far as the bound allows) or one of
// another type.
func (x *injectedReply) unjudgedBody(data []byte) {
	if !x.headersDone {
		// An oversized JSON body: on as it comes, unjudged.
		copyHeader(x.w.Header(), x.ex.resp.Header)
		x.w.WriteHeader(x.ex.resp.StatusCode)
		x.headersDone = true
	}
	if x.whole == nil && judgedJSON(x.ex.resp) {
		x.whole = &bodyTap{max: x.p.maxBody, q: x.p.q, from: FromServer, session: x.ex.session, seq: x.ex.tap}
	}
	if x.whole != nil {
		x.whole.keep(data)
	}
	x.write(data)
}

// upstreamEnded takes the end of a streamed answer (err: how it broke
// off).
func (x *injectedReply) upstreamEnded(err error) {
	x.upEnded = true
	if rest := x.fr.rest(); len(rest) > 0 {
		x.write(rest)
	}
	if x.whole != nil {
		x.whole.finish()
	}
	if x.sse && x.r.Context().Err() == nil && !x.ex.upCancelled() {
		x.p.upstreamEnded(x.tap)
	}
	if err != nil && x.r.Context().Err() == nil && !x.ex.upCancelled() {
		x.p.say(fmt.Sprintf("%s: the upstream's response broke off: %s", x.r.Method, x.p.red.Error(err)))
		if len(x.units) == 0 && !x.leftWaiting() {
			panic(http.ErrAbortHandler)
		}
	}
}

// hostClosed: the host closed its stream. A race held waits a while for
// the host's cancel; what is still held is recorded as never passed on.
func (x *injectedReply) hostClosed() {
	x.hostGone = true
	at := time.Now()
	x.cmds()
	// A legacy host (go-sdk's client) closes its stream and posts its
	// cancel at once, the cancel often second: a race held waits for it a
	// while, and goes the instant it comes.
	grace := time.NewTimer(CancelGrace)
	for x.in.raceHeld(x.units) {
		select {
		case <-x.ex.wake:
			x.cmds()
			continue
		case <-grace.C:
		}
		break
	}
	grace.Stop()
	x.p.hostClosed(x.tap)
	for _, u := range x.units {
		for _, f := range u.waiting {
			x.p.q.pushControl(f.note(at, false, PhaseDropped, "the host closed its stream with the response to %s held %s: not passed on",
				f.name(), at.Sub(f.heldAt).Round(time.Millisecond)))
		}
	}
}

// proxyEnding: the proxy begins to end, and what is held goes on. True
// when the exchange is over (the host is left waiting on a request).
func (x *injectedReply) proxyEnding() bool {
	x.closing = nil
	for len(x.units) > 0 {
		u := x.units[0]
		f := u.waiting[0]
		x.release(exCmd{kind: cmdRelease, f: f, why: "as the proxy ends, held " + time.Since(f.heldAt).Round(time.Millisecond).String()})
	}
	if !x.leftWaiting() {
		return false
	}
	if !x.headersDone {
		// Nothing was answered: the host sees the connection end, not an
		// empty answer.
		panic(http.ErrAbortHandler)
	}
	return true
}

func (x *injectedReply) flush() {
	if x.rc.Flush() != nil {
		x.hostGone = true
	}
}

// put writes to the host, unflushed; false when the host is gone or the
// upstream muted.
func (x *injectedReply) put(b []byte) bool {
	if x.hostGone || x.mute {
		return false
	}
	if _, err := x.w.Write(b); err != nil {
		x.hostGone = true
		return false
	}
	return true
}

// write writes to the host and flushes.
func (x *injectedReply) write(b []byte) bool {
	if !x.put(b) {
		return false
	}
	x.flush()
	return !x.hostGone
}

// decide judges one unit of the upstream's answer (an SSE event or a
// JSON body): what goes on goes, what is held is kept.
func (x *injectedReply) decide(u *heldUnit, at time.Time) {
	worst := x.judge(u, at)
	p := x.p
	switch {
	case worst >= fateDrop:
		// Recorded as the upstream sent it, never passed on.
		p.q.push(u.lines)
		p.markDone(u.carries)
	case len(u.waiting) > 0:
		// Recorded as the upstream sent it, as on stdio: the tracker
		// judges the server, whose answer came now; the trace's injected
		// lines say when (whether) the host got it.
		p.q.push(u.lines)
		x.units = append(x.units, u)
	default:
		if u.json && !x.headersDone {
			p.writeHead(x.w, u)
			x.headersDone = true
		}
		x.put(u.raw) // flushed once the chunk is through
		p.q.push(u.lines)
		p.markDone(u.carries)
	}
}

// judge tells the injector of the responses u carries, notes what u
// carries and waits on, and returns the worst of their fates.
func (x *injectedReply) judge(u *heldUnit, at time.Time) fate {
	worst := fatePass
	var notes []line
	for _, l := range u.lines {
		// Only what may be a response is decoded, as on stdio's gate: a
		// flood of progress is never (it had halved the flood).
		if l.total != len(l.raw) || !mayBeResponse(l.raw) {
			continue
		}
		m, err := wire.Decode(l.raw)
		if err != nil || !m.IsResponse() {
			continue
		}
		f, fa, ns := x.in.responded(x.ex, m.ID, at)
		notes = append(notes, ns...)
		if f == nil {
			continue
		}
		u.carries = append(u.carries, f)
		if fa == fateHold {
			u.waiting = append(u.waiting, f)
		}
		worst = max(worst, fa)
	}
	for _, n := range notes {
		x.p.q.pushControl(n)
	}
	return worst
}

// cmds carries out the commands the exchange was given.
func (x *injectedReply) cmds() {
	for _, c := range x.ex.take() {
		switch c.kind {
		case cmdRelease, cmdRace:
			x.release(c)
		case cmdDrop:
			x.drop(c)
		case cmdAnswer:
			x.answer(c)
		case cmdLeave:
			x.in.mu.Lock()
			c.f.left, c.f.cancelling = true, false
			x.in.mu.Unlock()
			x.p.q.pushControl(line{ctl: ctlInjected, at: c.at, inj: c.inj})
		}
	}
}

// release lets c.f's held response go (c.why says why; cmdRace: the
// host's cancel came).
func (x *injectedReply) release(c exCmd) {
	for i, u := range x.units {
		k := -1
		for j, g := range u.waiting {
			if g == c.f {
				k = j
			}
		}
		if k < 0 {
			continue
		}
		u.waiting = append(u.waiting[:k], u.waiting[k+1:]...)
		at := time.Now()
		x.in.mu.Lock()
		c.f.held = false
		x.in.stopLocked(c.f)
		x.in.mu.Unlock()
		held := at.Sub(c.f.heldAt).Round(time.Microsecond)
		text := fmt.Sprintf("released the response to %s %s", c.f.name(), c.why)
		if c.kind == cmdRace {
			text = fmt.Sprintf("released the response to %s the instant the host's cancel arrived, held %s: it crosses the host's cancel", c.f.name(), held)
		}
		if len(u.waiting) > 0 {
			x.p.q.pushControl(c.f.note(at, true, PhaseHolding, "%s; its body waits on another response held", text))
			return
		}
		x.units = append(x.units[:i], x.units[i+1:]...)
		x.passReleased(u, c.f, at, text)
		return
	}
}

// passReleased passes on u, whose last held response (f's) was released
// with text, unless a response it carries was dropped.
func (x *injectedReply) passReleased(u *heldUnit, f *flight, at time.Time, text string) {
	p := x.p
	if u.dropped {
		// A batch's body, one of whose responses was dropped.
		p.q.pushControl(f.note(at, false, PhaseDropped, "%s; its body, with a response dropped in it, is not passed on", text))
		p.markDone(u.carries)
		return
	}
	if u.json && !x.headersDone && !x.hostGone {
		p.writeHead(x.w, u)
		x.headersDone = true
	}
	if !x.write(u.raw) {
		text += "; the host had closed its stream: it never got it"
	}
	p.q.pushControl(f.note(at, false, PhaseReleased, "%s", text))
	p.markDone(u.carries)
}

// drop forgets c.f's held response (a command's, after it was held): the
// host never gets it, and is left waiting.
func (x *injectedReply) drop(c exCmd) {
	for i, u := range x.units {
		k := slices.Index(u.waiting, c.f)
		if k < 0 {
			continue
		}
		u.waiting = slices.Delete(u.waiting, k, k+1)
		u.dropped = true
		x.p.q.pushControl(line{ctl: ctlInjected, at: c.at, inj: c.inj})
		if len(u.waiting) == 0 {
			x.units = slices.Delete(x.units, i, i+1)
			x.p.markDone(u.carries)
		}
		return
	}
	// Released meanwhile (as the proxy ends): the host has it.
	c.inj.phase = PhaseFailed
	c.inj.text = fmt.Sprintf("could not drop the response to %s: it had gone on already", c.f.name())
	x.p.q.pushControl(line{ctl: ctlInjected, at: c.at, inj: c.inj})
	x.in.mu.Lock()
	c.f.left = false
	x.in.mu.Unlock()
	x.p.markDone([]*flight{c.f})
}

// answer answers the host's request c.f with inflight's error (c.answer),
// as a JSON body when nothing was written yet, as an event on an SSE
// stream.
func (x *injectedReply) answer(c exCmd) {
	x.in.mu.Lock()
	c.f.cancelling = false
	x.in.mu.Unlock()
	inj := c.inj
	ok := false
	switch {
	case x.hostGone:
		inj.text += "; the host's stream was gone, so it was not answered"
	case !x.headersDone:
		h := x.w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", strconv.Itoa(len(c.answer)))
		x.w.WriteHeader(http.StatusOK)
		x.headersDone = true
		ok = x.write(c.answer)
		// Whatever the upstream sends now has no place; and the host, its
		// answer whole, may send its next request on this connection,
		// which waits for the handler: it ends.
		x.mute, x.over = true, true
	case x.sse:
		ok = x.write(sseEvent(c.answer))
	}
	if ok {
		inj.answer = c.answer
		inj.text += fmt.Sprintf(", and answered the host with error %d", CodeCancelledByProxy)
	} else if !x.hostGone {
		inj.text += "; the host could not be answered on this response"
	}
	x.p.q.pushControl(line{ctl: ctlInjected, at: c.at, inj: inj})
	x.p.markDone([]*flight{c.f})
}

// leftWaiting reports whether the host's stream stays open for a request
// it is left waiting on, or whose cancel the handler has yet to hear of.
func (x *injectedReply) leftWaiting() bool {
	x.in.mu.Lock()
	defer x.in.mu.Unlock()
	for _, f := range x.ex.flights {
		if (f.left || f.cancelling) && !f.done {
			return true
		}
	}
	return false
}
