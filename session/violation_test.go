package session

import (
	"encoding/json"
	"strings"
	"testing"

	"inflight/event"
	"inflight/wire"
)

func TestViolations(t *testing.T) {
	updated := wire.NotifyResourceUpdated
	cases := []struct {
		name   string
		era    event.Era
		script func(h *harness)
		code   string // "" when the script must record none
		req    int    // request the violation is attributed to (0: none)
	}{
		{
			name:   "unknown response id",
			era:    event.EraModern,
			script: func(h *harness) { h.recv(10, result(42, complete)) },
			code:   ViolationUnknownResponseID,
		},
		{
			name:   "string id that looks like an issued one",
			era:    event.EraModern,
			script: func(h *harness) { h.recv(10, `{"jsonrpc":"2.0","id":"1","result":{}}`) },
			code:   ViolationUnknownResponseID,
		},
		{
			name:   "null-id error is not attributable and not a violation",
			era:    event.EraModern,
			script: func(h *harness) { h.recv(10, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}`) },
		},
		{
			name: "duplicate response",
			era:  event.EraLegacy,
			script: func(h *harness) {
				h.recv(10, result(1, `{}`))
				h.recv(11, rpcError(1, 1, "again"))
			},
			code: ViolationDuplicateResponse, req: 1,
		},
		{
			name:   "unknown progress token",
			era:    event.EraModern,
			script: func(h *harness) { h.recv(10, progress(77, 1)) },
			code:   ViolationUnknownProgressToken,
		},
		{
			name: "string progress token",
			era:  event.EraModern,
			script: func(h *harness) {
				h.recv(10, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"1","progress":1}}`)
			},
			code: ViolationUnknownProgressToken,
		},
		{
			name: "progress not increasing",
			era:  event.EraModern,
			script: func(h *harness) {
				h.recv(10, progress(1, 50))
				h.recv(20, progress(1, 50))
			},
			code: ViolationProgressNotIncreasing, req: 1,
		},
		{
			name: "progress after completion",
			era:  event.EraLegacy,
			script: func(h *harness) {
				h.recv(10, result(1, `{}`))
				h.recv(20, progress(1, 50))
			},
			code: ViolationProgressAfterCompletion, req: 1,
		},
		{
			name: "progress after a local failure is late, not a violation",
			era:  event.EraModern,
			script: func(h *harness) {
				h.apply(event.Event{Kind: event.RequestFailed, Time: ms(10), RequestID: id(1)})
				h.recv(20, progress(1, 50))
			},
		},
		{
			name: "progress after cancel is late, not a violation",
			era:  event.EraModern,
			script: func(h *harness) {
				h.cancel(5, h.tr.At(0), CauseUser)
				h.recv(20, progress(1, 50))
			},
		},
		{
			name:   "modern server cancelling a normal request",
			era:    event.EraModern,
			script: func(h *harness) { h.recv(10, serverCancel(1)) },
			code:   ViolationServerCancelNotListen, req: 1,
		},
		{
			name:   "modern server cancelling an unknown request",
			era:    event.EraModern,
			script: func(h *harness) { h.recv(10, serverCancel(9)) },
			code:   ViolationServerCancelNotListen,
		},
		{
			name: "legacy server cancelling (its own request)",
			era:  event.EraLegacy,
			script: func(h *harness) {
				h.apply(serverReq(5, 1, wire.MethodRootsList, `{}`, wire.ID{}))
				h.recv(10, serverCancel(1))
			},
		},
		{
			name: "legacy server cancelling its own request, already answered",
			era:  event.EraLegacy,
			script: func(h *harness) {
				h.apply(serverReq(5, 7, wire.MethodRootsList, `{}`, wire.ID{}))
				h.apply(ourAnswer(6, wire.ResultResponse(id(7), json.RawMessage(`{"roots":[]}`))))
				h.recv(10, serverCancel(7))
			},
		},
		{
			name:   "legacy server cancelling inflight's request",
			era:    event.EraLegacy,
			script: func(h *harness) { h.recv(10, serverCancel(1)) },
			code:   ViolationServerCancelUnknown,
			req:    1,
		},
		{
			name:   "legacy server cancelling an ID never used",
			era:    event.EraLegacy,
			script: func(h *harness) { h.recv(10, serverCancel(99)) },
			code:   ViolationServerCancelUnknown,
		},
		{
			name:   "non-JSON line",
			era:    event.EraLegacy,
			script: func(h *harness) { h.apply(malformed(10, "Server starting on port 8080")) },
			code:   ViolationNonJSONLine,
		},
		{
			name:   "malformed message",
			era:    event.EraLegacy,
			script: func(h *harness) { h.apply(malformed(10, `{"jsonrpc":"1.0","id":1}`)) },
			code:   ViolationMalformedMessage,
		},
		{
			name:   "batch is malformed, not a non-JSON line",
			era:    event.EraLegacy,
			script: func(h *harness) { h.apply(malformed(10, `[{"jsonrpc":"2.0"}]`)) },
			code:   ViolationMalformedMessage,
		},
		{
			name: "unreadable progress params",
			era:  event.EraModern,
			script: func(h *harness) {
				h.recv(10, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`)
			},
			code: ViolationMalformedMessage,
		},
		{
			name:   "missing resultType",
			era:    event.EraModern,
			script: func(h *harness) { h.recv(10, result(1, `{"content":[]}`)) },
			code:   ViolationMissingResultType, req: 1,
		},
		{
			name:   "unknown resultType",
			era:    event.EraModern,
			script: func(h *harness) { h.recv(10, result(1, `{"resultType":"partial"}`)) },
			code:   ViolationUnknownResultType, req: 1,
		},
		{
			name:   "unknown subscription",
			era:    event.EraModern,
			script: func(h *harness) { h.recv(10, subNotification(updated, 5)) },
			code:   ViolationUnknownSubscription,
		},
		{
			name:   "subscription id naming a normal request",
			era:    event.EraModern,
			script: func(h *harness) { h.recv(10, subNotification(updated, 1)) },
			code:   ViolationUnknownSubscription,
		},
		{
			// Its ID is the server's own: request 1 here is not the
			// tracker's request 1.
			name:   "server request in the modern era",
			era:    event.EraModern,
			script: func(h *harness) { h.recv(10, `{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{}}`) },
			code:   ViolationServerRequestModern,
		},
		{
			name: "a modern request refused for the version it was sent under",
			era:  event.EraModern,
			script: func(h *harness) {
				h.recv(10, `{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2025-11-25"],"requested":"x"}}}`)
			},
			code: ViolationVersionRejected, req: 1,
		},
		{
			name:   "a legacy server's -32022 is just an error",
			era:    event.EraLegacy,
			script: func(h *harness) { h.recv(10, rpcError(1, wire.CodeUnsupportedProtocolVersion, "no")) },
		},
		{
			name:   "server request in the legacy era is allowed",
			era:    event.EraLegacy,
			script: func(h *harness) { h.recv(10, `{"jsonrpc":"2.0","id":"s1","method":"ping"}`) },
		},
		{
			name: "notification without subscription id is only logged",
			era:  event.EraModern,
			script: func(h *harness) {
				h.recv(10, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}`)
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newStdio(t, c.era)
			h.begin(0, "prompts/get", `{"name":"p"}`)
			c.script(h)
			vs := h.tr.Violations()
			if c.code == "" {
				if vs.Total() != 0 {
					t.Fatalf("violations = %v, want none", codes(h.tr))
				}
				checkInvariants(t, h.tr)
				return
			}
			if vs.Len() != 1 {
				t.Fatalf("violations = %v, want [%s]", codes(h.tr), c.code)
			}
			v := vs.At(0)
			expect(t, "code", v.Code, c.code)
			expect(t, "count", vs.Count(c.code), 1)
			if v.Detail == "" || len(v.Raw) == 0 {
				t.Errorf("violation lacks detail or raw: %+v", v)
			}
			r := h.tr.At(0)
			if c.req != 0 {
				expect(t, "request id", v.RequestID, id(c.req))
				expect(t, "request count", r.Violations, 1)
				expect(t, "flagged", r.Flagged(), true)
				expect(t, "for request", len(vs.ForRequest(id(c.req))), 1)
			} else {
				expect(t, "request count", r.Violations, 0)
			}
			// The log entry of the offending event carries the mark (state
			// entries the event caused may follow it).
			var last LogEntry
			for i := h.tr.Log().Len() - 1; i >= 0; i-- {
				if last = h.tr.Log().At(i); !last.IsState {
					break
				}
			}
			expect(t, "log mark", last.Violation, c.code)
			checkInvariants(t, h.tr)
		})
	}
}

func TestViolationLogBounded(t *testing.T) {
	h := newHarness(t, Config{Violations: 3}, event.EraModern, event.TransportStdio)
	big := "x" + strings.Repeat("y", 10_000)
	for i := range 5 {
		h.apply(malformed(i, big))
	}
	vs := h.tr.Violations()
	expect(t, "len", vs.Len(), 3)
	expect(t, "total", vs.Total(), int64(5))
	expect(t, "count", vs.Count(ViolationNonJSONLine), 5)
	expect(t, "oldest kept", vs.At(0).Time, ms(2))
	expect(t, "raw bounded", len(vs.At(0).Raw), violationRawBytes)
	expect(t, "counts copy", vs.Counts()[ViolationNonJSONLine], 5)
}

// A -32022 after negotiation fails the request (there is no other modern
// version to retry with) and says what the server now lists.
func TestVersionRejectedFailsAndExplains(t *testing.T) {
	h := newStdio(t, event.EraModern)
	h.begin(0, "tools/call", `{"name":"slow"}`)
	h.recv(10, `{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2025-11-25","2025-06-18"]}}}`)
	r := h.tr.At(0)
	expect(t, "state", r.State, StateFailed)
	v := h.tr.Violations().At(0)
	if !strings.Contains(v.Detail, `sent under "x"`) || !strings.Contains(v.Detail, "now lists 2025-11-25, 2025-06-18") {
		t.Errorf("detail %q", v.Detail)
	}
	checkInvariants(t, h.tr)
}
