package client_test

import (
	"strings"
	"testing"

	"inflight/client"
	"inflight/event"
	"inflight/internal/testkit/hostile"
	"inflight/wire"
)

// TestLookalikeIDsAnswerNothing: a server that answers request 1 first as
// 1.0, 1E0 and 1e0, and with an ID of 1e-400, and only then as 1. JSON-RPC
// IDs are compared as the server wrote them against what inflight sent, so
// only the last one is the answer to request 1 (the tracker then flags the
// others as unknown IDs, and does not take the real one for a duplicate),
// and 1e-400 is never shown as 0. Before, every look-alike was request 1.
func TestLookalikeIDsAnswerNothing(t *testing.T) {
	sv := hostile.Serve(hostile.OddIDs)
	defer sv.Stop()
	c, rec, _ := connectClient(t, client.Config{Pipes: &client.Pipes{Stdin: sv.Stdin, Stdout: sv.Stdout}, ProtocolVersion: wire.Version20251125})
	id := send(t, c, 1, wire.MethodToolsCall, toolCall(hostile.ToolName, nil))
	ev := rec.wait(t, "the real answer", func(ev event.Event) bool {
		return ev.Kind == event.Received && strings.Contains(string(ev.Raw), "answered with the id as 1\"")
	})
	if ev.RequestID != id || ev.Msg.ID != id {
		t.Fatalf("the real answer has ID %s, want %s", ev.RequestID, id)
	}
	seen := map[string]bool{}
	for _, e := range rec.all() {
		if e.Kind != event.Received || !e.Msg.IsResponse() {
			continue
		}
		seen[e.Msg.ID.Raw()] = true
		if e.Msg.ID == id && e.Raw != nil && !strings.Contains(string(e.Raw), "answered with the id as 1\"") {
			t.Errorf("%s was taken for the answer to request 1", e.Raw)
		}
		if e.Msg.ID == wire.IntID(0) {
			t.Errorf("%s was read as ID 0", e.Raw)
		}
	}
	for _, raw := range []string{"1.0", "1E0", "1e0", "1e-400"} {
		if !seen[raw] {
			t.Errorf("no response with the ID %s as written; IDs seen: %v", raw, seen)
		}
	}
}
