package ui

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"inflight/event"
	"inflight/wire"
)

// sendTool starts a tool call the way --call does and marks it sent.
func (h *harness) sendTool(name string) int64 {
	h.t.Helper()
	h.run(h.m.send(wire.MethodToolsCall, json.RawMessage(fmt.Sprintf(`{"name":%q,"arguments":{}}`, name)), sessionDefaults()))
	r := h.m.tracker.At(h.m.tracker.Len() - 1)
	id, _ := r.ID.Int()
	raw := wire.Request(r.ID, wire.MethodToolsCall, json.RawMessage(fmt.Sprintf(`{"name":%q,"arguments":{}}`, name)))
	msg, _ := wire.Decode(raw)
	h.events(event.Event{Kind: event.Sent, RequestID: r.ID, Raw: raw, Msg: msg})
	return id
}

func (h *harness) stderr(lines ...string) {
	for _, l := range lines {
		h.events(event.Event{Kind: event.Stderr, Text: l})
	}
}

// everyState builds a session with a request in each state.
func everyState(t *testing.T, w, hgt int) *harness {
	h := newHarness(t, w, hgt)
	h.connect()
	h.stderr("inflight-demo: serving stdio", "slow #2: started (10 steps over 10s)")

	done := h.sendTool("slow")
	h.advance(time.Second)
	h.answer(done, `{"resultType":"complete","content":[{"type":"text","text":"slow finished 10 steps in 10s"}]}`)

	late := h.sendTool("stubborn")
	h.progress(late, 1, 10, "step 1 of 10")
	h.advance(500 * time.Millisecond)
	h.run(h.m.cancel(wire.IntID(late), "user requested cancellation", 1))
	h.cancelSent(late, event.SignalNotification)
	h.advance(time.Second)
	h.progress(late, 2, 10, "step 2 of 10")
	h.advance(1300 * time.Millisecond)
	h.answer(late, `{"resultType":"complete","content":[{"type":"text","text":"stubborn finished anyway"}]}`)

	rpcErr := h.sendTool("fail")
	raw := wire.ErrorResponse(wire.IntID(rpcErr), -32603, "the demo tool failed on purpose")
	msg, _ := wire.Decode(raw)
	h.events(event.Event{Kind: event.Received, RequestID: wire.IntID(rpcErr), Raw: raw, Msg: msg})

	toolErr := h.sendTool("fail")
	h.answer(toolErr, `{"resultType":"complete","isError":true,"content":[{"type":"text","text":"failed on purpose"}]}`)

	h.run(h.m.send(wire.MethodSubscriptionsListen, json.RawMessage(`{"notifications":{"resourceSubscriptions":["demo://clock"]}}`), sessionDefaults()))
	listen := h.m.tracker.At(h.m.tracker.Len() - 1).ID
	lid, _ := listen.Int()
	ack := wire.Notification(wire.NotifySubscriptionAck, json.RawMessage(fmt.Sprintf(`{"_meta":{"io.modelcontextprotocol/subscriptionId":%d},"notifications":{"resourceSubscriptions":["demo://clock"]}}`, lid)))
	am, _ := wire.Decode(ack)
	upd := wire.Notification(wire.NotifyResourceUpdated, json.RawMessage(fmt.Sprintf(`{"_meta":{"io.modelcontextprotocol/subscriptionId":%d},"uri":"demo://clock"}`, lid)))
	um, _ := wire.Decode(upd)
	h.events(event.Event{Kind: event.Received, Raw: ack, Msg: am}, event.Event{Kind: event.Received, Raw: upd, Msg: um})

	timedOut := h.sendTool("silent")
	h.run(h.m.cancel(wire.IntID(timedOut), "timeout", 2))
	h.cancelSent(timedOut, event.SignalNotification)

	cancelling := h.sendTool("slow")
	h.progress(cancelling, 4, 10, "step 4 of 10")
	h.run(h.m.cancel(wire.IntID(cancelling), "user requested cancellation", 1))
	h.cancelSent(cancelling, event.SignalStreamClosed)

	h.sendTool("silent")
	running := h.sendTool("slow")
	h.advance(300 * time.Millisecond)
	h.progress(running, 3, 10, "step 3 of 10")
	h.advance(6 * time.Second) // settles the timed-out request's cancel
	h.progress(running, 9, 10, "step 9 of 10")
	h.advance(400 * time.Millisecond)
	return h
}

func TestGoldenViews(t *testing.T) {
	for _, size := range []struct{ w, h int }{{80, 24}, {120, 35}} {
		suffix := fmt.Sprintf("%dx%d", size.w, size.h)
		t.Run("list-every-state-"+suffix, func(t *testing.T) {
			h := everyState(t, size.w, size.h)
			h.golden()
		})
		t.Run("detail-late-response-"+suffix, func(t *testing.T) {
			h := everyState(t, size.w, size.h)
			h.m.screens.list = h.m.screens.list.Select(wire.IntID(3), false)
			h.key("enter")
			h.golden()
		})
		t.Run("detail-running-"+suffix, func(t *testing.T) {
			h := everyState(t, size.w, size.h)
			h.key("enter")
			h.golden()
		})
		t.Run("log-"+suffix, func(t *testing.T) {
			h := everyState(t, size.w, size.h)
			h.key("l")
			h.golden()
		})
		t.Run("stderr-"+suffix, func(t *testing.T) {
			h := everyState(t, size.w, size.h)
			h.key("s")
			h.golden()
		})
		t.Run("composer-pick-"+suffix, func(t *testing.T) {
			h := newHarness(t, size.w, size.h)
			h.connect()
			h.key("n")
			h.golden()
		})
		t.Run("composer-form-"+suffix, func(t *testing.T) {
			h := newHarness(t, size.w, size.h)
			h.connect()
			h.key("n", "enter")
			h.golden()
		})
		t.Run("composer-json-"+suffix, func(t *testing.T) {
			h := newHarness(t, size.w, size.h)
			h.connect()
			h.key("n", "enter", "ctrl+e")
			h.golden()
		})
		t.Run("composer-tools-everything-"+suffix, func(t *testing.T) {
			h := withCatalog(t, size.w, size.h, 0)
			h.key("down", "down")
			h.golden()
		})
		t.Run("composer-tools-filtered-"+suffix, func(t *testing.T) {
			h := withCatalog(t, size.w, size.h, 0)
			h.typeText("me")
			h.golden()
		})
		t.Run("composer-resources-"+suffix, func(t *testing.T) {
			h := withCatalog(t, size.w, size.h, 1)
			h.golden()
		})
		t.Run("composer-template-"+suffix, func(t *testing.T) {
			h := withCatalog(t, size.w, size.h, 1)
			h.key("down", "down", "enter")
			h.typeText("7")
			h.golden()
		})
		t.Run("composer-prompts-"+suffix, func(t *testing.T) {
			h := withCatalog(t, size.w, size.h, 2)
			h.key("down")
			h.golden()
		})
		t.Run("composer-prompt-form-"+suffix, func(t *testing.T) {
			h := withCatalog(t, size.w, size.h, 2)
			h.key("down", "enter")
			h.golden()
		})
		t.Run("composer-raw-"+suffix, func(t *testing.T) {
			h := newHarness(t, size.w, size.h)
			h.connect()
			h.key("n", "left")
			h.typeText("tools/call")
			h.key("tab")
			h.golden()
		})
		t.Run("composer-edit-"+suffix, func(t *testing.T) {
			h := newHarness(t, size.w, size.h)
			h.connect()
			h.key("n", "enter")
			h.typeText("3")
			h.key("tab")
			h.typeText("6")
			h.key("enter")
			h.sentEvent(2)
			h.key("E")
			h.golden()
		})
		t.Run("help-"+suffix, func(t *testing.T) {
			h := everyState(t, size.w, size.h)
			h.key("?")
			h.golden()
		})
		t.Run("quit-prompt-"+suffix, func(t *testing.T) {
			h := everyState(t, size.w, size.h)
			h.key("q")
			h.golden()
		})
		t.Run("empty-"+suffix, func(t *testing.T) {
			h := newHarness(t, size.w, size.h)
			h.connect()
			h.golden()
		})
		t.Run("connection-lost-"+suffix, func(t *testing.T) {
			h := everyState(t, size.w, size.h)
			h.events(event.Event{Kind: event.TransportClosed, Err: errors.New("the server exited: exit status 2")})
			h.golden()
		})
	}
}
