package ui

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"inflight/event"
	"inflight/session"
	"inflight/wire"
)

// taskCall starts a modern tools/call that declares the tasks extension
// (as the client sends it) and answers it with a task handle.
func (h *harness) taskCall(tid string, pollMs int) int64 {
	h.t.Helper()
	params := json.RawMessage(`{"name":"slow","arguments":{},"_meta":{"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}`)
	h.run(h.m.send(wire.MethodToolsCall, params, sessionDefaults()))
	r := h.m.tracker.At(h.m.tracker.Len() - 1)
	id, _ := r.ID.Int()
	raw := wire.Request(r.ID, wire.MethodToolsCall, params)
	msg, _ := wire.Decode(raw)
	h.events(event.Event{Kind: event.Sent, RequestID: r.ID, Raw: raw, Msg: msg})
	h.answer(id, fmt.Sprintf(`{"resultType":"task","taskId":%q,"status":"working","statusMessage":"fetching page 1 of 9","createdAt":"x","lastUpdatedAt":"y","ttlMs":60000,"pollIntervalMs":%d}`, tid, pollMs))
	return id
}

// lastSent is the last request the UI asked the client to send.
func (h *harness) lastSent() (wire.ID, string, string) {
	h.t.Helper()
	h.fake.mu.Lock()
	defer h.fake.mu.Unlock()
	if len(h.fake.sent) == 0 {
		h.t.Fatal("nothing sent")
	}
	r := h.fake.sent[len(h.fake.sent)-1]
	return r.ID, r.Method, string(r.Params)
}

// answerTaskPoll answers the UI's last tasks/get with the task in status.
func (h *harness) answerTaskPoll(tid, status, extra string) {
	h.t.Helper()
	id, method, _ := h.lastSent()
	if method != wire.MethodTasksGet {
		h.t.Fatalf("the last request sent is %s, want tasks/get", method)
	}
	raw := wire.Request(id, method, wire.TaskParams(tid))
	msg, _ := wire.Decode(raw)
	h.events(event.Event{Kind: event.Sent, RequestID: id, Raw: raw, Msg: msg})
	n, _ := id.Int()
	h.answer(n, fmt.Sprintf(`{"resultType":"complete","taskId":%q,"status":%q,"createdAt":"x","lastUpdatedAt":"y","ttlMs":60000,"pollIntervalMs":1000%s}`, tid, status, extra))
}

// A task is one row that continues its request: polled at the server's
// interval with the poll never a row of its own, cancelled with
// tasks/cancel (never the transport's signal), and shown as what it did.
func TestTaskRowPolledAndCancelled(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	id := h.taskCall("t-1", 1000)
	scr := h.screen()
	for _, want := range []string{"⧗ task", "working · ", `"fetching page 1 of 9"`, "next in 1.0s", "ttl 1m00s"} {
		if !strings.Contains(scr, want) {
			t.Errorf("the task row lacks %q:\n%s", want, scr)
		}
	}
	h.advance(time.Second)
	if _, method, params := h.lastSent(); method != wire.MethodTasksGet || !strings.Contains(params, `"t-1"`) {
		t.Fatalf("after the interval the UI sent %s %s, want tasks/get of t-1", method, params)
	}
	h.answerTaskPoll("t-1", "working", `,"statusMessage":"fetching page 3 of 9"`)
	scr = h.screen()
	if !strings.Contains(scr, `"fetching page 3 of 9"`) || !strings.Contains(scr, "polled 0ms ago") {
		t.Errorf("after a poll:\n%s", scr)
	}
	if strings.Contains(scr, "tasks/get") {
		t.Errorf("a poll shows as a row of its own:\n%s", scr)
	}
	if got := h.m.tracker.Counts().InFlight; got != 1 {
		t.Errorf("%d in flight, want 1: polls are the task's, not the user's", got)
	}

	h.key("c")
	_, cancels := h.fake.calls()
	if cancels != 0 {
		t.Fatalf("c on a task called the client's Cancel (%d): a task is cancelled with tasks/cancel only", cancels)
	}
	cid, method, params := h.lastSent()
	if method != wire.MethodTasksCancel || !strings.Contains(params, `"t-1"`) {
		t.Fatalf("c sent %s %s, want tasks/cancel of t-1", method, params)
	}
	raw := wire.Request(cid, method, wire.TaskParams("t-1"))
	msg, _ := wire.Decode(raw)
	h.events(event.Event{Kind: event.Sent, RequestID: cid, Raw: raw, Msg: msg})
	h.advance(300 * time.Millisecond)
	n, _ := cid.Int()
	h.answer(n, `{"resultType":"complete"}`)
	h.advance(300 * time.Millisecond)
	scr = h.screen()
	if !strings.Contains(scr, "tasks/cancel acknowledged 0.3s ago") || !strings.Contains(scr, "cancelling") {
		t.Errorf("after the acknowledgement:\n%s", scr)
	}
	// The task finishes anyway: its fate, flagged, never a success.
	h.advance(time.Second)
	h.answerTaskPoll("t-1", "completed", `,"result":{"content":[{"type":"text","text":"all 9 pages"}]}`)
	r := h.request(id)
	if r.State != session.StateCancelled || !r.Flagged() {
		t.Fatalf("completed after tasks/cancel: %s, flagged %v", r.State, r.Flagged())
	}
	scr = h.screen()
	if !strings.Contains(scr, "⚑ completed after tasks/cancel") {
		t.Errorf("the row does not flag the late completion:\n%s", scr)
	}
	h.key("enter")
	scr = h.screen()
	for _, want := range []string{"task t-1 completed", "TASK t-1", "working", "(handle)", "(poll)", "tasks/cancel sent", "tasks/cancel acknowledged",
		"⚑ completed after tasks/cancel", "TASK RESULT AFTER tasks/cancel (late; ignored)"} {
		if !strings.Contains(scr, want) {
			t.Errorf("the detail lacks %q:\n%s", want, scr)
		}
	}
}

func TestGoldenTaskViews(t *testing.T) {
	for _, size := range []struct{ w, h int }{{80, 24}, {120, 35}} {
		suffix := fmt.Sprintf("%dx%d", size.w, size.h)
		t.Run("task-working-"+suffix, func(t *testing.T) {
			h := newHarness(t, size.w, size.h)
			h.connect()
			h.taskCall("7f3e9c2a-research", 2000)
			h.advance(2 * time.Second)
			h.answerTaskPoll("7f3e9c2a-research", "working", `,"statusMessage":"fetching page 3 of 9"`)
			h.advance(800 * time.Millisecond)
			h.golden()
		})
		t.Run("task-log-"+suffix, func(t *testing.T) {
			// The log words the task's traffic: the handle, each poll's
			// status and message, the tasks/cancel and its answer.
			h := newHarness(t, size.w, size.h)
			h.connect()
			h.taskCall("7f3e9c2a-research", 1000)
			h.advance(time.Second)
			h.answerTaskPoll("7f3e9c2a-research", "working", `,"statusMessage":"fetching page 3 of 9"`)
			h.key("c")
			cid, method, _ := h.lastSent()
			raw := wire.Request(cid, method, wire.TaskParams("7f3e9c2a-research"))
			msg, _ := wire.Decode(raw)
			h.events(event.Event{Kind: event.Sent, RequestID: cid, Raw: raw, Msg: msg})
			h.advance(100 * time.Millisecond)
			n, _ := cid.Int()
			h.answer(n, `{"resultType":"complete"}`)
			h.advance(900 * time.Millisecond)
			h.answerTaskPoll("7f3e9c2a-research", "cancelled", `,"statusMessage":"stopped at page 4"`)
			h.key("l")
			h.golden()
		})
		t.Run("task-detail-"+suffix, func(t *testing.T) {
			h := newHarness(t, size.w, size.h)
			h.connect()
			h.taskCall("7f3e9c2a-research", 1000)
			h.advance(time.Second)
			h.answerTaskPoll("7f3e9c2a-research", "working", `,"statusMessage":"fetching page 3 of 9"`)
			h.advance(time.Second)
			h.answerTaskPoll("7f3e9c2a-research", "completed", `,"result":{"content":[{"type":"text","text":"9 pages fetched"}]}`)
			h.key("enter")
			h.golden()
		})
	}
}

// In the legacy era the composer sends a tool that requires a task as
// one, and one that allows it when ctrl+t asks.
func TestComposerSendsTasks(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.fake.info.Era, h.fake.info.ProtocolVersion = event.EraLegacy, wire.Version20251125
	info := h.fake.info
	h.events(event.Event{Kind: event.Connected, Info: &info})
	h.answer(1, `{"tools":[{"name":"research","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}},`+
		`{"name":"maybe","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}},{"name":"plain","inputSchema":{"type":"object"}}]}`)
	open := func(name string) {
		t.Helper()
		h.key("n")
		h.typeText(name) // the picker filters as you type
		h.key("enter")
	}
	sendTool := func(name string, keys ...string) string {
		t.Helper()
		open(name)
		h.key(keys...)
		h.key("ctrl+s")
		_, method, params := h.lastSent()
		if method != wire.MethodToolsCall {
			t.Fatalf("sent %s, want tools/call", method)
		}
		return params
	}
	if p := sendTool("research"); !strings.Contains(p, `"task":{}`) {
		t.Errorf("a tool that requires a task was sent without one: %s", p)
	}
	if p := sendTool("maybe"); strings.Contains(p, `"task"`) {
		t.Errorf("an optional task tool was sent as a task unasked: %s", p)
	}
	open("maybe")
	h.key("ctrl+t")
	if scr := h.screen(); !strings.Contains(scr, "runs as a task · ctrl+t to send it as an ordinary request") {
		t.Errorf("ctrl+t does not say the call runs as a task:\n%s", scr)
	}
	h.key("ctrl+s")
	if _, _, p := h.lastSent(); !strings.Contains(p, `"task":{}`) {
		t.Errorf("ctrl+t did not make the optional tool's call a task: %s", p)
	}
	open("plain")
	h.key("ctrl+t")
	if scr := h.screen(); !strings.Contains(scr, "does not support tasks") {
		t.Errorf("ctrl+t on a plain tool does not say why it did nothing:\n%s", scr)
	}
}

// The server's status message gets the row's width before the poll
// timing, which changes every second and matters less; at 80 columns the
// TIMEOUT column marks a task's TTL with the task's ⧗, so that it does
// not read as a timeout.
func TestTaskRowMessageBeforePollTiming(t *testing.T) {
	const msg = "Synthesizing findings from 12 sources"
	for _, w := range []int{120, 80} {
		h := newHarness(t, w, 35)
		h.connect()
		h.taskCall("t-1", 1000)
		h.advance(time.Second)
		h.answerTaskPoll("t-1", "working", `,"statusMessage":"`+msg+`"`)
		h.advance(200 * time.Millisecond)
		var row string
		for _, l := range strings.Split(h.screen(), "\n") {
			if strings.Contains(l, "⧗ task") {
				row = l
			}
		}
		switch {
		case row == "":
			t.Fatalf("at %d no task row:\n%s", w, h.screen())
		case w == 120 && !strings.Contains(row, `"`+msg+`"`):
			t.Errorf("at %d the message is cut: %q", w, row)
		case w == 80 && !strings.Contains(row, `"Synthesizing findings`):
			t.Errorf("at %d the message gives way to poll timing: %q", w, row)
		}
		if strings.Contains(row, "next in") && !strings.Contains(row, `"`+msg+`"`) {
			t.Errorf("at %d poll timing shows while the message is cut: %q", w, row)
		}
		ttl := "ttl 58.8s"
		if w < 100 {
			ttl = "⧗ 58.8s"
		}
		if !strings.Contains(row, ttl) {
			t.Errorf("at %d the TTL does not read as one (want %q): %q", w, ttl, row)
		}
	}
}

// The timeline of a task marks its polls (·) and the changes of its
// status or message (◆) at their times, with a label for each change of
// status and one for the polls.
func TestTaskTimelineMarksPollsAndChanges(t *testing.T) {
	for _, w := range []int{120, 80} {
		h := newHarness(t, w, 35)
		h.connect()
		h.taskCall("t-1", 1000)
		for i, status := range []string{"working", "input_required", "working", "working"} {
			h.advance(time.Second)
			h.answerTaskPoll("t-1", status, fmt.Sprintf(`,"statusMessage":"step %d"`, i+2))
		}
		h.key("enter")
		var bar, labels string
		lines := strings.Split(h.screen(), "\n")
		for i, l := range lines {
			if strings.Contains(l, "●─") {
				bar, labels = l, strings.Join(lines[i+1:i+4], "\n")
			}
		}
		if strings.Count(bar, "◆") < 3 {
			t.Errorf("at %d the bar does not mark the task's changes: %q", w, bar)
		}
		for _, want := range []string{"· 4 polls +1.0s…+4.0s", "◆ input_required +2.0s", "◆ working +3.0s"} {
			if !strings.Contains(labels, want) {
				t.Errorf("at %d the timeline lacks %q:\n%s\n%s", w, want, bar, labels)
			}
		}
	}
}
