package waterfall

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"inflight/event"
	"inflight/keymap"
	"inflight/session"
	"inflight/termsafe"
	"inflight/ui/look"
	"inflight/ui/screen"
	"inflight/wire"
)

// t0 is the fixed clock a run starts at; at(ms) is ms milliseconds later.
var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// run drives a tracker the way the root does, on a fixed clock: requests
// begun and sent, what the server answers, cancels, and Due's work sent
// at each tick.
type run struct {
	tb   testing.TB
	tr   *session.Tracker
	keys keymap.KeyMap
	now  time.Time
}

func newRun(tb testing.TB, cfg session.Config) *run {
	r := &run{tb: tb, tr: session.NewTracker(cfg), keys: keymap.Default(), now: t0}
	r.apply(event.Event{Kind: event.Connected, Time: t0, Info: &event.ConnInfo{Era: event.EraLegacy, Transport: event.TransportStdio, ProtocolVersion: "2025-11-25"}})
	r.keys.SetState(keymap.State{Mode: keymap.ModeList, Waterfall: true, HasSelection: true, HasRequests: true, Connected: true})
	return r
}

func (r *run) env() screen.Env {
	return screen.Env{Tracker: r.tr, Now: r.now, Styles: look.NewStyles(true), Keys: &r.keys, Line: termsafe.Line, Block: termsafe.Block}
}

func (r *run) apply(ev event.Event) {
	if ev.Time.After(r.now) {
		r.now = ev.Time
	}
	r.tr.Apply(ev)
}

// message applies a message of kind at ms, decoded as the client does.
func (r *run) message(kind event.Kind, ms int, raw []byte, owner wire.ID, internal bool) {
	r.tb.Helper()
	msg, err := wire.Decode(raw)
	if err != nil {
		r.tb.Fatalf("decode %s: %v", raw, err)
	}
	ev := event.Event{Kind: kind, Time: at(ms), Raw: raw, Msg: msg, Owner: owner, Internal: internal}
	if msg.Kind != wire.KindNotification {
		ev.RequestID = msg.ID
	}
	if kind == event.Received && msg.Method == wire.NotifyProgress {
		p, err := wire.DecodeProgress(msg.Params)
		if err != nil {
			r.tb.Fatal(err)
		}
		ev.Progress = &p
	}
	r.apply(ev)
}

// call begins a tools/call of tool at ms and sends it.
func (r *run) call(ms int, tool string, opts session.RequestOptions) *session.Request {
	return r.begin(ms, wire.MethodToolsCall, fmt.Sprintf(`{"name":%q,"arguments":{}}`, tool), opts)
}

func (r *run) begin(ms int, method, params string, opts session.RequestOptions) *session.Request {
	r.tb.Helper()
	req := r.tr.Begin(method, json.RawMessage(params), opts, at(ms))
	r.message(event.Sent, ms, wire.Request(req.ID, method, json.RawMessage(params)), wire.ID{}, false)
	return req
}

func (r *run) answer(ms int, req *session.Request, result string) {
	r.tb.Helper()
	r.message(event.Received, ms, wire.ResultResponse(req.ID, json.RawMessage(result)), wire.ID{}, false)
}

func (r *run) done(ms int, req *session.Request) {
	r.answer(ms, req, `{"content":[{"type":"text","text":"done"}]}`)
}

func (r *run) progress(ms int, req *session.Request, v float64) {
	r.tb.Helper()
	params, _ := json.Marshal(map[string]any{"progressToken": req.ProgressToken, "progress": v, "total": 10})
	r.message(event.Received, ms, wire.Notification(wire.NotifyProgress, params), wire.ID{}, false)
}

// cancel asks for the cancel at ms; sent, its signal leaves at once.
func (r *run) cancel(ms int, req *session.Request, sent bool) {
	r.tb.Helper()
	if _, err := r.tr.RequestCancel(req.ID, "user requested cancellation", session.CauseUser, at(ms)); err != nil {
		r.tb.Fatal(err)
	}
	if sent {
		r.cancelSent(ms, req)
	}
}

func (r *run) cancelSent(ms int, req *session.Request) {
	r.apply(event.Event{Kind: event.CancelSent, Time: at(ms), RequestID: req.ID, Signal: event.SignalNotification, Reason: "user requested cancellation"})
}

// tick runs Due at ms and sends what it asks: the task's requests, and
// the cancels of the timeouts.
func (r *run) tick(ms int) []*session.Request {
	r.tb.Helper()
	if at(ms).After(r.now) {
		r.now = at(ms)
	}
	due := r.tr.Due(at(ms))
	for _, x := range due.Cancels {
		req, _ := r.tr.Get(x.ID)
		r.cancelSent(ms, req)
	}
	sent := due.Requests
	for _, c := range sent {
		r.message(event.Sent, ms, wire.Request(c.ID, c.Method, c.ChildParams), wire.ID{}, false)
	}
	return sent
}

// taskJSON is a legacy task object.
func taskJSON(status, message string) string {
	return fmt.Sprintf(`"taskId":"t-1","status":%q,"statusMessage":%q,"createdAt":"2026-11-30T09:00:01Z","lastUpdatedAt":"2026-11-30T09:00:01Z","ttl":60000,"pollInterval":1000`, status, message)
}

// fixedRun is the run every golden view draws, six seconds long: a call
// completed; one cancelled whose late progress and late response were
// flagged; one whose response crossed its cancel; one that timed out; a
// task polled three times, working; one in flight with progress; and one
// during which the server asked a question, answered.
func fixedRun(tb testing.TB) *run {
	r := newRun(tb, session.Config{LateWindow: time.Second, NoTaskListen: true})
	search := r.call(0, "search", session.RequestOptions{})
	stubborn := r.call(300, "stubborn", session.RequestOptions{})
	race := r.call(500, "race", session.RequestOptions{})
	r.progress(800, stubborn, 1)
	silent := r.call(1000, "silent", session.RequestOptions{Timeout: 2 * time.Second})
	r.done(1200, search)
	report := r.begin(1200, wire.MethodToolsCall, `{"name":"report","arguments":{},"task":{"ttl":60000}}`, session.RequestOptions{})
	r.answer(1300, report, `{"task":{`+taskJSON("working", "started")+`}}`)
	r.cancel(1500, stubborn, true)
	slow := r.call(2000, "slow", session.RequestOptions{Timeout: 5 * time.Second})
	r.cancel(2000, race, false)
	r.done(2010, race) // before the cancel's signal left: crossed
	r.cancelSent(2020, race)
	poll := func(ms int, message string) {
		polls := r.tick(ms)
		if len(polls) != 1 || polls[0].Method != wire.MethodTasksGet {
			tb.Fatalf("at %dms the task's work is %d requests, want one tasks/get", ms, len(polls))
		}
		r.answer(ms+50, polls[0], `{`+taskJSON("working", message)+`}`)
	}
	poll(2300, "page 1")
	r.progress(2400, stubborn, 2) // late
	r.tick(2500)                  // stubborn's late window ends
	r.progress(2500, slow, 1)
	r.tick(3000) // silent times out
	r.progress(3000, slow, 2)
	r.done(3100, stubborn) // late
	poll(3350, "page 2")
	r.progress(3500, slow, 3)
	r.tick(4000) // silent's late window ends
	r.progress(4000, slow, 4)
	confirm := r.call(4000, "confirm", session.RequestOptions{})
	poll(4400, "page 3")
	r.message(event.Received, 4500, wire.Request(wire.IntID(1), wire.MethodElicitationCreate, json.RawMessage(`{"message":"Overwrite the report?","requestedSchema":{"type":"object"}}`)), confirm.ID, true)
	r.message(event.Sent, 5000, wire.ResultResponse(wire.IntID(1), json.RawMessage(`{"action":"accept","content":{}}`)), wire.ID{}, true)
	r.done(5500, confirm)
	r.tick(6000)
	for _, c := range []struct {
		req  *session.Request
		want session.State
	}{{search, session.StateCompleted}, {stubborn, session.StateCancelled}, {race, session.StateCancelled}, {silent, session.StateTimedOut},
		{report, session.StateTask}, {slow, session.StateRunning}, {confirm, session.StateCompleted}} {
		if c.req.State != c.want {
			tb.Fatalf("#%s (%s) is %v, want %v", c.req.ID, c.req.Target, c.req.State, c.want)
		}
	}
	if !stubborn.Late.Response || stubborn.Late.Crossed || stubborn.Late.ProgressAfterCancel != 1 {
		tb.Fatalf("stubborn's late traffic: %+v", stubborn.Late)
	}
	if !race.Late.Response || !race.Late.Crossed {
		tb.Fatalf("race's response did not cross: %+v", race.Late)
	}
	if confirm.Conv == nil || len(confirm.Conv.ServerRequests) != 1 {
		tb.Fatal("the question is not tied to confirm")
	}
	return r
}

// screenOf lays m out and draws it at w × h, without its styling.
func (r *run) screenOf(m Model, w, h int) (Model, string) {
	m = m.Layout(r.env(), w, h)
	return m, ansi.Strip(m.View(r.env(), w, h))
}
