package session

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"inflight/client"
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

func newHarness(t *testing.T, cfg Config, era client.Era, transport client.TransportKind) *harness {
	t.Helper()
	h := &harness{t: t, tr: NewTracker(cfg)}
	if era != client.EraUnknown {
		h.tr.Apply(client.Event{Kind: client.EventConnected, Time: t0, Info: &client.ConnInfo{Era: era, Transport: transport, ProtocolVersion: "x"}})
	}
	return h
}

func newStdio(t *testing.T, era client.Era) *harness {
	return newHarness(t, Config{}, era, client.TransportStdio)
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
	h.apply(event(h.t, client.EventSent, at, string(raw)))
}

// recv applies a message received at ms(at).
func (h *harness) recv(at int, raw string) {
	h.t.Helper()
	h.apply(event(h.t, client.EventReceived, at, raw))
}

func (h *harness) apply(ev client.Event) { h.tr.Apply(ev) }

// cancel asks to cancel and expects it accepted.
func (h *harness) cancel(at int, r *Request, cause CancelCause) {
	h.t.Helper()
	if ok, why := h.tr.RequestCancel(r.ID, "user", cause, ms(at)); !ok {
		h.t.Fatalf("RequestCancel(%s) refused: %s", r.ID, why)
	}
}

// cancelSent reports the client sent the cancel signal at ms(at).
func (h *harness) cancelSent(at int, r *Request, sig client.CancelSignal) {
	h.apply(client.Event{Kind: client.EventCancelSent, Time: ms(at), RequestID: r.ID, Signal: sig, Reason: "user"})
}

func (h *harness) streamClosed(at int, r *Request, byClient bool) {
	h.apply(client.Event{Kind: client.EventStreamClosed, Time: ms(at), RequestID: r.ID, ByClient: byClient})
}

// event builds a client event carrying a message, decoded with wire.Decode
// the way the client does (responses carry their ID in RequestID).
func event(t testing.TB, kind client.EventKind, at int, raw string) client.Event {
	t.Helper()
	msg, err := wire.Decode([]byte(raw))
	if err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	ev := client.Event{Kind: kind, Time: ms(at), Raw: []byte(raw), Msg: msg}
	if msg.Kind != wire.KindNotification {
		ev.RequestID = msg.ID
	}
	if kind == client.EventReceived && msg.Method == wire.NotifyProgress {
		// As the client does: progress arrives decoded.
		if p, err := wire.DecodeProgress(msg.Params); err == nil {
			ev.Progress = &p
		}
	}
	return ev
}

func malformed(at int, raw string) client.Event {
	_, err := wire.Decode([]byte(raw))
	if err == nil {
		err = errors.New("test: valid message used as malformed")
	}
	return client.Event{Kind: client.EventMalformed, Time: ms(at), Raw: []byte(raw), Err: err}
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
