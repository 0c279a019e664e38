package check

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"inflight/internal/testkit/sdkpeer"
	"inflight/target"
	"inflight/wire"
)

// Servers no one here wrote: go-sdk and mcp-go stdio servers answer a
// cancelled request with "context canceled" about one round trip after the
// cancel — their own stderr logs the cancel first, so the answer is a
// reaction to it, not a crossing. The battery must call it late: FAIL in the
// modern era (MUST NOT respond), WARN in the legacy one (SHOULD NOT). Before
// the one definition of crossed (session/crossing.go), check excused
// anything within a fixed 100 ms and passed both as "crossed".
func TestCheckSDKServersThatAnswerACancel(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the SDK peers")
	}
	for _, name := range sdkpeer.Names {
		bin := sdkpeer.BuildPeer(t, name)
		for _, era := range []struct {
			name, version, want string
		}{
			{"modern", wire.VersionModern, StatusFail},
			{"legacy", wire.Version20251125, StatusWarn},
		} {
			t.Run(name+"/"+era.name, func(t *testing.T) {
				t.Parallel()
				tg := target.Target{Command: bin, ProtocolVersion: era.version}
				// The window is half the quickest round trip measured, a
				// bound: on a loaded machine (CI runs packages side by side
				// under -race) every ping may be slowed while the reaction is
				// not, and the reaction then falls inside the window —
				// judged crossed, the lenient way. So a crossed verdict is
				// tried again, at most twice; a reaction is never judged
				// crossed three times running.
				var rep Report
				var f Finding
				for attempt := 1; ; attempt++ {
					rep, _ = runCheck(t, Options{Target: tg, Tool: sdkpeer.Tool, Args: json.RawMessage(sdkpeer.DefaultArgs),
						CancelAfter: 2 * time.Second, LateWindow: 600 * time.Millisecond, NoTasks: true})
					var ok bool
					if f, ok = findingsByID(rep)[CheckCancelNoResponse]; !ok {
						t.Fatalf("no %s finding: %+v", CheckCancelNoResponse, rep.Findings)
					}
					if !strings.Contains(f.Detail, "crossed the cancel") || attempt == 3 {
						break
					}
					t.Logf("attempt %d judged the reaction crossed (a loaded machine's round trips): %s", attempt, f.Detail)
				}
				if f.Status != era.want || !strings.Contains(f.Detail, "late response") || !strings.Contains(f.Detail, "round trip measured") {
					t.Fatalf("%s = %s (%s), want %s naming the late response and the round trip it was judged by", f.ID, f.Status, f.Detail, era.want)
				}
				if rep.Era != era.name {
					t.Errorf("era %q, want %q", rep.Era, era.name)
				}
				// Their answer to the cancel is late, but no made-up
				// error: go-sdk answers with a tool result whose text is
				// "context canceled" (isError), mcp-go with the JSON-RPC
				// error -32603 "context canceled", a code a client reads.
				want := `error -32603 "context canceled"`
				if name == "gosdk" {
					want = "answered with a result"
				}
				if ec := findingsByID(rep)[CheckCancelErrorCode]; ec.Status != StatusPass || !strings.Contains(ec.Detail, want) {
					t.Errorf("%s = %s (%s), want PASS naming %s", ec.ID, ec.Status, ec.Detail, want)
				}
				if ids := findingsByID(rep)[CheckResponseIDs]; ids.Status != StatusPass {
					t.Errorf("%s = %s (%s), want PASS", ids.ID, ids.Status, ids.Detail)
				}
			})
		}
	}
}
