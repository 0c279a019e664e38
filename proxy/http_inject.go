package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"sync"
	"time"

	"inflight/redact"
	"inflight/wire"
)

// This file is --rule on the Streamable HTTP proxy: the same actions, with
// the same injected records, as on stdio (inject.go), with the signals of
// HTTP's eras.
//
// A POST of the host's goes through serveInjected (an injectedReply,
// http_injected.go): the upstream's answer is read on a goroutine of its
// own, and the handler waits on it, on the rules' timers and releases, on
// the host and on the proxy's end, so that it alone writes to the host. What is held is kept whole: a JSON body
// with its status and headers, or the one SSE event that carries the
// response (the events before it, and after it, pass on as they come).
// Every response is recorded when the upstream sent it, held or not, as
// on stdio: the tracker judges the server, whose answer that was (a held
// response's request completes then, a race's before the host's cancel);
// the injected lines around it say what the host got, and when.
//
// While a response is held or dropped, the upstream's stream is read to
// its end as ever (what it sends is recorded, and forwarded when it is not
// the held event); the host's stream stays open, with nothing more, until
// the release, the host giving up, or the proxy's end.
//
// The signals: a legacy cancel is notifications/cancelled POSTed to the
// upstream with the host's headers (its Mcp-Session-Id, its
// MCP-Protocol-Version, its credentials); a modern one is closing the
// upstream request. A race holds the response until the host's
// notifications/cancelled for it arrives, in the legacy era; in the
// modern one the host's cancel is closing the very stream the response
// would come on, so nothing can cross it: the record says so, and the
// response goes on unheld.
//
// Requests are followed by (session, ID): legacy hosts' sessions are
// their Mcp-Session-Id, and each modern POST is a session of its own (its
// cancel is its own stream). The tracker, behind them, still follows one
// request per ID.

// flightKey names a host request among several sessions.
type flightKey struct {
	sid string
	id  wire.ID
}

// flight is a host request the injector follows, from its POST until the
// host has its answer (or gave up on it).
type flight struct {
	key            flightKey
	ex             *exchange
	method, target string
	at             time.Time // when the host's request went on
	rule           *Rule
	// answered: the upstream's response came; held: it is kept back
	// (heldAt since) and may be acted on, until its release is on its way
	// to the handler; cancelled: inflight's cancel went upstream;
	// hostCancelled: the host's notifications/cancelled came; left: the
	// host is left waiting (drop, cancel-silent); done: the host has its
	// answer, or its stream is gone.
	// cancelling: inflight's cancel is on its way, the handler not yet
	// told what to do about it.
	answered, held, cancelled, cancelling, hostCancelled, left, done bool
	// byCommand: a command (a key in inflight attach) set rule, not a
	// --rule.
	byCommand bool

	heldAt time.Time
	timer  *time.Timer
}

func (f *flight) name() string {
	s := f.method
	if f.target != "" {
		s += " " + f.target
	}
	return s + " (id " + f.key.id.String() + ")"
}

// note is a line for the recorder saying what f's rule did.
func (f *flight) note(at time.Time, onResponse bool, phase, format string, args ...any) line {
	return line{ctl: ctlInjected, at: at, inj: &injection{id: f.key.id, session: f.ex.session, action: f.rule.Does(), rule: f.rule.Text,
		onResponse: onResponse, phase: phase, text: fmt.Sprintf(format, args...)}}
}

// httpInjector follows the host's requests in flight on the HTTP proxy
// and applies the rules to them.
type httpInjector struct {
	rules  []Rule
	q      *queue
	client *http.Client
	red    *redact.Redactor

	mu      sync.Mutex
	flights map[flightKey]*flight
	seq     int
	closed  bool
	// closing is closed as the proxy begins to end: held responses go on.
	closing   chan struct{}
	closeOnce sync.Once
	wg        sync.WaitGroup
}

func newHTTPInjector(rules []Rule, q *queue, client *http.Client, red *redact.Redactor) *httpInjector {
	return &httpInjector{rules: rules, q: q, client: client, red: red, flights: map[flightKey]*flight{},
		closing: make(chan struct{})}
}

// exchange is one POST of the host's on its way through the injector.
type exchange struct {
	in     *httpInjector
	target string      // the upstream URL it went to
	header http.Header // the host's headers, for a legacy cancel's POST
	sid    string      // the key's session
	// session and tap are the host session and POST number the recorder
	// knows the exchange's lines by (http.go).
	session string
	tap     uint64
	// upCancel closes the upstream request (the modern cancel).
	upCancel context.CancelFunc

	seq int
	// resp is the upstream's response (the handler's own).
	resp *http.Response

	// Under in.mu: the era, whether the upstream has the whole request,
	// the requests it carries.
	modern  bool
	wrote   bool
	flights []*flight

	mu    sync.Mutex
	cmds  []exCmd
	ended bool
	wake  chan struct{}
}

// exCmd is something the handler must do, from a timer, a release or
// another POST of the host's.
type exCmd struct {
	kind cmdKind
	f    *flight
	why  string
	at   time.Time
	// inj is a cancel's record, answer the host's answer (cmdAnswer).
	inj    *injection
	answer []byte
}

type cmdKind uint8

const (
	cmdRelease cmdKind = iota + 1
	cmdRace
	cmdAnswer
	cmdLeave
	// cmdDrop: a held response is dropped (inj says so once it is).
	cmdDrop
)

// push hands c to the exchange's handler; false when it has ended.
func (ex *exchange) push(c exCmd) bool {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.ended {
		return false
	}
	ex.cmds = append(ex.cmds, c)
	select {
	case ex.wake <- struct{}{}:
	default:
	}
	return true
}

func (ex *exchange) take() []exCmd {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	c := ex.cmds
	ex.cmds = nil
	return c
}

// newExchange begins following a POST of the host's.
func (in *httpInjector) newExchange(r *http.Request, target string, upCancel context.CancelFunc) *exchange {
	ex := &exchange{in: in, target: target, header: r.Header.Clone(), upCancel: upCancel, wake: make(chan struct{}, 1),
		modern: wire.IsModernVersion(r.Header.Get("MCP-Protocol-Version"))}
	in.mu.Lock()
	in.seq++
	ex.seq = in.seq
	if ex.modern {
		ex.sid = "\x00" + strconv.Itoa(in.seq)
	} else {
		ex.sid = r.Header.Get("Mcp-Session-Id")
	}
	in.mu.Unlock()
	return ex
}

// endExchange forgets an exchange whose handler returned.
func (in *httpInjector) endExchange(ex *exchange) {
	ex.mu.Lock()
	ex.ended = true
	ex.mu.Unlock()
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, f := range ex.flights {
		in.stopLocked(f)
		f.done = true
		if in.flights[f.key] == f {
			delete(in.flights, f.key)
		}
	}
}

func (in *httpInjector) stopLocked(f *flight) {
	if f.timer != nil && f.timer.Stop() {
		in.wg.Done()
	}
	f.timer = nil
}

// hostMessages sees the host's messages of one POST, recorded already and
// before the upstream has the body's end: a request is followed (and
// marked when a rule matches it), and the host's cancel of a followed
// request releases a race.
func (in *httpInjector) hostMessages(ex *exchange, msgs []wire.Message, at time.Time) {
	var notes []line
	in.mu.Lock()
	if in.closed {
		in.mu.Unlock()
		return
	}
	for i := range msgs {
		m := &msgs[i]
		switch {
		case m.Kind == wire.KindRequest:
			if !ex.modern {
				if raw, ok := wire.MetaValue(m.Params, wire.MetaProtocolVersion); ok && len(raw) > 2 &&
					wire.IsModernVersion(string(bytes.Trim(raw, `"`))) {
					ex.modern = true
					ex.sid = "\x00" + strconv.Itoa(ex.seq)
				}
			}
			key := flightKey{ex.sid, m.ID}
			if _, dup := in.flights[key]; dup {
				continue
			}
			f := &flight{key: key, ex: ex, method: m.Method, target: wire.Target(m.Method, m.Params), at: at}
			r := match(in.rules, m.Method, f.target)
			if len(in.flights) >= maxMarks {
				if r != nil {
					f.rule = r
					notes = append(notes, f.note(at, false, PhaseSkipped, "not acting on %s: the rules already follow %d requests still unanswered", f.name(), maxMarks))
				}
				continue
			}
			in.flights[key] = f
			ex.flights = append(ex.flights, f)
			if r != nil {
				notes = append(notes, in.applyLocked(f, r, at, false)...)
			}
		case m.Kind == wire.KindNotification && m.Method == wire.NotifyCancelled:
			c, err := wire.DecodeCancelled(m.Params)
			if err != nil {
				continue
			}
			if f := in.flights[flightKey{ex.sid, c.RequestID}]; f != nil {
				notes = append(notes, in.hostCancelledLocked(f, at)...)
			}
		}
	}
	in.mu.Unlock()
	for _, n := range notes {
		in.q.pushControl(n)
	}
}

// applyLocked sets f's rule, r, from at.
func (in *httpInjector) applyLocked(f *flight, r *Rule, at time.Time, live bool) []line {
	f.rule, f.byCommand = r, live
	var notes []line
	if live {
		// Worded as stdio's (actingText): the view knows a key's by it.
		text := actingText(r, f.name(), at.Sub(f.at))
		if r.Action == ActRace && f.ex.modern {
			text = fmt.Sprintf("%s on %s (%s), %s after it was sent: nothing can cross on modern HTTP", r.Does(), f.name(), r.Text,
				at.Sub(f.at).Round(time.Millisecond))
		}
		notes = append(notes, f.note(at, false, PhaseActing, "%s", text))
	} else {
		n := f.note(at, false, PhaseMatched, "rule %q matches %s", r.Text, f.name())
		n.inj.quiet = true
		notes = append(notes, n)
	}
	if r.Action == ActRace && f.ex.modern {
		notes = append(notes, f.note(at, false, PhasePassed, "nothing can cross on modern HTTP: the host's cancel is closing the stream the response to %s would come on, so its response is passed on unheld", f.name()))
	}
	if r.Action.cancels() && f.ex.wrote {
		in.armLocked(f, r.After)
	}
	return notes
}

// armLocked makes f's cancel go d from now.
func (in *httpInjector) armLocked(f *flight, d time.Duration) {
	in.wg.Add(1)
	f.timer = time.AfterFunc(d, func() {
		defer in.wg.Done()
		in.cancel(f)
	})
}

// wrote is told when the upstream has the whole of ex's POST: a cancel
// rule's time runs from then ("after the request reached the server").
func (in *httpInjector) wrote(ex *exchange) {
	in.mu.Lock()
	defer in.mu.Unlock()
	ex.wrote = true
	if in.closed {
		return
	}
	for _, f := range ex.flights {
		if f.rule != nil && f.rule.Action.cancels() && f.timer == nil && !f.answered && !f.hostCancelled && !f.done {
			in.armLocked(f, f.rule.After)
		}
	}
}

// hostCancelledLocked handles the host's notifications/cancelled of f.
func (in *httpInjector) hostCancelledLocked(f *flight, at time.Time) []line {
	if f.hostCancelled || f.done {
		return nil
	}
	f.hostCancelled = true
	if f.rule == nil {
		return nil
	}
	switch {
	case f.rule.Action == ActRace && f.held:
		// The response goes to the host at once: the host's cancel is on
		// its way to the upstream meanwhile, and the two cross.
		f.held = false
		f.ex.push(exCmd{kind: cmdRace, f: f, at: at})
	case f.rule.Action.cancels() && !f.cancelled && !f.answered:
		in.stopLocked(f)
		return []line{f.note(at, false, PhasePassed, "the host cancelled %s itself first: inflight sends no cancel", f.name())}
	}
	return nil
}

// cancel cancels f upstream with its era's signal, on the host's behalf,
// and has the handler answer the host (cancel) or leave it waiting
// (cancel-silent).
func (in *httpInjector) cancel(f *flight) {
	in.mu.Lock()
	if in.closed || f.answered || f.hostCancelled || f.cancelled || f.done {
		in.mu.Unlock()
		return
	}
	f.cancelled, f.cancelling = true, true
	ex, modern, r := f.ex, f.ex.modern, f.rule
	in.mu.Unlock()

	reason := fmt.Sprintf("cancelled by inflight proxy (rule %q)", r.Text)
	if r.Text == CommandSource {
		reason = "cancelled by inflight proxy (" + r.Text + ")"
	}
	at := time.Now()
	inj := &injection{id: f.key.id, session: f.ex.session, action: r.Does(), rule: r.Text, reason: reason, phase: PhaseCancel}
	after := at.Sub(f.at).Round(time.Microsecond)
	if modern {
		inj.closedUp = true
		inj.text = fmt.Sprintf("closed the upstream request of %s (the modern cancel), %s after it", f.name(), after)
	} else {
		msg := wire.Notification(wire.NotifyCancelled, wire.CancelledParams(f.key.id, reason))
		if err := in.postCancel(ex, msg); err != nil {
			in.mu.Lock()
			f.cancelled, f.cancelling = false, false
			in.mu.Unlock()
			inj.failed, inj.phase = true, PhaseFailed
			inj.text = fmt.Sprintf("could not send the upstream notifications/cancelled for %s: %s", f.name(), err)
			in.q.pushControl(line{ctl: ctlInjected, at: at, inj: inj})
			return
		}
		inj.cancel = msg
		inj.text = fmt.Sprintf("sent the upstream notifications/cancelled for %s (POSTed with the host's session and protocol version), %s after it", f.name(), after)
	}
	c := exCmd{kind: cmdLeave, f: f, at: at, inj: inj}
	if r.Action == ActCancelSilent {
		inj.text += "; the host is not told and waits for its own timeout"
	} else {
		c.kind, c.answer = cmdAnswer, wire.ErrorResponse(f.key.id, CodeCancelledByProxy, reason)
	}
	// The handler has its orders before the upstream's end can reach it.
	if !ex.push(c) {
		inj.text += "; the host's stream had ended"
		in.q.pushControl(line{ctl: ctlInjected, at: at, inj: inj})
	}
	if modern {
		ex.upCancel()
	}
}

// postCancel POSTs a legacy cancel to the upstream as the host would.
func (in *httpInjector) postCancel(ex *exchange, msg []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ex.target, bytes.NewReader(msg))
	if err != nil {
		return errors.New(in.red.Error(err))
	}
	copyHeader(req.Header, ex.header)
	for _, h := range []string{"Content-Length", "Last-Event-Id", "Accept-Encoding"} {
		req.Header.Del(h)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := in.client.Do(req)
	if err != nil {
		return errors.New(in.red.Error(err))
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		return fmt.Errorf("the upstream answered the POST with %s", resp.Status)
	}
	return nil
}

// fate is what becomes of a response of the upstream's.
type fate uint8

const (
	fatePass fate = iota
	fateHold
	// fateDrop: never passed on; the host is left waiting.
	fateDrop
	// fateWithheld: not passed on, after inflight's cancel.
	fateWithheld
)

// flightLocked is ex's (last) request with id, nil when it carried none;
// in.mu is held.
func (ex *exchange) flightLocked(id wire.ID) *flight {
	var f *flight
	for _, g := range ex.flights {
		if g.key.id == id {
			f = g
		}
	}
	return f
}

// responded decides the upstream's response to id, on ex, which came at.
func (in *httpInjector) responded(ex *exchange, id wire.ID, at time.Time) (*flight, fate, []line) {
	in.mu.Lock()
	defer in.mu.Unlock()
	f := ex.flightLocked(id)
	if f == nil || f.answered || in.closed {
		return nil, fatePass, nil
	}
	f.answered = true
	r := f.rule
	if f.cancelled {
		was := "answered already"
		if r.Action == ActCancelSilent {
			was = "left waiting"
		}
		return f, fateWithheld, []line{f.note(at, true, PhaseKept, "the upstream answered %s after inflight's cancel: not passed on (the host was %s)", f.name(), was)}
	}
	if f.done {
		return f, fatePass, nil
	}
	if r == nil {
		return f, fatePass, nil
	}
	hold := func(format string, args ...any) (*flight, fate, []line) {
		f.held, f.heldAt = true, at
		return f, fateHold, []line{f.note(at, true, PhaseHolding, format, args...)}
	}
	switch r.Action {
	case ActDrop:
		f.left = true
		return f, fateDrop, []line{f.note(at, true, PhaseDropped, "dropped the response to %s: the host never gets it (its stream stays open, with nothing more)", f.name())}
	case ActCancel, ActCancelSilent:
		in.stopLocked(f)
		return f, fatePass, []line{f.note(at, false, PhasePassed, "the upstream answered %s before the rule's cancel: passed on, nothing cancelled", f.name())}
	case ActRace:
		switch {
		case ex.modern:
			return f, fatePass, nil
		case f.hostCancelled:
			return f, fatePass, []line{f.note(at, false, PhasePassed, "the host had cancelled %s before the upstream answered: nothing to race, passed on at once", f.name())}
		}
		return hold("holding the response to %s until the host cancels it", f.name())
	case ActHold:
		return hold("holding the response to %s until released (%s) or the proxy ends", f.name(), releaseWays)
	case ActDelay:
		in.armDelayLocked(f, r.After)
		return hold("holding the response to %s for %s", f.name(), r.After)
	}
	return f, fatePass, nil
}

// armDelayLocked has f's held response released d from now.
func (in *httpInjector) armDelayLocked(f *flight, d time.Duration) {
	in.wg.Add(1)
	f.timer = time.AfterFunc(d, func() {
		defer in.wg.Done()
		in.mu.Lock()
		defer in.mu.Unlock()
		if !f.held {
			return // released or dropped meanwhile
		}
		f.held = false
		f.ex.push(exCmd{kind: cmdRelease, f: f, why: "after " + d.String()})
	})
}

// passedUnjudged is told of a response to id, on ex, that went to the host
// unjudged at: its SSE event was longer than the proxy keeps (max bytes),
// though its data is whole (long comments or fields around it). It is
// answered, whatever f's rule would have done; what to record is returned.
func (in *httpInjector) passedUnjudged(ex *exchange, id wire.ID, at time.Time, max int) (*flight, []line) {
	in.mu.Lock()
	defer in.mu.Unlock()
	f := ex.flightLocked(id)
	if f == nil || f.answered || in.closed {
		return nil, nil
	}
	f.answered = true
	in.stopLocked(f)
	if f.rule == nil || f.done {
		return f, nil
	}
	after := ""
	if f.cancelled {
		after = " after inflight's cancel"
	}
	return f, []line{f.note(at, true, PhasePassed, "the upstream answered %s%s in an SSE event longer than the %d bytes the proxy keeps: passed on unjudged, as it came",
		f.name(), after, max)}
}

// actOn applies r, from now on, to the host's request id while it is still
// in flight (the host sent it, the host has no answer yet): delay/hold/drop/race
// act on its response when it comes (or on it if held already); cancel/cancel-silent
// cancel upstream r.After from now. A clear error otherwise (no such request in
// flight, answered already, a rule acts on it). Recorded as an injected line like a
// --rule's; r.Text says where it came from.
//
// On HTTP, with several sessions, it picks the only request in flight with
// that ID, and is an error when two sessions have one. A response held
// already (by a rule or an earlier command) is acted on again as on stdio
// (reactLocked): dropped, delayed, held, raced.
func (in *httpInjector) actOn(id wire.ID, r *Rule, at time.Time) error {
	in.mu.Lock()
	if in.closed {
		in.mu.Unlock()
		return errors.New("the proxy is ending")
	}
	var cands []*flight
	for k, f := range in.flights {
		if k.id == id && !f.done {
			cands = append(cands, f)
		}
	}
	var err error
	var notes []line
	switch f := first(cands); {
	case len(cands) == 0:
		err = fmt.Errorf("no request %s of the host's is in flight", id)
	case len(cands) > 1:
		err = fmt.Errorf("%d host sessions have a request %s in flight: which one is not clear", len(cands), id)
	case f.held:
		notes, err = in.reactLocked(f, r, at)
	case f.cancelled:
		err = fmt.Errorf("%s is not in flight: inflight cancelled it upstream already (%s, %s)", f.name(), f.rule.Does(), f.rule.Text)
	case f.hostCancelled:
		// The host gave up on it (legacy notifications/cancelled): a
		// command would do nothing it could see.
		err = fmt.Errorf("%s is not in flight: the host cancelled it (notifications/cancelled)", f.name())
	case f.rule != nil && f.byCommand:
		err = fmt.Errorf("%s is acted on already (%s, %s): wait for its response, or release it once it is held", f.name(), f.rule.Does(), f.rule.Text)
	case f.rule != nil:
		err = fmt.Errorf("rule %q acts on %s already (%s)", f.rule.Text, f.name(), f.rule.Does())
	case f.answered:
		err = fmt.Errorf("%s is answered already", f.name())
	case r.Action.cancels() && f.method == wire.MethodInitialize:
		err = errors.New("initialize must never be cancelled")
	default:
		notes = in.applyLocked(f, r, at, true)
	}
	in.mu.Unlock()
	if err != nil {
		return err
	}
	for _, n := range notes {
		in.q.pushControl(n)
	}
	return nil
}

func first(fs []*flight) *flight {
	if len(fs) == 0 {
		return nil
	}
	return fs[0]
}

// reactLocked applies a new action to a response held already (by a rule
// or an earlier command), as stdio's does: the handler that keeps it is
// told through its commands (a drop), or a delay's timer is armed anew.
func (in *httpInjector) reactLocked(f *flight, r *Rule, at time.Time) ([]line, error) {
	switch {
	case r.Action.cancels():
		return nil, fmt.Errorf("the upstream answered %s already (its response is held, %s): release or drop it", f.name(), f.rule.Does())
	case r.Action == ActRace && f.ex.modern:
		return nil, fmt.Errorf("nothing can cross on modern HTTP (the host's cancel closes the stream the response to %s would go on): release or drop it", f.name())
	case r.Action == ActRace && f.hostCancelled:
		return nil, fmt.Errorf("the host cancelled %s already: nothing to race; release or drop its response", f.name())
	}
	if f.timer != nil {
		if !f.timer.Stop() {
			return nil, fmt.Errorf("the response to %s is being released now", f.name())
		}
		in.wg.Done()
		f.timer = nil
	}
	held := at.Sub(f.heldAt).Round(time.Millisecond)
	was := f.rule.Does()
	f.rule, f.byCommand = r, true
	switch r.Action {
	case ActDrop:
		n := f.note(at, false, PhaseDropped, "dropped the held response to %s (%s), held %s (%s): the host never gets it (its stream stays open, with nothing more)",
			f.name(), r.Text, held, was)
		// Not held any more (no release takes it), and the host is left
		// waiting, as a drop rule leaves it.
		f.held, f.left = false, true
		if !f.ex.push(exCmd{kind: cmdDrop, f: f, at: at, inj: n.inj}) {
			return nil, fmt.Errorf("the host's stream of %s has ended", f.name())
		}
		return nil, nil
	case ActHold:
		return []line{f.note(at, false, PhaseHolding, "holding the response to %s until released (%s), held %s so far (%s)", f.name(), r.Text, held, was)}, nil
	case ActDelay:
		in.armDelayLocked(f, r.After)
		return []line{f.note(at, false, PhaseHolding, "holding the response to %s for %s more (%s), held %s so far (%s)", f.name(), r.After, r.Text, held, was)}, nil
	case ActRace:
		return []line{f.note(at, false, PhaseHolding, "holding the response to %s until the host cancels it (%s), held %s so far (%s)", f.name(), r.Text, held, was)}, nil
	}
	return nil, nil
}

// releaseOne passes on id's held response now, or takes back what a
// command armed on id before its response came (actor.releaseOne); an
// error when nothing of id is held or armed (or, on HTTP, when two
// sessions hold a response to that ID).
func (in *httpInjector) releaseOne(id wire.ID, at time.Time) (bool, error) {
	in.mu.Lock()
	var held, armed []*flight
	for k, f := range in.flights {
		switch {
		case k.id != id || f.done:
		case f.held:
			held = append(held, f)
		case f.rule != nil && f.byCommand && !f.cancelled && !f.left && !f.answered && !f.rule.Action.cancels():
			armed = append(armed, f)
		}
	}
	if len(held) == 0 && len(armed) == 1 {
		f := armed[0]
		n := f.note(at, false, PhaseTakenBack, "took back the %s on %s (%s) before its response came: its response will pass on untouched", f.rule.Does(), f.name(), CommandSource)
		f.rule, f.byCommand = nil, false
		in.mu.Unlock()
		in.q.pushControl(n)
		return true, nil
	}
	defer in.mu.Unlock()
	switch len(held) {
	case 0:
		if len(armed) > 1 {
			return false, fmt.Errorf("%d host sessions have a request %s acted on: which one is not clear", len(armed), id)
		}
		return false, fmt.Errorf("nothing of request %s is held", id)
	case 1:
	default:
		return false, fmt.Errorf("%d host sessions have a response to %s held: which one is not clear", len(held), id)
	}
	f := held[0]
	in.stopLocked(f)
	f.held = false
	if !f.ex.push(exCmd{kind: cmdRelease, f: f, at: at, why: "on request, held " + at.Sub(f.heldAt).Round(time.Millisecond).String()}) {
		return false, fmt.Errorf("the host's stream of %s has ended", f.name())
	}
	return false, nil
}

// releaseAll passes on every response a rule holds now (Options.Release).
func (in *httpInjector) releaseAll() {
	in.mu.Lock()
	defer in.mu.Unlock()
	now := time.Now()
	for _, f := range in.flights {
		if f.held && !f.done {
			in.stopLocked(f)
			f.held = false
			f.ex.push(exCmd{kind: cmdRelease, f: f, at: now, why: "on request, held " + now.Sub(f.heldAt).Round(time.Millisecond).String()})
		}
	}
}

// beginClose tells the handlers the proxy is ending: what they hold goes
// on now.
func (in *httpInjector) beginClose() {
	in.closeOnce.Do(func() { close(in.closing) })
}

// close ends the rules once the handlers are done: no timer fires any
// more; it waits at most wait for those firing (a cancel's POST).
func (in *httpInjector) close(wait time.Duration) {
	in.beginClose()
	in.mu.Lock()
	in.closed = true
	for _, f := range in.flights {
		in.stopLocked(f)
	}
	in.mu.Unlock()
	done := make(chan struct{})
	go func() {
		in.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(wait):
	}
}

// upMsg is what the upstream goroutine hands the handler: the response's
// head (resp, or err), then a whole JSON body (whole), or a stream's
// chunks and its end (end, err).
type upMsg struct {
	resp  *http.Response
	data  []byte
	whole bool
	end   bool
	err   error
}

// heldUnit is a piece of the upstream's answer kept back: a JSON body
// (with its status and headers) or one SSE event, with its lines for the
// recorder; it goes on when none of the responses it carries is held.
type heldUnit struct {
	raw     []byte
	lines   []line
	waiting []*flight
	carries []*flight
	json    bool
	status  int
	header  http.Header
	// dropped: a response it carries was dropped: it never goes on.
	dropped bool
}

// judgedJSON reports whether a response's body is judged whole (held with
// its head) rather than forwarded as it comes.
func judgedJSON(resp *http.Response) bool {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return mt == "application/json"
}

func isSSE(resp *http.Response) bool {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return mt == "text/event-stream"
}

// readUpstream makes the upstream request and hands what comes to the
// handler, until the end or the handler's.
func (p *httpProxy) readUpstream(out *http.Request, tap *bodyTap, ex *exchange, ch chan<- upMsg, quit <-chan struct{}) {
	send := func(m upMsg) bool {
		select {
		case ch <- m:
			return true
		case <-quit:
			return false
		}
	}
	resp, err := p.client.Do(out)
	if tap != nil {
		tap.finish()
	}
	if !send(upMsg{resp: resp, err: err}) {
		if resp != nil {
			resp.Body.Close()
		}
		return
	}
	if err != nil {
		return
	}
	defer resp.Body.Close()
	if judgedJSON(resp) {
		body, err := io.ReadAll(io.LimitReader(resp.Body, int64(p.maxBody)+1))
		if len(body) <= p.maxBody || err != nil {
			send(upMsg{data: body, whole: true, end: true, err: err})
			return
		}
		// Too long to keep back: it goes on as it comes, unjudged.
		if !send(upMsg{data: body}) {
			return
		}
	}
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 && !send(upMsg{data: bytes.Clone(buf[:n])}) {
			return
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			send(upMsg{end: true, err: err})
			return
		}
	}
}

// raceHeld reports whether a race holds a response the host has not
// cancelled yet.
func (in *httpInjector) raceHeld(units []*heldUnit) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, u := range units {
		for _, f := range u.waiting {
			if f.rule.Action == ActRace && !f.hostCancelled {
				return true
			}
		}
	}
	return false
}

// upCancelled reports whether inflight closed ex's upstream request.
func (ex *exchange) upCancelled() bool {
	ex.in.mu.Lock()
	defer ex.in.mu.Unlock()
	for _, f := range ex.flights {
		if f.cancelled && ex.modern {
			return true
		}
	}
	return false
}

// unjudged tells the injector of the responses among ls, the lines of an
// SSE event that went on unjudged.
func (p *httpProxy) unjudged(ex *exchange, ls []line, at time.Time) {
	for _, l := range ls {
		if l.total != len(l.raw) {
			continue // cut: no message the proxy can read
		}
		m, err := wire.Decode(l.raw)
		if err != nil || !m.IsResponse() {
			continue
		}
		f, notes := p.inj.passedUnjudged(ex, m.ID, at, p.maxBody)
		for _, n := range notes {
			p.q.pushControl(n)
		}
		if f != nil {
			p.markDone([]*flight{f})
		}
	}
}

// markDone says the host has its answer to fs (or never will).
func (p *httpProxy) markDone(fs []*flight) {
	p.inj.mu.Lock()
	defer p.inj.mu.Unlock()
	for _, f := range fs {
		if f.left {
			continue
		}
		f.done = true
		p.inj.stopLocked(f)
		if p.inj.flights[f.key] == f {
			delete(p.inj.flights, f.key)
		}
	}
}

// writeHead writes a held JSON body's status and headers.
func (p *httpProxy) writeHead(w http.ResponseWriter, u *heldUnit) {
	copyHeader(w.Header(), u.header)
	w.WriteHeader(u.status)
}

// sseEvent is a message as an SSE event of inflight's.
func sseEvent(msg []byte) []byte {
	b := make([]byte, 0, len(msg)+24)
	b = append(b, "event: message\ndata: "...)
	b = append(b, msg...)
	return append(b, "\n\n"...)
}

// sseFramer cuts an SSE stream into its events' bytes, as they came: an
// event ends with the blank line after it (its terminator included). An
// event is kept until its end only while it is at most max bytes: one
// longer is cut into unjudged pieces that go on as they come (its start,
// then what follows up to its end), as stdio's gate passes a line past its
// bound, so that an upstream's huge or endless event neither waits in
// memory nor keeps the host from its bytes.
type sseFramer struct {
	max int
	buf []byte
	// scan is where the scan stopped; lineStart whether that is the
	// start of a line.
	scan      int
	lineStart bool
	started   bool
	// passing: the unfinished event's start went on unjudged; the rest of
	// it follows as it comes.
	passing bool
}

// ssePiece is what the framer cut: a whole event (judged), or a piece of
// an event past max (unjudged: it goes on as it is).
type ssePiece struct {
	b     []byte
	whole bool
}

func (f *sseFramer) feed(chunk []byte) []ssePiece {
	if !f.started {
		f.started, f.lineStart = true, true
	}
	f.buf = append(f.buf, chunk...)
	var out []ssePiece
	start := 0
	i := f.scan
	for i < len(f.buf) {
		c := f.buf[i]
		if c != '\r' && c != '\n' {
			f.lineStart = false
			i++
			continue
		}
		end := i + 1
		if c == '\r' {
			if i+1 == len(f.buf) {
				break // a CR at the end: its LF may follow
			}
			if f.buf[i+1] == '\n' {
				end++
			}
		}
		if f.lineStart {
			out = append(out, ssePiece{b: bytes.Clone(f.buf[start:end]), whole: !f.passing && end-start <= f.max})
			start, f.passing = end, false
		}
		f.lineStart = true
		i = end
	}
	// f.buf[start:] is an unfinished event, scanned to i (all but a CR
	// at the end).
	if i > start && (f.passing || len(f.buf)-start > f.max) {
		out = append(out, ssePiece{b: bytes.Clone(f.buf[start:i])})
		if !f.passing && cap(f.buf) > 2*len(chunk)+64 {
			// The event's start, kept so far, is gone on: so is its room.
			f.buf = bytes.Clone(f.buf[i:])
			f.passing, f.scan = true, 0
			return out
		}
		start, f.passing = i, true
	}
	if start > 0 {
		// What is left came after an event's end found in this chunk (or
		// is a CR): it is at most the chunk, so the copy is too.
		f.buf = append(f.buf[:0], f.buf[start:]...)
	}
	f.scan = i - start
	return out
}

// rest is what of the stream ended no event.
func (f *sseFramer) rest() []byte {
	b := f.buf
	f.buf, f.scan = nil, 0
	return b
}
