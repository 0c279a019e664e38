//go:build unix

package check

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"inflight/exitcode"
	"inflight/internal/testkit/hostile"
	"inflight/internal/testkit/testserver"
	"inflight/target"
)

// A server that dies part-way through the battery is a connection failure
// (exit 2), not a short clean run: the loss is an error finding that says
// during which step it happened, the checks that were not run are listed
// as skipped with that reason, and no finding gives advice about the tool
// that the loss makes wrong.
func TestCheckConnectionLostMidBattery(t *testing.T) {
	for _, tc := range []struct {
		name   string
		target func(t *testing.T) target.Target
		e      testserver.Era
	}{
		{"modern", testserver.InProcess(hostile.Crashes, ""), testserver.Modern},
		{"legacy", testserver.InProcess(hostile.Crashes, testserver.Legacy.Version), testserver.Legacy},
		{"process", testserver.AsProcess(hostile.Crashes), testserver.Modern},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := Options{Target: tc.target(t), Tool: hostile.ToolName, LateWindow: 300 * time.Millisecond, Timeout: 5 * time.Second}
			rep, code := runCheck(t, o)
			if code != exitcode.Usage {
				t.Errorf("exit %d, want %d; findings %+v", code, exitcode.Usage, rep.Findings)
			}
			got := findingsByID(rep)
			lost, ok := got[CheckConnection]
			if !ok || lost.Status != StatusError || !strings.Contains(lost.Detail, "connection lost during the full run of hostile") {
				t.Errorf("no error finding for the lost connection: %+v", rep.Findings)
			}
			if rep.Summary.Error != 1 || !strings.Contains(rep.Error, "connection lost during") {
				t.Errorf("summary %+v, error %q", rep.Summary, rep.Error)
			}
			for _, f := range rep.Findings {
				if strings.Contains(f.Detail, "--tool") || strings.Contains(f.Detail, "--args") {
					t.Errorf("%s gives advice the lost connection makes wrong: %s", f.ID, f.Detail)
				}
			}
			skipped := map[string]string{}
			for _, s := range rep.Skipped {
				skipped[s.ID] = s.Reason
			}
			for _, id := range expectedChecks("stdio", tc.e) {
				_, found := got[id]
				reason, skip := skipped[id]
				switch {
				case found == skip:
					t.Errorf("%s: finding %v, skipped %v; want exactly one", id, found, skip)
				case id == CheckServerCancel || id == CheckServerRequests || id == CheckDiscover || id == CheckResponseIDs || id == CheckProgressKnownTok:
					// Observed before the loss.
				case !skip || !strings.Contains(reason, "not run: the connection was lost during the full run of hostile"):
					t.Errorf("%s: not listed as not run because of the loss (skipped %v %q)", id, skip, reason)
				}
			}

			var out bytes.Buffer
			o.Target = tc.target(t)
			o.LateWindow = 300 * time.Millisecond
			if code := Run(context.Background(), o, &out, io.Discard); code != exitcode.Usage {
				t.Errorf("human run: exit %d", code)
			}
			testserver.MustContain(t, out.String(), "ERROR  connection")
			testserver.MustContain(t, out.String(), "the battery did not finish: connection lost during the full run of hostile")
			testserver.MustContain(t, out.String(), "not run: the connection was lost")
		})
	}
}

// asksClient sends the client a sampling request before each answer, as
// a legacy server may and a modern one must not.
var asksClient = hostile.Stdio{Name: "asks-client", Call: func(s *hostile.Session, req hostile.Request) {
	_ = s.Send([]byte(`{"jsonrpc":"2.0","id":"srv-1","method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}`))
	if !req.Token.IsZero() {
		_ = s.Progress(req.Token, 1, 1, "done")
	}
	_ = s.Reply(req.ID, `{"content":[{"type":"text","text":"asked first"}]}`)
}}

// A modern server that sends a request fails server_requests.none, and
// inflight does not answer it; in the legacy era it is allowed (and
// refused with an error, since no handler is configured).
func TestCheckServerRequests(t *testing.T) {
	for _, tc := range []struct {
		name    string
		version string
	}{{"modern", ""}, {"legacy", testserver.Legacy.Version}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := Options{Target: testserver.InProcess(asksClient, tc.version)(t), Tool: hostile.ToolName,
				LateWindow: 300 * time.Millisecond, Timeout: 5 * time.Second}
			rep, code := runCheck(t, o)
			f, judged := findingsByID(rep)[CheckServerRequests]
			if tc.version != "" {
				skipped := false
				for _, sk := range rep.Skipped {
					skipped = skipped || (sk.ID == CheckServerRequests && strings.Contains(sk.Reason, "legacy servers may send requests"))
				}
				if judged || !skipped {
					t.Errorf("legacy: judged %+v, skipped %+v", f, rep.Skipped)
				}
				return
			}
			if !judged || f.Status != StatusFail || f.Level != LevelMust ||
				!strings.Contains(f.Detail, "sampling/createMessage") || !strings.Contains(f.Detail, "answered none") {
				t.Errorf("modern: finding %+v", f)
			}
			if code != exitcode.Failed {
				t.Errorf("exit %d, want %d", code, exitcode.Failed)
			}
		})
	}
}

// keepsSending reports progress every 40ms; uncancelled it answers after
// six steps, cancelled it goes on reporting until its stdin ends: a server
// that never stops for as long as anyone watches.
var keepsSending = hostile.Stdio{Name: "keeps-sending", Call: func(s *hostile.Session, req hostile.Request) {
	cancelled := s.CancelledCh(req.ID)
	for step := 1; ; step++ {
		if !req.Token.IsZero() {
			_ = s.Progress(req.Token, float64(step), 0, "")
		}
		select {
		case <-cancelled:
		default:
			if step == 6 {
				_ = s.Reply(req.ID, `{"content":[{"type":"text","text":"six steps"}]}`)
				return
			}
		}
		if !s.Sleep(40 * time.Millisecond) {
			return
		}
	}
}}

// A server still sending progress when the watch ends did not stop: the
// finding says so and how long inflight watched, never that it went
// quiet — a FAIL in the modern era, a WARN in the legacy one.
func TestCheckServerStillSendingWhenTheWatchEnds(t *testing.T) {
	for _, tc := range []struct {
		name, version, want string
	}{{"modern", "", StatusFail}, {"legacy", testserver.Legacy.Version, StatusWarn}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := Options{Target: testserver.InProcess(keepsSending, tc.version)(t), Tool: hostile.ToolName,
				LateWindow: 400 * time.Millisecond, Timeout: 5 * time.Second}
			rep, _ := runCheck(t, o)
			f := findingsByID(rep)[CheckCancelStops]
			if f.Status != tc.want {
				t.Errorf("progress_stops %s, want %s: %s", f.Status, tc.want, f.Detail)
			}
			if !regexp.MustCompile(`^progress did not stop in the 4\d\dms watched: \d+ progress notifications arrived after the server could have seen the cancel .*; still sending when the watch ended`).MatchString(f.Detail) {
				t.Errorf("progress_stops does not say the progress went on to the watch's end: %s", f.Detail)
			}
			if strings.Contains(f.Detail, "nothing more") || strings.Contains(f.Detail, "quiet") {
				t.Errorf("progress_stops claims a silence it did not see: %s", f.Detail)
			}
		})
	}
}

// Servers that name the wrong request fail the checks made for them, in
// both eras, and the demo passes them (TestCheckSlowPasses): a cancel
// answered with {"code":0,"message":"Request cancelled"} (python-sdk v1),
// an answer under the ID of a call already answered, a server's cancel of
// the client's own request.
func TestCheckMisaddressingServers(t *testing.T) {
	for _, tc := range []struct {
		peer       hostile.Stdio
		id, status string
		detail     string
	}{
		{hostile.CancelCodeZero, CheckCancelErrorCode, StatusWarn, `error 0 "Request cancelled"`},
		{hostile.MisaddressedIDs, CheckResponseIDs, StatusFail, "which already had one"},
		{hostile.CancelsClientRequest, CheckServerCancel, StatusFail, "notifications/cancelled"},
	} {
		for _, era := range []struct{ name, version string }{{"modern", ""}, {"legacy", testserver.Legacy.Version}} {
			t.Run(tc.peer.Name+"/"+era.name, func(t *testing.T) {
				t.Parallel()
				o := Options{Target: testserver.InProcess(tc.peer, era.version)(t), Tool: hostile.ToolName,
					LateWindow: 300 * time.Millisecond, Timeout: 3 * time.Second, NoTasks: true}
				rep, code := runCheck(t, o)
				f, ok := findingsByID(rep)[tc.id]
				if !ok || f.Status != tc.status || !strings.Contains(f.Detail, tc.detail) || f.Quote == "" {
					t.Fatalf("%s = %+v, want %s naming %q", tc.id, f, tc.status, tc.detail)
				}
				if tc.status == StatusFail && code != exitcode.Failed {
					t.Errorf("exit %d, want %d", code, exitcode.Failed)
				}
			})
		}
	}
}
