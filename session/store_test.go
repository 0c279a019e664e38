package session

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"inflight/event"
	"inflight/wire"
)

func TestHistoryEvictionKeepsActive(t *testing.T) {
	h := newHarness(t, Config{HistoryLimit: 4}, event.EraLegacy, event.TransportStdio)
	listen := h.begin(0, wire.MethodSubscriptionsListen, "")
	for i := 2; i <= 9; i++ {
		h.begin(i, "tools/list", "")
		h.recv(i, result(i, `{}`))
		checkInvariants(t, h.tr)
	}
	expect(t, "len", h.tr.Len(), 4)
	expect(t, "oldest is the active listen", h.tr.At(0), listen)
	var ids []string
	for i := 0; i < h.tr.Len(); i++ {
		ids = append(ids, h.tr.At(i).ID.String())
	}
	expect(t, "kept", strings.Join(ids, ","), "1,7,8,9")
	if _, ok := h.tr.Get(id(2)); ok {
		t.Error("request 2 still kept")
	}
	i, ok := h.tr.Index(id(8))
	expect(t, "index of 8", i, 2)
	expect(t, "index ok", ok, true)
	expect(t, "counts", h.tr.Counts(), Counts{InFlight: 1, Done: 3, Evicted: 5})
	if _, ok := h.tr.RawResponse(id(2)); ok {
		t.Error("raw response of an evicted request kept")
	}

	// Traffic for evicted requests is old news, not a violation.
	h.recv(20, result(2, `{}`))
	h.recv(21, progress(3, 1))
	h.recv(22, subNotification(wire.NotifyResourceUpdated, 4))
	expect(t, "violations", h.tr.Violations().Total(), int64(0))
	rf := refusal(h.tr.RequestCancel(id(2), "", CauseUser, ms(30)))
	expect(t, "cancel evicted", *rf, Refused{Why: RefusedEvicted, ID: id(2)})
	// An ID never issued still is a violation.
	h.recv(23, result(10, `{}`))
	if got := codes(h.tr); !slices.Equal(got, []string{ViolationUnknownResponseID}) {
		t.Errorf("violations = %v", got)
	}
}

func TestHistoryEvictsInBatches(t *testing.T) {
	const limit = 64
	h := newHarness(t, Config{HistoryLimit: limit}, event.EraLegacy, event.TransportStdio)
	active := map[wire.ID]bool{}
	for i := 1; i <= 1000; i++ {
		r := h.begin(i, "tools/list", "")
		if i%10 == 0 {
			active[r.ID] = true // every tenth stays in flight
			continue
		}
		h.recv(i, result(i, `{}`))
		if h.tr.Len() > limit+len(active) {
			t.Fatalf("history %d over limit %d", h.tr.Len(), limit)
		}
	}
	for id := range active {
		if _, ok := h.tr.Get(id); !ok {
			t.Fatalf("active request %s evicted", id)
		}
	}
	checkInvariants(t, h.tr)
}

func TestRawStore(t *testing.T) {
	h := newHarness(t, Config{RawStoreBytes: 200}, event.EraLegacy, event.TransportStdio)
	params := `{"name":"` + strings.Repeat("a", 40) + `"}`
	r1 := h.tr.Begin(wire.MethodToolsCall, []byte(params), RequestOptions{}, ms(0))
	got, ok := h.tr.RawRequest(r1.ID)
	expect(t, "params before sending", string(got), params)
	expect(t, "ok", ok, true)
	expect(t, "target", r1.Target, strings.Repeat("a", 40))

	sentRaw := wire.Request(r1.ID, r1.Method, []byte(params))
	h.apply(msgEvent(t, event.Sent, 1, string(sentRaw)))
	got, _ = h.tr.RawRequest(r1.ID)
	expect(t, "exact bytes sent", string(got), string(sentRaw))
	expect(t, "sent time", r1.Sent, ms(1))

	resp := result(1, `{"x":1}`)
	h.recv(2, resp)
	got, ok = h.tr.RawResponse(r1.ID)
	expect(t, "response", string(got), resp)
	expect(t, "response ok", ok, true)

	// Another large request pushes the oldest bytes out first.
	r2 := h.tr.Begin(wire.MethodToolsCall, []byte(params), RequestOptions{}, ms(3))
	h.apply(msgEvent(t, event.Sent, 3, string(wire.Request(r2.ID, r2.Method, []byte(params)))))
	if _, ok := h.tr.RawRequest(r1.ID); ok {
		t.Error("oldest request bytes not evicted")
	}
	if _, ok := h.tr.RawResponse(r1.ID); !ok {
		t.Error("newer response evicted before older request")
	}
	if h.tr.raw.size > 200 {
		t.Errorf("raw store holds %d bytes", h.tr.raw.size)
	}

	// A message larger than the whole store is not kept, nor is anything older
	// shown in its place.
	huge := `{"name":"` + strings.Repeat("b", 300) + `"}`
	r4 := h.tr.Begin(wire.MethodToolsCall, []byte(huge), RequestOptions{}, ms(4))
	if _, ok := h.tr.RawRequest(r4.ID); ok {
		t.Error("oversized request kept")
	}
}

func TestRawStoreCompacts(t *testing.T) {
	s := newRawStore(1 << 20)
	for i := range 10_000 {
		k := rawKey{id(i % 10), rawRequest}
		s.put(k, []byte("0123456789"))
	}
	if q := len(s.fifo) - s.head; q > 2*len(s.items)+16 {
		t.Errorf("fifo holds %d items for %d live ones", q, len(s.items))
	}
	expect(t, "size", s.size, 100)
}

func TestLogRingWraps(t *testing.T) {
	h := newHarness(t, Config{LogEntries: 3, LogEntryBytes: 16}, event.EraUnknown, event.TransportStdio)
	for i := range 5 {
		h.apply(event.Event{Kind: event.Note, Time: ms(i), Text: fmt.Sprint("note ", i)})
	}
	l := h.tr.Log()
	expect(t, "len", l.Len(), 3)
	expect(t, "total", l.Total(), int64(5))
	for i := range 3 {
		expect(t, "entry", l.At(i).Text, fmt.Sprint("note ", i+2))
		expect(t, "dir", l.At(i).Dir, DirLocal)
	}

	raw := `{"jsonrpc":"2.0","method":"notifications/message","params":{}}`
	h.recv(10, raw)
	e := l.At(2)
	expect(t, "clipped raw", string(e.Raw), raw[:16])
	expect(t, "truncated", e.Truncated, len(raw)-16)
	expect(t, "in", e.Dir, DirIn)
	expect(t, "method", e.Method, "notifications/message")
	expect(t, "oldest now", l.At(0).Text, "note 3")
}

func TestLogEntries(t *testing.T) {
	h := newStdio(t, event.EraModern)
	r := h.begin(0, "tools/call", tcall)
	h.cancel(5, r, CauseUser)
	h.cancelSent(6, r, event.SignalNotification)
	h.recv(7, result(1, complete))
	l := h.tr.Log()
	// connected, sent, state cancel_requested, cancel sent, response,
	// state cancelled (the response settled it)
	expect(t, "len", l.Len(), 6)
	sent, toCancel, cancel, resp, settled := l.At(1), l.At(2), l.At(3), l.At(4), l.At(5)
	expect(t, "state entry", toCancel.IsState, true)
	expect(t, "state from", toCancel.From, StatePending)
	expect(t, "state to", toCancel.State, StateCancelRequested)
	expect(t, "state id", toCancel.ID, r.ID)
	expect(t, "settled", settled.State, StateCancelled)
	expect(t, "sent dir", sent.Dir, DirOut)
	expect(t, "sent id", sent.ID, r.ID)
	expect(t, "cancel signal", cancel.Signal, event.SignalNotification)
	expect(t, "cancel reason", cancel.Text, "user")
	expect(t, "response method", resp.Method, "tools/call")
	expect(t, "response kind", resp.MsgKind, wire.KindResult)
	if !bytes.Equal(resp.Raw, []byte(result(1, complete))) {
		t.Errorf("response raw = %s", resp.Raw)
	}
	// Progress is logged under the request it belongs to.
	h.recv(8, progress(1, 1))
	expect(t, "progress id", l.At(6).ID, r.ID)
}

func TestStderrRing(t *testing.T) {
	h := newHarness(t, Config{StderrLines: 2}, event.EraUnknown, event.TransportStdio)
	for i := range 3 {
		h.apply(event.Event{Kind: event.Stderr, Time: ms(i), Text: fmt.Sprint("line ", i)})
	}
	s := h.tr.Stderr()
	expect(t, "len", s.Len(), 2)
	expect(t, "total", s.Total(), int64(3))
	expect(t, "oldest", s.At(0).Text, "line 1")
	expect(t, "newest", s.At(1).Text, "line 2")
	expect(t, "also logged", h.tr.Log().Len(), 3)
}

func TestTimelineDecimation(t *testing.T) {
	h := newStdio(t, event.EraModern)
	r := h.begin(0, "tools/call", "")
	for i := 1; i <= 100; i++ {
		h.recv(i, progress(1, float64(i)))
		if len(r.Timeline) > TimelineSamples {
			t.Fatalf("timeline has %d samples", len(r.Timeline))
		}
	}
	// 100 notifications with the stride doubled twice (1→2→4): samples at
	// progress 1, 5, 9, … 97.
	expect(t, "samples", len(r.Timeline), 25)
	for i, s := range r.Timeline {
		expect(t, "sample value", s.Value, float64(1+4*i))
	}
	expect(t, "first at", r.Timeline[0].At, ms(1).Sub(t0))
	expect(t, "total", r.Timeline[0].Total, 100.0)
	expect(t, "count", r.Progress.Count, 100)
	expect(t, "first", r.Progress.First, ms(1))
	expect(t, "last", r.Progress.Last, ms(100))
	expect(t, "message", r.Progress.Message, "working")
}
