package check

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"inflight/internal/testkit/sdkpeer"
	"inflight/target"
	"inflight/wire"
)

// verdict is one finding the battery may give: its status and a part of
// its detail.
type verdict struct{ status, detail string }

// mixed is what session says of a progress notification on another
// request's stream.
const mixed = "the server mixed two requests' streams"

// The checks of a request's own stream against go-sdk and mcp-go servers
// over Streamable HTTP, in the legacy era (the only one that resumes), each
// SDK with and without its in-memory event store.
//
//   - go-sdk without an event store writes SSE events with no id: field,
//     so nothing can be resumed and resume.* are skipped. With
//     mcp.NewMemoryEventStore it redelivers the rest of a dropped stream on
//     the resumed GET, and only that stream's messages; when the resume
//     arrives before it noticed the old connection close, it answers 409
//     "stream ID conflicts with ongoing stream", which the client asks again.
//   - mcp-go (v1.2.1) sends every notification of a session through one
//     channel (streamableHttpSession.notificationChannel) that each open
//     POST's forwarder and the GET stream read, whichever takes it first: a
//     progress notification of one call can go out on the response stream
//     of the call beside it (progress.own_stream WARN, seen every run
//     without the store; with it only a's first progress is at stake, as
//     a's stream is dropped then), or on the GET stream after its request
//     was answered (progress.none_after_response FAIL, now and then).
//     Without an event store its events carry no IDs (resume.* skipped).
//     With server.NewInMemoryEventStore they do, but its handler's context
//     is the POST's own (ctx := s.server.WithContext(r.ctx(), session)):
//     the dropped connection cancels the tool ("cancel seen at step 1" on
//     its stderr, no notifications/cancelled sent), and the resumed stream
//     replays its -32603 "context canceled" answer — a disconnection
//     interpreted as a cancel, resume.redelivers WARN. What it replays is
//     that stream's own (resume.own_stream PASS); the drain of the shared
//     channel after the handler returns could put the other call's progress
//     on it, so a FAIL naming another request's message is allowed too.
//
// The checks that do not depend on the transport agree with the stdio run
// (TestCheckSDKServersThatAnswerACancel).
func TestCheckSDKServersOverHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the SDK peers")
	}
	for _, tc := range []struct {
		name  string
		store sdkpeer.Store
		want  map[string][]verdict
		skip  map[string]string
		// until, when set, is what a run must show; a run that does not is
		// tried again, at most three runs in all (a race in the server).
		until func(Report) bool
	}{
		{sdkpeer.GoSDK, sdkpeer.NoEventStore, map[string][]verdict{
			CheckProgressOwnStream: {{StatusPass, "two calls at once included"}},
			CheckProgressStops:     {{StatusPass, ""}},
			CheckProgressKnownTok:  {{StatusPass, "every progress notification"}},
			CheckCancelErrorCode:   {{StatusPass, "answered with a result"}},
		}, map[string]string{CheckResumeRedelivers: naNoEventIDs, CheckResumeOwnStream: naNoEventIDs}, nil},
		{sdkpeer.GoSDK, sdkpeer.WithEventStore, map[string][]verdict{
			CheckResumeRedelivers:  {{StatusPass, "the rest came on the resumed stream: 6 progress notifications in all and the response"}},
			CheckResumeOwnStream:   {{StatusPass, "was its own"}},
			CheckProgressOwnStream: {{StatusPass, "two calls at once included"}},
			CheckProgressStops:     {{StatusPass, ""}},
			CheckProgressKnownTok:  {{StatusPass, "every progress notification"}},
			CheckCancelErrorCode:   {{StatusPass, "answered with a result"}},
		}, nil, nil},
		{sdkpeer.MCPGo, sdkpeer.NoEventStore, map[string][]verdict{
			CheckProgressOwnStream: {{StatusWarn, mixed}},
			CheckProgressStops:     {{StatusPass, ""}, {StatusFail, "progress after request"}},
			CheckProgressKnownTok:  {{StatusPass, "every progress notification"}},
			CheckCancelErrorCode:   {{StatusPass, `error -32603 "context canceled"`}},
		}, map[string]string{CheckResumeRedelivers: naNoEventIDs, CheckResumeOwnStream: naNoEventIDs}, func(rep Report) bool {
			return findingsByID(rep)[CheckProgressOwnStream].Status == StatusWarn
		}},
		{sdkpeer.MCPGo, sdkpeer.WithEventStore, map[string][]verdict{
			CheckResumeRedelivers:  {{StatusWarn, `the request ended failed: JSON-RPC error -32603 context canceled`}},
			CheckResumeOwnStream:   {{StatusPass, "was its own"}, {StatusFail, "of another request came on request"}},
			CheckProgressOwnStream: {{StatusPass, "two calls at once included"}, {StatusWarn, mixed}},
			CheckProgressStops:     {{StatusPass, ""}, {StatusFail, "progress after request"}},
			CheckProgressKnownTok:  {{StatusPass, "every progress notification"}},
			CheckCancelErrorCode:   {{StatusPass, `error -32603 "context canceled"`}},
		}, nil, nil},
	} {
		label := "without event store"
		if tc.store {
			label = "with event store"
		}
		t.Run(tc.name+"/"+label, func(t *testing.T) {
			t.Parallel()
			p := sdkpeer.StartHTTP(t, tc.name, tc.store)
			var rep Report
			for attempt := 1; attempt <= 3; attempt++ {
				rep, _ = runCheck(t, Options{Target: target.Target{URL: p.URL, ProtocolVersion: wire.Version20251125},
					Tool: sdkpeer.Tool, Args: json.RawMessage(`{"steps":6,"intervalMs":100}`),
					LateWindow: 400 * time.Millisecond, Timeout: 5 * time.Second, NoTasks: true})
				if tc.until == nil || tc.until(rep) {
					break
				}
				t.Logf("run %d did not show the race: %+v", attempt, findingsByID(rep)[CheckProgressOwnStream])
			}
			if rep.Era != "legacy" {
				t.Fatalf("era %q, want legacy", rep.Era)
			}
			got := findingsByID(rep)
			for id, allowed := range tc.want {
				assertVerdict(t, got, id, allowed)
			}
			assertSkipped(t, rep, tc.skip)
			assertTransportFree(t, got)
			if tc.name == sdkpeer.MCPGo && tc.store {
				assertCancelledByDrop(t, got[CheckResumeRedelivers], p.Stderr())
			}
		})
	}
}

// assertVerdict fails t unless finding id is one of allowed (with a
// requirement quoted).
func assertVerdict(t *testing.T, got map[string]Finding, id string, allowed []verdict) {
	t.Helper()
	f, ok := got[id]
	for _, v := range allowed {
		if ok && f.Status == v.status && strings.Contains(f.Detail, v.detail) && f.Quote != "" {
			if v != allowed[0] {
				t.Logf("%s = %s (%s): allowed, the server's race", id, f.Status, f.Detail)
			}
			return
		}
	}
	t.Errorf("%s = %+v, want one of %+v", id, f, allowed)
}

// assertSkipped fails t unless each check of skip was skipped with its
// reason.
func assertSkipped(t *testing.T, rep Report, skip map[string]string) {
	t.Helper()
	reasons := map[string]string{}
	for _, s := range rep.Skipped {
		reasons[s.ID] = s.Reason
	}
	for id, want := range skip {
		if reasons[id] != want {
			t.Errorf("%s skipped with %q, want %q", id, reasons[id], want)
		}
		if _, judged := findingsByID(rep)[id]; judged {
			t.Errorf("%s both skipped and judged", id)
		}
	}
}

// assertTransportFree checks what does not depend on the transport: the
// same verdicts as over stdio.
func assertTransportFree(t *testing.T, got map[string]Finding) {
	t.Helper()
	for _, id := range []string{CheckProgressIncreases, CheckCancelFinished, CheckCancelStops, CheckCancelUnknown,
		CheckCancelMalformed, CheckServerCancel, CheckResponseIDs} {
		if f := got[id]; f.Status != StatusPass {
			t.Errorf("%s = %s (%s), want PASS as over stdio", id, f.Status, f.Detail)
		}
	}
	// Both answer the cancel about one round trip after it: late (WARN in
	// the legacy era), as over stdio. The stdio test holds the verdict to
	// that, trying a crossed one again; here a loaded machine's slow pings
	// may have it judged crossed (PASS), which is logged.
	f := got[CheckCancelNoResponse]
	switch {
	case f.Status == StatusWarn && strings.Contains(f.Detail, "late response") && strings.Contains(f.Detail, "round trip measured"):
	case f.Status == StatusPass && strings.Contains(f.Detail, "crossed the cancel"):
		t.Logf("%s judged crossed (a loaded machine's round trips): %s", f.ID, f.Detail)
	default:
		t.Errorf("%s = %s (%s), want WARN naming the late response and the round trip", f.ID, f.Status, f.Detail)
	}
}

var droppedRequest = regexp.MustCompile(`dropped request (\S+)'s stream`)

// assertCancelledByDrop checks, on mcp-go's stderr, that its handler saw
// the dropped request's context end: the server took the disconnection for
// a cancel, which inflight never sent for that request.
func assertCancelledByDrop(t *testing.T, f Finding, stderr string) {
	t.Helper()
	m := droppedRequest.FindStringSubmatch(f.Detail)
	if m == nil {
		t.Fatalf("%s names no dropped request: %s", f.ID, f.Detail)
	}
	if _, ok := sdkpeer.CancelSeenAt(stderr, m[1]); !ok {
		t.Errorf("mcp-go's handler of request %s did not log %q after the drop; stderr:\n%s", m[1], sdkpeer.CancelSeen, stderr)
	}
}
