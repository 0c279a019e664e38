package client_test

import (
	"testing"
	"time"

	"inflight/client"
	"inflight/event"
	"inflight/wire"
)

// TestStdioLinesOfOneReadShareItsTime: the reader reads the clock once per
// read(), so the lines one read brought in carry the same instant, and a
// line of a later read a later one (every event carries the time its
// transport read it).
func TestStdioLinesOfOneReadShareItsTime(t *testing.T) {
	c, rec, p := legacyPeer(t, client.Config{})
	id := send(t, c, 1, wire.MethodToolsCall, toolCall("x", nil))
	p.wait(t, `"id":1`)
	progress := func(n string) string {
		return `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":` + n + `}}` + "\n"
	}
	p.sendRaw([]byte(progress("1") + progress("2") + progress("3"))) // one write, one read
	third := rec.wait(t, "the third progress", func(ev event.Event) bool {
		return ev.Progress != nil && ev.Progress.Progress == 3
	})
	time.Sleep(2 * time.Millisecond)
	p.send(`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)
	resp := rec.wait(t, "the response", responseTo(id))
	var batch []time.Time
	for _, ev := range rec.all() {
		if ev.Progress != nil {
			batch = append(batch, ev.Time)
		}
	}
	if len(batch) != 3 || !batch[0].Equal(batch[1]) || !batch[1].Equal(batch[2]) {
		t.Errorf("the lines of one read were stamped %v, want one instant", batch)
	}
	if !resp.Time.After(third.Time) {
		t.Errorf("a line of a later read was stamped %v, not after the earlier read's %v", resp.Time, third.Time)
	}
}
