package session

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"inflight/event"
	"inflight/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// t0 is the fixed clock every test starts from; ms(n) is n milliseconds
// later.
var t0 = time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)

func ms(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }

// harness drives a tracker with events built from JSON text, the way the
// client would emit them.
type harness struct {
	t  *testing.T
	tr *Tracker
}

func newHarness(t *testing.T, cfg Config, era event.Era, transport event.TransportKind) *harness {
	t.Helper()
	h := &harness{t: t, tr: NewTracker(cfg)}
	if era != event.EraUnknown {
		h.tr.Apply(event.Event{Kind: event.Connected, Time: t0, Info: &event.ConnInfo{Era: era, Transport: transport, ProtocolVersion: "x"}})
	}
	return h
}

func newStdio(t *testing.T, era event.Era) *harness {
	return newHarness(t, Config{}, era, event.TransportStdio)
}

// begin starts a request at ms(at) and reports it sent at the same instant.
func (h *harness) begin(at int, method string, params string) *Request {
	h.t.Helper()
	var p json.RawMessage
	if params != "" {
		p = json.RawMessage(params)
	}
	r := h.tr.Begin(method, p, RequestOptions{}, ms(at))
	h.sent(at, r)
	return r
}

func (h *harness) sent(at int, r *Request) {
	h.t.Helper()
	raw := wire.Request(r.ID, r.Method, nil)
	h.apply(msgEvent(h.t, event.Sent, at, string(raw)))
}

// recv applies a message received at ms(at).
func (h *harness) recv(at int, raw string) {
	h.t.Helper()
	h.apply(msgEvent(h.t, event.Received, at, raw))
}

func (h *harness) apply(ev event.Event) { h.tr.Apply(ev) }

// cancel asks to cancel and expects it accepted.
func (h *harness) cancel(at int, r *Request, cause CancelCause) {
	h.t.Helper()
	if _, err := h.tr.RequestCancel(r.ID, "user", cause, ms(at)); err != nil {
		h.t.Fatalf("RequestCancel(%s) refused: %v", r.ID, err)
	}
}

// cancelSent reports the client sent the cancel signal at ms(at).
func (h *harness) cancelSent(at int, r *Request, sig event.CancelSignal) {
	h.apply(event.Event{Kind: event.CancelSent, Time: ms(at), RequestID: r.ID, Signal: sig, Reason: "user"})
}

func (h *harness) streamClosed(at int, r *Request, byClient bool) {
	h.apply(event.Event{Kind: event.StreamClosed, Time: ms(at), RequestID: r.ID, ByClient: byClient})
}

// msgEvent builds a client event carrying a message, decoded with wire.Decode
// the way the client does (responses carry their ID in RequestID).
func msgEvent(t testing.TB, kind event.Kind, at int, raw string) event.Event {
	t.Helper()
	msg, err := wire.Decode([]byte(raw))
	if err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	ev := event.Event{Kind: kind, Time: ms(at), Raw: []byte(raw), Msg: msg}
	if msg.Kind != wire.KindNotification {
		ev.RequestID = msg.ID
	}
	if kind == event.Received && msg.Method == wire.NotifyProgress {
		// As the client does: progress arrives decoded.
		if p, err := wire.DecodeProgress(msg.Params); err == nil {
			ev.Progress = &p
		}
	}
	return ev
}

func malformed(at int, raw string) event.Event {
	_, err := wire.Decode([]byte(raw))
	if err == nil {
		err = errors.New("test: valid message used as malformed")
	}
	return event.Event{Kind: event.Malformed, Time: ms(at), Raw: []byte(raw), Err: err}
}

// Message builders.

func result(id int, result string) string {
	return string(wire.ResultResponse(wire.IntID(int64(id)), json.RawMessage(result)))
}

func rpcError(id int, code int, msg string) string {
	return string(wire.ErrorResponse(wire.IntID(int64(id)), code, msg))
}

func progress(token int, value float64) string {
	b, _ := json.Marshal(map[string]any{"progressToken": token, "progress": value, "total": 100, "message": "working"})
	return string(wire.Notification(wire.NotifyProgress, b))
}

func serverCancel(id int) string {
	return string(wire.Notification(wire.NotifyCancelled, wire.CancelledParams(wire.IntID(int64(id)), "server says so")))
}

func subNotification(method string, sub int) string {
	b, _ := json.Marshal(map[string]any{"_meta": map[string]any{wire.MetaSubscriptionID: sub}, "uri": "file:///x"})
	return string(wire.Notification(method, b))
}

func id(n int) wire.ID { return wire.IntID(int64(n)) }

// expect compares a value and reports the field name on mismatch.
func expect[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

// adjusted turns AdjustTimeout's results into the test's (ok, clamped or
// refused) pair.
func adjusted(c Clamped, err error) (ok bool, why string) {
	if err != nil {
		return false, err.Error()
	}
	if c != NotClamped {
		return true, "clamped"
	}
	return true, ""
}

// refusal is RequestCancel's refusal, nil when it accepted.
func refusal(_ Change, err error) *Refused {
	if err == nil {
		return nil
	}
	r, ok := err.(*Refused)
	if !ok {
		panic("RequestCancel returned a non-Refused error: " + err.Error())
	}
	return r
}

// roundTrip applies a measured round trip of d, as the client's ping does.
func (h *harness) roundTrip(at int, d time.Duration) {
	h.apply(event.Event{Kind: event.RoundTrip, Time: ms(at), RTT: d, Text: "ping"})
}
