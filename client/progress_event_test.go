package client_test

import (
	"testing"

	"inflight/client"
	"inflight/event"
	"inflight/wire"
)

// TestProgressDecodedOnce: a progress notification arrives with its params
// decoded (Event.Progress), so that the consumer need not decode them
// again; invalid params arrive without, for the consumer to report.
func TestProgressDecodedOnce(t *testing.T) {
	c, rec, p := legacyPeer(t, client.Config{})
	id := send(t, c, 1, wire.MethodToolsCall, toolCall("x", nil))
	p.wait(t, `"id":1`)
	p.send(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":3,"total":4,"message":"three"}}`)
	p.send(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1}}`)
	ev := rec.wait(t, "the progress", progressFor(id))
	if pr := ev.Progress; pr == nil || pr.Token != id || pr.Progress != 3 || pr.Total == nil || *pr.Total != 4 || pr.Message != "three" {
		t.Errorf("Progress = %+v, want the decoded params", ev.Progress)
	}
	bad := rec.wait(t, "the invalid progress", func(ev event.Event) bool {
		return ev.Kind == event.Received && ev.Msg.Method == wire.NotifyProgress && string(ev.Msg.Params) == `{"progressToken":1}`
	})
	if bad.Progress != nil {
		t.Errorf("invalid params decoded as %+v", bad.Progress)
	}
}
