package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"inflight/event"
	"inflight/wire"
)

// longToolsScene is server-everything's kind of list: long tool names that
// share their first ten letters, a tool error that says why only at its
// end, a JSON-RPC error, and a cancelled request with late progress (the
// outcome column's flags must still come first).
func longToolsScene(t *testing.T, w, hgt int) *harness {
	h := newHarness(t, w, hgt)
	h.connect()
	a := h.sendTool("simulate-research-query")
	h.answer(a, `{"resultType":"complete","isError":true,"content":[{"type":"text","text":"MCP error -32601: Tool simulate-research-query requires task augmentation (taskSupport: 'required')"}]}`)
	b := h.sendTool("simulate-elicitation")
	raw := []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"error":{"code":-32602,"message":"MCP error -32602: Tool simulate-elicitation has no argument topic"}}`, b))
	msg, _ := wire.Decode(raw)
	h.events(event.Event{Kind: event.Received, RequestID: wire.IntID(b), Raw: raw, Msg: msg})
	c := h.sendTool("trigger-long-running-operation")
	h.progress(c, 1, 10, "step 1")
	h.advance(500 * time.Millisecond)
	h.run(h.m.cancel(wire.IntID(c), "user requested cancellation", 1))
	h.cancelSent(c, event.SignalNotification)
	h.advance(900 * time.Millisecond)
	h.progress(c, 2, 10, "step 2")
	h.sendTool("trigger-sampling-request")
	h.advance(300 * time.Millisecond)
	return h
}

func TestGoldenLongToolNames(t *testing.T) {
	for _, size := range []struct{ w, h int }{{80, 24}, {120, 35}} {
		t.Run(fmt.Sprintf("list-long-tools-%dx%d", size.w, size.h), func(t *testing.T) {
			longToolsScene(t, size.w, size.h).golden()
		})
	}
}

// At 80 columns the REQUEST column shows 16 cells of a long tool name,
// rows of different tools read differently, the late flag still shows,
// and a failure shows why rather than the code and the tool's name again.
func TestListLongToolNamesAt80(t *testing.T) {
	h := longToolsScene(t, 80, 24)
	scr := h.screen()
	for _, want := range []string{"simulate-resear…", "simulate-elicit…", "trigger-long-ru…", "trigger-samplin…", "⚑ 1 late",
		"-32601 · “…requires task", "-32602 · …has no argument"} {
		if !strings.Contains(scr, want) {
			t.Errorf("at 80 the list lacks %q:\n%s", want, scr)
		}
	}
	if strings.Contains(scr, "MCP error") {
		t.Errorf("the row spends its width on the code again:\n%s", scr)
	}
	h = longToolsScene(t, 120, 35)
	if scr := h.screen(); !strings.Contains(scr, "tool error -32601 · “…requires task augmentation") {
		t.Errorf("at 120 the tool error is cut:\n%s", scr)
	}
}
