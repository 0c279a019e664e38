package proxy

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"inflight/wire"
)

// This file makes things happen on purpose (--rule): a host request a rule
// matches is marked as it passes to the server, and its response is
// delayed, held, dropped or raced against the host's cancel, or the
// request is cancelled upstream on the host's behalf. Everything no rule
// acts on is forwarded byte for byte as without rules; a held line is the
// server's bytes exactly, terminator included, and is written whole
// between the lines around it.

// CodeCancelledByProxy is the JSON-RPC error code of the answer a cancel
// rule gives the host. It is LSP's RequestCancelled, outside the range
// JSON-RPC reserves (-32768 to -32000), as the MCP error code policy asks
// of codes it does not define.
const CodeCancelledByProxy = -32800

// lineWriter is one side's writer, shared by its forwarder and inflight's
// own lines: an injected line never lands inside a line the forwarder has
// written only part of; it waits for that line's end.
type lineWriter struct {
	mu      sync.Mutex
	w       io.Writer
	mid     bool // the forwarder's last write did not end a line
	waiting [][]byte
	err     error
}

// forward writes what the forwarder read (or decided to pass on), then
// what waited for the end of the line.
func (lw *lineWriter) forward(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.err != nil {
		return lw.err
	}
	if _, err := lw.w.Write(b); err != nil {
		lw.err = err
		return err
	}
	lw.mid = b[len(b)-1] != '\n'
	if !lw.mid {
		for _, w := range lw.waiting {
			if _, err := lw.w.Write(w); err != nil {
				lw.err = err
				break
			}
		}
		lw.waiting = nil
	}
	return lw.err
}

// inject writes a whole line (terminated) of inflight's, now or at the end
// of the line the forwarder is in.
func (lw *lineWriter) inject(b []byte) error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.err != nil {
		return lw.err
	}
	if lw.mid {
		lw.waiting = append(lw.waiting, b)
		return nil
	}
	if _, err := lw.w.Write(b); err != nil {
		lw.err = err
	}
	return lw.err
}

// marked is a host request a rule matched.
type marked struct {
	id     wire.ID
	rule   *Rule
	method string
	target string
	at     time.Time // when it passed to the server
	// held is the server's response, kept back (its bytes, terminator
	// included); heldAt when it came.
	held   []byte
	heldAt time.Time
	// answered: the server's response came; cancelled: inflight's cancel
	// went to the server; hostCancelled: the host's did.
	answered, cancelled, hostCancelled bool
	timer                              *time.Timer
	// byCommand: a command (a key in inflight attach) made this mark, not
	// a --rule; rule.Text says where it came from.
	byCommand bool
}

// whose names what acts on the request: "rule's" or "command's".
func (m *marked) whose() string {
	if m.byCommand {
		return "command's"
	}
	return "rule's"
}

func (m *marked) name() string {
	s := m.method
	if m.target != "" {
		s += " " + m.target
	}
	return s + " (id " + m.id.String() + ")"
}

// injector owns the marked requests. The forwarders and the rules' timers
// call it; the lines it makes for the recorder go to the queue.
type injector struct {
	rules  []Rule
	q      *queue
	toHost *lineWriter
	toSrv  *lineWriter
	// serverSoFar is where the server's output stands (an injected
	// cancel's position, as for the host's).
	serverSoFar func() int64

	mu    sync.Mutex
	marks map[wire.ID]*marked
	// flights are the host's requests in flight (sent, no answer seen):
	// what actOn may act on (act.go). watch mirrors "some request is in
	// flight or marked", read by the gate without the lock.
	flights map[wire.ID]stdioFlight
	watch   atomic.Bool
	closed  bool
	wg      sync.WaitGroup
}

// stdioFlight is a host request the server has not answered yet.
type stdioFlight struct {
	method, target string
	at             time.Time
}

func newInjector(rules []Rule, q *queue, toHost, toSrv *lineWriter, serverSoFar func() int64) *injector {
	return &injector{rules: rules, q: q, toHost: toHost, toSrv: toSrv, serverSoFar: serverSoFar,
		marks: map[wire.ID]*marked{}, flights: map[wire.ID]stdioFlight{}}
}

// synced updates watch after the maps changed (under in.mu).
func (in *injector) synced() {
	in.watch.Store(len(in.marks) > 0 || len(in.flights) > 0)
}

// The phases of an injected line (its "code" in the trace): what the line
// says happened, for a view that marks the request's row.
const (
	PhaseMatched  = "matched"  // a rule matched the request (quiet)
	PhaseActing   = "acting"   // a command's action was taken on it
	PhaseHolding  = "holding"  // its response is held (hold, delay, race)
	PhaseReleased = "released" // the held response went to the host
	PhaseDropped  = "dropped"  // its response was dropped
	PhaseCancel   = "cancelled"
	PhaseKept     = "kept"   // the server's answer after inflight's cancel, not passed on
	PhasePassed   = "passed" // nothing to do after all: passed on untouched
	PhaseFailed   = "failed"
	PhaseSkipped  = "skipped" // not acted on (too many followed)
	// PhaseTakenBack: a command's action, armed before the response came,
	// was taken back (release): the response passes on untouched.
	PhaseTakenBack = "taken-back"
)

// note is a line for the recorder saying what a rule did.
func note(m *marked, at time.Time, onResponse bool, phase, format string, args ...any) line {
	return line{ctl: ctlInjected, at: at, inj: &injection{id: m.id, action: m.rule.Does(), rule: m.rule.Text,
		onResponse: onResponse, phase: phase, text: fmt.Sprintf(format, args...)}}
}

// maxMarks bounds the requests the rules follow at once: a host whose
// matched requests are never answered (cancelled ones a well-behaved
// server stays silent on) must not grow the proxy without end. Past it,
// a matching request is let through untouched, and that is said.
const maxMarks = 4096

// hostLines looks at the host's complete lines before they are written to
// the server: a request a rule matches is marked (so that its response,
// which cannot come before the request is written, is caught), and the
// host's cancel of a marked request releases a race. It returns the notes
// and what to do once the chunk is written and its lines queued: arm the
// cancel rules' timers (armed then, a cancel never reaches the record
// before the request it cancels).
func (in *injector) hostLines(ls []line, at time.Time) (after func(), notes []line) {
	var arm []*marked
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return nil, nil
	}
	for i := range ls {
		l := &ls[i]
		if l.total > len(l.raw) || len(l.raw) == 0 {
			continue
		}
		m, err := wire.Decode(l.raw)
		if err != nil {
			continue
		}
		switch {
		case m.Kind == wire.KindRequest:
			if _, dup := in.marks[m.ID]; dup {
				continue
			}
			if _, dup := in.flights[m.ID]; dup {
				continue
			}
			target := wire.Target(m.Method, m.Params)
			if len(in.flights) < maxFlights {
				in.flights[m.ID] = stdioFlight{method: m.Method, target: target, at: at}
				in.watch.Store(true)
			}
			r := match(in.rules, m.Method, target)
			if r == nil {
				continue
			}
			mk := &marked{id: m.ID, rule: r, method: m.Method, target: target, at: at}
			if len(in.marks) >= maxMarks {
				notes = append(notes, note(mk, at, false, PhaseSkipped, "not acting on %s: the rules already follow %d requests still unanswered", mk.name(), maxMarks))
				continue
			}
			in.marks[m.ID] = mk
			n := note(mk, at, false, PhaseMatched, "rule %q matches %s", r.Text, mk.name())
			n.inj.quiet = true
			notes = append(notes, n)
			if r.Action.cancels() {
				arm = append(arm, mk)
			}
		case m.Kind == wire.KindNotification && m.Method == wire.NotifyCancelled:
			c, err := wire.DecodeCancelled(m.Params)
			if err != nil {
				continue
			}
			if n, ok := in.hostCancelledLocked(c.RequestID, at); ok {
				notes = append(notes, n)
			}
			// The host gave up on it: nothing is in flight for it to act on.
			delete(in.flights, c.RequestID)
			in.synced()
		}
	}
	if len(arm) == 0 {
		return nil, notes
	}
	return func() {
		in.mu.Lock()
		defer in.mu.Unlock()
		for _, mk := range arm {
			if in.closed || mk.answered || mk.hostCancelled {
				continue
			}
			in.wg.Add(1)
			// The cancel goes from the timer's goroutine, never the host's
			// stream: writing the answer to a host that is not reading must
			// not stop what it writes reaching the server.
			mk.timer = time.AfterFunc(mk.rule.After, func() {
				defer in.wg.Done()
				in.cancel(mk)
			})
		}
	}, notes
}

// hostCancelledLocked handles the host's cancel of a marked request.
func (in *injector) hostCancelledLocked(id wire.ID, at time.Time) (line, bool) {
	mk := in.marks[id]
	if mk == nil || mk.hostCancelled {
		return line{}, false
	}
	mk.hostCancelled = true
	switch {
	case mk.rule.Action == ActRace && mk.held != nil:
		held := mk.held
		mk.held = nil
		delete(in.marks, id)
		in.synced()
		// The response goes to the host at once, from its own goroutine:
		// the host's cancel is on its way to the server meanwhile, and the
		// two cross. (A host that stopped reading blocks that goroutine,
		// not the host's stream to the server.)
		in.wg.Add(1)
		go func() {
			defer in.wg.Done()
			_ = in.toHost.inject(held)
		}()
		return note(mk, at, false, PhaseReleased, "released the response to %s the instant the host's cancel arrived, held %s: it crosses the host's cancel",
			mk.name(), at.Sub(mk.heldAt).Round(time.Microsecond)), true
	case mk.rule.Action.cancels() && !mk.cancelled && !mk.answered:
		if mk.timer != nil && mk.timer.Stop() {
			in.wg.Done()
		}
		delete(in.marks, id)
		in.synced()
		return note(mk, at, false, PhasePassed, "the host cancelled %s itself first: inflight sends no cancel", mk.name()), true
	}
	return line{}, false
}

// cancel sends the server notifications/cancelled for a marked request,
// on the host's behalf, and (ActCancel) answers the host.
func (in *injector) cancel(mk *marked) {
	in.mu.Lock()
	if in.closed || mk.answered || mk.hostCancelled || mk.cancelled {
		in.mu.Unlock()
		return
	}
	mk.cancelled = true
	silent := mk.rule.Action == ActCancelSilent
	// Cancelled on the host's behalf: nothing more of it is the host's to
	// act on.
	delete(in.flights, mk.id)
	in.synced()
	in.mu.Unlock()

	reason := fmt.Sprintf("cancelled by inflight proxy (rule %q)", mk.rule.Text)
	if mk.byCommand {
		reason = "cancelled by inflight proxy (" + mk.rule.Text + ")"
	}
	cancelMsg := wire.Notification(wire.NotifyCancelled, wire.CancelledParams(mk.id, reason))
	at := time.Now()
	pos := in.serverSoFar()
	err := in.toSrv.inject(append(cancelMsg, '\n'))
	inj := &injection{id: mk.id, action: mk.rule.Does(), rule: mk.rule.Text, cancel: cancelMsg, reason: reason, serverSoFar: pos, phase: PhaseCancel}
	switch {
	case err != nil:
		inj.text = fmt.Sprintf("could not send the server notifications/cancelled for %s: %v", mk.name(), err)
		inj.cancel, inj.failed, inj.phase = nil, true, PhaseFailed
	case silent:
		inj.text = fmt.Sprintf("sent the server notifications/cancelled for %s, %s after it; the host is not told and waits for its own timeout",
			mk.name(), at.Sub(mk.at).Round(time.Microsecond))
	default:
		answer := wire.ErrorResponse(mk.id, CodeCancelledByProxy, reason)
		if err := in.toHost.inject(append(bytes.Clone(answer), '\n')); err == nil {
			inj.answer = answer
		}
		inj.text = fmt.Sprintf("sent the server notifications/cancelled for %s, %s after it, and answered the host with error %d",
			mk.name(), at.Sub(mk.at).Round(time.Microsecond), CodeCancelledByProxy)
	}
	in.q.pushControl(line{ctl: ctlInjected, at: at, inj: inj})
}

// watching reports whether a response may be caught: some host request
// is in flight, or marked and unanswered. It takes no lock: the gate asks
// it for every line.
func (in *injector) watching() bool { return in.watch.Load() }

// maxFlights bounds the host requests followed in flight (for actOn): a
// host whose requests are never answered must not grow the proxy without
// end. Past it, a new request is forwarded and recorded as ever, and a
// command on it is refused (it is not followed).
const maxFlights = 1 << 16

// mayBeResponse is the gate's cheap test before decoding a line: a
// response has a "result" or an "error" member, written so or with an
// escape (\u) in its name. A line with neither cannot be one, so a flood
// of progress is never decoded.
func mayBeResponse(b []byte) bool {
	return bytes.Contains(b, []byte(`"result"`)) || bytes.Contains(b, []byte(`"error"`)) || bytes.Contains(b, []byte(`\u`))
}

// serverLine decides one complete line of the server's (terminator
// included) before it would be written to the host: it reports true when
// the line is the injector's now (held or dropped; it keeps a copy).
func (in *injector) serverLine(b []byte, at time.Time) bool {
	if !mayBeResponse(b) {
		return false
	}
	// The line is decoded (the envelope's hand scanner): a cheaper test
	// for "method" would pass on a response whose result holds that word.
	m, err := wire.Decode(bytes.TrimRight(b, "\r\n"))
	if err != nil || !m.IsResponse() {
		return false
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	defer in.synced()
	delete(in.flights, m.ID)
	mk := in.marks[m.ID]
	if in.closed || mk == nil || mk.answered {
		return false
	}
	mk.answered = true
	push := func(onResponse bool, phase, format string, args ...any) {
		in.q.pushControl(note(mk, at, onResponse, phase, format, args...))
	}
	r := mk.rule
	switch r.Action {
	case ActDrop:
		delete(in.marks, m.ID)
		push(true, PhaseDropped, "dropped the response to %s: the host never gets it", mk.name())
		return true
	case ActCancel, ActCancelSilent:
		delete(in.marks, m.ID)
		if mk.cancelled {
			push(true, PhaseKept, "the server answered %s after inflight's cancel: not passed on (the host was %s)", mk.name(),
				map[bool]string{true: "left waiting", false: "answered already"}[r.Action == ActCancelSilent])
			return true
		}
		if mk.timer != nil && mk.timer.Stop() {
			in.wg.Done()
		}
		push(false, PhasePassed, "the server answered %s before the %s cancel: passed on, nothing cancelled", mk.name(), mk.whose())
		return false
	case ActRace:
		if mk.hostCancelled {
			delete(in.marks, m.ID)
			push(true, PhasePassed, "the host had cancelled %s before the server answered: nothing to race, passed on at once", mk.name())
			return false
		}
		mk.held, mk.heldAt = bytes.Clone(b), at
		push(true, PhaseHolding, "holding the response to %s until the host cancels it", mk.name())
		return true
	case ActHold:
		mk.held, mk.heldAt = bytes.Clone(b), at
		push(true, PhaseHolding, "holding the response to %s until released (%s) or the proxy ends", mk.name(), releaseWays)
		return true
	case ActDelay:
		mk.held, mk.heldAt = bytes.Clone(b), at
		push(true, PhaseHolding, "holding the response to %s for %s", mk.name(), r.After)
		in.armDelay(mk)
		return true
	}
	return false
}

// releaseWays says how a held response is released.
const releaseWays = "the release key in inflight attach, or SIGUSR1"

// armDelay starts a delay's timer on a held response (under in.mu).
func (in *injector) armDelay(mk *marked) {
	in.wg.Add(1)
	after := mk.rule.After
	mk.timer = time.AfterFunc(after, func() {
		defer in.wg.Done()
		in.release(mk, "after "+after.String())
	})
}

// release passes a held response on.
func (in *injector) release(mk *marked, why string) {
	in.mu.Lock()
	held := in.takeLocked(mk)
	in.mu.Unlock()
	in.pass(mk, held, why)
}

// takeLocked takes mk's held response (nil when nothing is held) and
// forgets the mark: it is no longer the injector's to act on.
func (in *injector) takeLocked(mk *marked) []byte {
	held := mk.held
	mk.held = nil
	if in.marks[mk.id] == mk {
		delete(in.marks, mk.id)
		in.synced()
	}
	return held
}

// passLater passes held on from a goroutine of its own, counted in in.wg
// (under in.mu, not closed): a host that stopped reading blocks that
// goroutine, which close waits for a bounded time, and not the caller (a
// viewer's command, whose goroutine the proxy's end waits for without
// bound).
func (in *injector) passLater(mk *marked, held []byte, why string) {
	if held == nil {
		return
	}
	in.wg.Add(1)
	go func() {
		defer in.wg.Done()
		in.pass(mk, held, why)
	}()
}

// pass writes a held response, taken already, to the host, and records
// that it did (or could not).
func (in *injector) pass(mk *marked, held []byte, why string) {
	if held == nil {
		return
	}
	at := time.Now()
	text := fmt.Sprintf("released the response to %s %s", mk.name(), why)
	phase := PhaseReleased
	if err := in.toHost.inject(held); err != nil {
		text = fmt.Sprintf("could not pass the response to %s on (%s): %v", mk.name(), why, err)
		phase = PhaseFailed
	}
	in.q.pushControl(note(mk, at, false, phase, "%s", text))
}

// releaseAll passes on every response a rule holds now (hold, and a
// delay or race before its time): the user said so (Options.Release).
//
// The writes go from goroutines of their own (passLater): releaseAll runs
// on a viewer's command goroutine, or on the Release signal's.
func (in *injector) releaseAll() {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return // close passes on what is held
	}
	now := time.Now()
	for _, mk := range in.marks {
		if mk.held == nil {
			continue
		}
		if mk.timer != nil && mk.timer.Stop() {
			in.wg.Done()
		}
		mk.timer = nil
		why := "on request, held " + now.Sub(mk.heldAt).Round(time.Millisecond).String()
		in.passLater(mk, in.takeLocked(mk), why)
	}
}

// close ends the rules as the proxy ends: no timer fires any more, and
// every response still held goes to the host (if it still reads), after
// at most wait for the timers already firing and the writes.
func (in *injector) close(wait time.Duration) {
	in.mu.Lock()
	in.closed = true
	var held []*marked
	for _, mk := range in.marks {
		if mk.timer != nil && mk.timer.Stop() {
			in.wg.Done()
		}
		if mk.held != nil {
			held = append(held, mk)
		}
	}
	in.mu.Unlock()
	done := make(chan struct{})
	go func() {
		for _, mk := range held {
			in.release(mk, "as the proxy ends, held "+time.Since(mk.heldAt).Round(time.Millisecond).String())
		}
		in.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(wait):
		// The host stopped reading: what it would not take is left (the
		// goroutine ends when the host's end does, or with the process).
	}
}

// gate passes the server's output to the host, line by line while the
// injector may catch a response: a line's start is kept back until its
// end shows whether it is one (a line longer than max goes on as it
// comes, unjudged).
type gate struct {
	in      *injector
	out     *lineWriter
	max     int
	pend    []byte
	passing bool // the current line's start went on: the rest follows
}

// pass writes what of chunk goes on now; a nil chunk is the end of the
// stream, where a line kept back goes on as it is.
func (g *gate) pass(chunk []byte, at time.Time) error {
	if chunk == nil {
		err := g.out.forward(g.pend)
		g.pend = nil
		return err
	}
	i := 0
	if g.passing {
		j := bytes.IndexByte(chunk, '\n')
		if j < 0 {
			return g.out.forward(chunk)
		}
		g.passing = false
		if err := g.out.forward(chunk[:j+1]); err != nil {
			return err
		}
		i = j + 1
	}
	run := i // the start of what goes on as it is
	flush := func(end int) error {
		err := g.out.forward(chunk[run:end])
		run = end
		return err
	}
	for i < len(chunk) {
		if len(g.pend) == 0 && !g.in.watching() {
			// Nothing can be caught: the rest goes on as it is.
			g.passing = chunk[len(chunk)-1] != '\n'
			return flush(len(chunk))
		}
		j := bytes.IndexByte(chunk[i:], '\n')
		if j < 0 {
			if err := flush(i); err != nil {
				return err
			}
			if len(g.pend)+len(chunk)-i > g.max {
				// Too long to keep back: it goes on unjudged.
				g.passing = true
				err := g.out.forward(append(g.pend, chunk[i:]...))
				g.pend = g.pend[:0]
				return err
			}
			g.pend = append(g.pend, chunk[i:]...)
			return nil
		}
		end := i + j + 1
		full := chunk[i:end]
		if len(g.pend) > 0 {
			full = append(g.pend, full...)
		}
		if g.in.serverLine(full, at) {
			if err := flush(i); err != nil {
				return err
			}
			run = end
		} else if len(g.pend) > 0 {
			// The kept start goes first, then this chunk's part with what follows.
			if err := g.out.forward(g.pend); err != nil {
				return err
			}
		}
		g.pend = g.pend[:0]
		i = end
	}
	return flush(len(chunk))
}
