// Package tracerun records runs as the TUI records them with --trace: a
// session.Tracker driven as ui.Model drives it (Begin, Apply, RequestCancel,
// Due), every event written with the tracker's verdict and every change
// after it. Replay tests play such traces back and compare; benchmarks
// record floods of a million lines.
package tracerun

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"inflight/event"
	"inflight/session"
	"inflight/trace"
	"inflight/wire"
)

// Recorder drives a tracker and writes what happens to a trace.
type Recorder struct {
	TW *trace.Writer
	TR *session.Tracker
}

// New returns a recorder writing to w, whose trace starts at start.
func New(w io.Writer, start time.Time, cfg session.Config) *Recorder {
	return &Recorder{TW: trace.NewWriter(w, start, nil), TR: session.NewTracker(cfg)}
}

// Apply applies ev and writes it with its verdict, then its changes.
func (r *Recorder) Apply(ev event.Event) []session.Change {
	changes := r.TR.Apply(ev)
	_ = r.TW.Judged(ev, session.Verdict(ev.Kind, changes))
	_ = r.TW.Changes(r.TR, changes)
	return changes
}

// Connected applies a connection of the given era over stdio.
func (r *Recorder) Connected(at time.Time, era event.Era) {
	info := event.ConnInfo{Transport: event.TransportStdio, Era: era, ProtocolVersion: wire.VersionModern, ServerName: "recorded"}
	r.Apply(event.Event{Kind: event.Connected, Time: at, Info: &info})
}

// Begin begins a request as the TUI's send does (its state line), then
// applies the bytes the client wrote for it (with its progress token).
func (r *Recorder) Begin(at time.Time, method, params string) wire.ID {
	req := r.TR.Begin(method, json.RawMessage(params), session.RequestOptions{}, at)
	_ = r.TW.State(req.Created, req, req.State, req.State)
	var p map[string]any
	if params == "" || json.Unmarshal([]byte(params), &p) != nil {
		p = map[string]any{}
	}
	p["_meta"] = map[string]any{"progressToken": req.ProgressToken}
	b, _ := json.Marshal(p)
	raw := wire.Request(req.ID, method, b)
	msg, _ := wire.Decode(raw)
	r.Apply(event.Event{Kind: event.Sent, Time: at, RequestID: req.ID, Raw: raw, Msg: msg})
	return req.ID
}

// Receive applies a message the server sent.
func (r *Recorder) Receive(at time.Time, raw []byte) []session.Change {
	msg, p, err := wire.DecodeLine(raw)
	ev := event.Event{Kind: event.Received, Time: at, Raw: raw, Msg: msg, Progress: p}
	if err != nil {
		ev.Kind, ev.Err = event.Malformed, err
	} else if msg.Kind != wire.KindNotification {
		ev.RequestID = msg.ID
	}
	return r.Apply(ev)
}

// Progress is the server's progress on id's token.
func (r *Recorder) Progress(at time.Time, id wire.ID, v, total float64) {
	r.Receive(at, wire.Notification(wire.NotifyProgress, []byte(fmt.Sprintf(`{"progressToken":%s,"progress":%g,"total":%g}`, id, v, total))))
}

// Answer is the server's result for id.
func (r *Recorder) Answer(at time.Time, id wire.ID, result string) {
	r.Receive(at, wire.ResultResponse(id, json.RawMessage(result)))
}

// Cancel cancels id as the user's c does, and applies the signal the
// client sent.
func (r *Recorder) Cancel(at time.Time, id wire.ID, reason string) {
	ch, err := r.TR.RequestCancel(id, reason, session.CauseUser, at)
	if err != nil {
		return
	}
	_ = r.TW.Changes(r.TR, []session.Change{ch})
	r.Apply(event.Event{Kind: event.CancelSent, Time: at, RequestID: id, Signal: event.SignalNotification, Reason: reason})
}

// Tick is the TUI's clock at now: what the tracker has due, written,
// and the cancels of expired requests sent.
func (r *Recorder) Tick(now time.Time) {
	d := r.TR.Due(now)
	_ = r.TW.Changes(r.TR, d.Changes)
	for _, x := range d.Cancels {
		r.Apply(event.Event{Kind: event.CancelSent, Time: now, RequestID: x.ID, Signal: event.SignalNotification, Reason: x.Reason})
	}
	for _, c := range d.Requests {
		_ = r.TW.State(c.Created, c, c.State, c.State)
		raw := wire.Request(c.ID, c.Method, c.ChildParams)
		msg, _ := wire.Decode(raw)
		r.Apply(event.Event{Kind: event.Sent, Time: now, RequestID: c.ID, Raw: raw, Msg: msg})
	}
}

// Close flushes the trace.
func (r *Recorder) Close() error { return r.TW.Close() }

// Flood records a run of about lines trace lines: tools/list answered,
// then a tools/call whose server floods progress every 10µs, cancelled
// by the user at four fifths of the flood (the rest of it is late
// progress), answered late, and settled when its late window is over.
func Flood(w io.Writer, start time.Time, lines int) error {
	r := New(w, start, session.DefaultConfig())
	at := func(d time.Duration) time.Time { return start.Add(d) }
	r.Connected(at(time.Millisecond), event.EraModern)
	list := r.Begin(at(2*time.Millisecond), wire.MethodToolsList, "")
	r.Answer(at(3*time.Millisecond), list, `{"resultType":"complete","tools":[{"name":"flood","inputSchema":{"type":"object"}}]}`)
	call := r.Begin(at(5*time.Millisecond), wire.MethodToolsCall, `{"name":"flood","arguments":{"n":1000000}}`)
	n := max(lines-12, 1)
	for i := range n {
		t := at(6*time.Millisecond + time.Duration(i)*10*time.Microsecond)
		if i == n*4/5 {
			r.Cancel(t, call, "user requested cancellation")
		}
		r.Progress(t, call, float64(i+1), float64(n))
		if i%50_000 == 0 {
			r.Tick(t)
		}
	}
	end := at(6*time.Millisecond + time.Duration(n)*10*time.Microsecond)
	r.Answer(end, call, `{"resultType":"complete","content":[{"type":"text","text":"flooded"}]}`)
	r.Tick(end.Add(10 * time.Second))
	return r.Close()
}
