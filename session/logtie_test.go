package session

import (
	"encoding/json"
	"testing"

	"inflight/event"
	"inflight/wire"
)

// TestLogsTiedWithSeveralInFlight: on stdio with several requests in
// flight, a log line names no request; the tracker ties it by what singles
// one out, and otherwise counts it untied.
func TestLogsTiedWithSeveralInFlight(t *testing.T) {
	call := func(name, level string) string {
		p := map[string]any{"name": name}
		if level != "" {
			p["_meta"] = map[string]any{wire.MetaLogLevel: level}
		}
		b, _ := json.Marshal(p)
		return string(b)
	}
	line := func(level, logger string, meta map[string]any) string {
		p := map[string]any{"level": level, "data": "step"}
		if logger != "" {
			p["logger"] = logger
		}
		if meta != nil {
			p["_meta"] = meta
		}
		b, _ := json.Marshal(p)
		return string(wire.Notification(wire.NotifyMessage, b))
	}
	h := newStdio(t, event.EraModern)
	slow := h.begin(0, wire.MethodToolsCall, call("slow", "info"))
	stubborn := h.begin(1, wire.MethodToolsCall, call("stubborn", "warning"))
	chatty := h.begin(2, wire.MethodToolsCall, call("chatty", "info"))

	// The demo's chatty logs under its tool's name.
	h.recv(10, line("info", "chatty", nil))
	// A line under no request's name, at a level two asked for: untied.
	h.recv(11, line("info", "", nil))
	// At error, all three asked for it: untied.
	h.recv(12, line("error", "other", nil))
	// Its _meta names stubborn's progress token.
	h.recv(13, line("info", "", map[string]any{"progressToken": stubborn.ProgressToken}))
	// Only slow and chatty asked for info; chatty ends, and then slow is
	// the only one asking at info (stubborn asked at warning).
	h.recv(14, string(wire.ResultResponse(chatty.ID, json.RawMessage(`{"content":[]}`))))
	h.recv(15, line("info", "", nil))

	expect(t, "chatty's lines", chatty.Conv.LogCount, 1)
	expect(t, "chatty tied by", chatty.Conv.Logs[0].TiedBy, TiedLogger)
	expect(t, "stubborn's lines", stubborn.Conv.LogCount, 1)
	expect(t, "stubborn tied by", stubborn.Conv.Logs[0].TiedBy, TiedProgressToken)
	expect(t, "slow's lines", slow.Conv.LogCount, 1)
	expect(t, "slow tied by", slow.Conv.Logs[0].TiedBy, TiedLevel)
	expect(t, "untied", h.tr.LogsUnattributed(), 2)
	// The protocol log names each tied line's request.
	var named []string
	for i := 0; i < h.tr.Log().Len(); i++ {
		if e := h.tr.Log().At(i); e.Method == wire.NotifyMessage {
			named = append(named, e.ID.String())
		}
	}
	got, _ := json.Marshal(named)
	expect(t, "log entries' requests", string(got), `["`+chatty.ID.String()+`","-","-","`+stubborn.ID.String()+`","`+slow.ID.String()+`"]`)
}
