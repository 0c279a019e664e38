package ui

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"inflight/event"
	"inflight/session"
	"inflight/wire"
)

// newCallsHarness is newHarness with --call requests, against a server
// of era that declares task-augmented tools calls.
func newCallsHarness(t *testing.T, era event.Era, calls ...Call) *harness {
	t.Helper()
	hs := &harness{t: t, fake: newFake(), now: t0}
	if era == event.EraLegacy {
		hs.fake.info.Era, hs.fake.info.ProtocolVersion = event.EraLegacy, wire.Version20251125
	}
	hs.fake.info.Capabilities = []byte(`{"tools":{},"tasks":{"requests":{"tools":{"call":{}}}}}`)
	m, err := New(Options{
		Target: "demo (stdio)", Transport: "stdio",
		Dial:    func() (Client, error) { return hs.fake, nil },
		Tracker: session.DefaultConfig(),
		Now:     func() time.Time { return hs.now },
		Dark:    true,
		Calls:   calls,
	})
	if err != nil {
		t.Fatal(err)
	}
	m.clock.tick = func(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd {
		hs.ticks = append(hs.ticks, d)
		return nil
	}
	m.conn.wait = func(<-chan event.Event, int) tea.Cmd { return nil }
	hs.m = m
	hs.run(m.Init())
	hs.send(tea.WindowSizeMsg{Width: 120, Height: 35})
	info := hs.fake.info
	hs.events(event.Event{Kind: event.Connected, Info: &info})
	return hs
}

// sentCalls is the params of every tools/call sent, by tool name.
func (h *harness) sentCalls() map[string]string {
	h.fake.mu.Lock()
	defer h.fake.mu.Unlock()
	out := map[string]string{}
	for _, r := range h.fake.sent {
		if r.Method == wire.MethodToolsCall {
			out[toolName(r.Params)] = string(r.Params)
		}
	}
	return out
}

const taskTools = `{"tools":[{"name":"task_input","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}},` +
	`{"name":"maybe","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}},{"name":"slow","inputSchema":{"type":"object"}}]}`

// A --call of a tool that requires a task asks for one by itself on a
// legacy server, as the composer and `inflight call` do: sent without
// one, the server refuses it (-32601). It waits for tools/list to say
// so; the other calls go as asked.
func TestCallFlagAsksForTheTaskATaskToolRequires(t *testing.T) {
	h := newCallsHarness(t, event.EraLegacy,
		Call{Method: wire.MethodToolsCall, Params: json.RawMessage(`{"name":"task_input","arguments":{}}`)},
		Call{Method: wire.MethodToolsCall, Params: json.RawMessage(`{"name":"maybe","arguments":{}}`)},
		Call{Method: wire.MethodToolsCall, Params: json.RawMessage(`{"name":"slow","arguments":{"seconds":1}}`)})
	if got := h.sentCalls(); len(got) != 0 {
		t.Fatalf("--call sent before tools/list said which tools require a task: %v", got)
	}
	if _, method, _ := h.lastSent(); method != wire.MethodToolsList {
		t.Fatalf("the last request sent on connecting is %s, want tools/list", method)
	}
	h.answer(1, taskTools)
	got := h.sentCalls()
	if len(got) != 3 {
		t.Fatalf("after tools/list, sent %d of the 3 --call requests: %v", len(got), got)
	}
	if !strings.Contains(got["task_input"], `"task":{}`) {
		t.Errorf("a tool that requires a task was called without one: %s", got["task_input"])
	}
	for _, name := range []string{"maybe", "slow"} {
		if strings.Contains(got[name], `"task"`) {
			t.Errorf("%s was sent as a task unasked: %s", name, got[name])
		}
	}
	if !strings.Contains(got["slow"], `"arguments":{"seconds":1}`) {
		t.Errorf("the call's arguments were lost: %s", got["slow"])
	}
	h.answer(1, taskTools) // a second answer sends nothing again
	if n := len(h.sentCalls()); n != 3 {
		t.Errorf("%d calls after a repeated tools/list answer, want 3", n)
	}
}

// When tools/list fails, the held --call requests go as asked rather
// than never.
func TestCallFlagSentAsAskedWhenToolsListFails(t *testing.T) {
	h := newCallsHarness(t, event.EraLegacy, Call{Method: wire.MethodToolsCall, Params: json.RawMessage(`{"name":"task_input","arguments":{}}`)})
	raw := wire.ErrorResponse(wire.IntID(1), wire.CodeInternalError, "no tools today")
	msg, err := wire.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	h.events(event.Event{Kind: event.Received, RequestID: wire.IntID(1), Raw: raw, Msg: msg})
	got := h.sentCalls()
	if p, ok := got["task_input"]; !ok || strings.Contains(p, `"task"`) {
		t.Errorf("after a failed tools/list, the --call was not sent as asked: %v", got)
	}
}

// A modern server decides by itself whether a call becomes a task: the
// --call goes at once, as asked.
func TestCallFlagModernSentAtOnce(t *testing.T) {
	h := newCallsHarness(t, event.EraModern, Call{Method: wire.MethodToolsCall, Params: json.RawMessage(`{"name":"task_input","arguments":{}}`)})
	got := h.sentCalls()
	if p, ok := got["task_input"]; !ok || strings.Contains(p, `"task"`) {
		t.Errorf("on a modern server the --call was not sent at once as asked: %v", got)
	}
}
