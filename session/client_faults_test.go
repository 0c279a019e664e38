package session

import (
	"testing"

	"inflight/event"
	"inflight/wire"
)

// TestServerRequestFlood: the client's report that it refused a flooding
// server's request is recorded as a violation attributed to no request of
// ours (the ID is the server's), and marks its log entry.
func TestServerRequestFlood(t *testing.T) {
	h := newStdio(t, event.EraLegacy)
	r := h.begin(0, "tools/call", `{"name":"x"}`)
	raw := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	ev := msgEvent(t, event.Received, 5, raw)
	ev.Kind, ev.Internal, ev.RequestID = event.ServerRequestRefused, true, wire.IntID(1)
	ev.Text = "the server has more than 256 of its requests waiting for inflight's answer; ping 1 refused"
	h.apply(ev)
	vs := h.tr.Violations()
	if vs.Count(ViolationServerRequestFlood) != 1 || vs.Len() != 1 {
		t.Fatalf("violations %v, want one %s", vs.Counts(), ViolationServerRequestFlood)
	}
	if v := vs.At(0); !v.RequestID.IsZero() || v.Detail != ev.Text || string(v.Raw) != raw {
		t.Errorf("violation %+v", v)
	}
	if r.Violations != 0 || r.Flagged() {
		t.Errorf("request 1 of ours was blamed for the server's own request 1")
	}
	lg := h.tr.Log()
	if e := lg.At(lg.Len() - 1); e.Violation != ViolationServerRequestFlood {
		t.Errorf("log entry violation %q", e.Violation)
	}
}
