package check

import (
	"strings"
	"testing"
	"time"

	"inflight/exitcode"
	"inflight/internal/testkit/hostile"
	"inflight/internal/testkit/testserver"
	"inflight/target"
	"inflight/wire"
)

// Streamable HTTP servers that misbehave on a request's own stream: when it
// is resumed with Last-Event-ID (nothing redelivered, another stream
// replayed, no event IDs at all), and with progress tokens (one request's
// progress on another's stream, a token nobody sent). Each fails its own
// check and no other of the group; the well-behaved one passes them all.
func TestCheckOwnStreamServers(t *testing.T) {
	type want struct{ status, detail string }
	for _, tc := range []struct {
		mode    hostile.ResumeMode
		version string
		want    map[string]want
		skipped map[string]string
		code    int
	}{
		{hostile.Redelivers, wire.Version20251125, map[string]want{
			CheckResumeRedelivers:  {StatusPass, "the rest came on the resumed stream"},
			CheckResumeOwnStream:   {StatusPass, "was its own"},
			CheckProgressOwnStream: {StatusPass, "two calls at once included"},
			CheckProgressKnownTok:  {StatusPass, "every progress notification"},
		}, nil, 0},
		{hostile.NoRedelivery, wire.Version20251125, map[string]want{
			CheckResumeRedelivers: {StatusWarn, "watched after the resumption"},
			CheckResumeOwnStream:  {StatusPass, "was its own"},
		}, nil, 0},
		{hostile.ReplaysOther, wire.Version20251125, map[string]want{
			CheckResumeRedelivers: {StatusPass, "the rest came on the resumed stream"},
			CheckResumeOwnStream:  {StatusFail, "of another request came on request"},
		}, nil, exitcode.Failed},
		{hostile.NoEventIDs, wire.Version20251125, map[string]want{
			CheckProgressOwnStream: {StatusPass, "two calls at once included"},
		}, map[string]string{CheckResumeRedelivers: naNoEventIDs, CheckResumeOwnStream: naNoEventIDs}, 0},
		{hostile.MixesProgress, wire.Version20251125, map[string]want{
			CheckProgressOwnStream: {StatusWarn, "on the response stream of request"},
			CheckProgressKnownTok:  {StatusPass, "every progress notification"},
		}, nil, 0},
		{hostile.MixesProgress, "", map[string]want{
			CheckProgressOwnStream: {StatusFail, "on the response stream of request"},
		}, map[string]string{CheckResumeRedelivers: naResumeModern}, exitcode.Failed},
		{hostile.UnknownToken, wire.Version20251125, map[string]want{
			CheckProgressKnownTok:  {StatusFail, hostile.UnknownProgressToken},
			CheckProgressOwnStream: {StatusPass, ""},
		}, nil, exitcode.Failed},
	} {
		era := "legacy"
		if tc.version == "" {
			era = "modern"
		}
		peer := &hostile.Resumable{Mode: tc.mode, Steps: 6, Interval: 60 * time.Millisecond}
		t.Run(peer.Name()+"/"+era, func(t *testing.T) {
			t.Parallel()
			ts := hostile.NewServer(peer, false)
			t.Cleanup(ts.Close)
			o := Options{Target: target.Target{URL: ts.URL, ProtocolVersion: tc.version}, Tool: hostile.ToolName,
				LateWindow: 300 * time.Millisecond, Timeout: 5 * time.Second, NoTasks: true}
			rep, code := runCheck(t, o)
			got := findingsByID(rep)
			for id, w := range tc.want {
				f, ok := got[id]
				if !ok || f.Status != w.status || !strings.Contains(f.Detail, w.detail) || f.Quote == "" {
					t.Errorf("%s = %+v, want %s naming %q", id, f, w.status, w.detail)
				}
			}
			for id, reason := range tc.skipped {
				found := false
				for _, s := range rep.Skipped {
					found = found || (s.ID == id && s.Reason == reason)
				}
				if !found {
					t.Errorf("%s not skipped with %q: %+v", id, reason, rep.Skipped)
				}
			}
			if code != tc.code {
				t.Errorf("exit %d, want %d; findings %+v", code, tc.code, rep.Findings)
			}
			t.Logf("%s", strings.Join(peer.Log(), ", "))
		})
	}
}

// On stdio one pipe carries every message: the checks of a request's own
// stream are skipped with why, and progress.known_token is judged.
func TestCheckOwnStreamOnStdio(t *testing.T) {
	o := Options{Target: testserver.InProcess(hostile.CancelCodeZero, testserver.Legacy.Version)(t), Tool: hostile.ToolName,
		LateWindow: 300 * time.Millisecond, Timeout: 3 * time.Second, NoTasks: true}
	rep, _ := runCheck(t, o)
	if f := findingsByID(rep)[CheckProgressKnownTok]; f.Status != StatusPass {
		t.Errorf("%s = %+v, want PASS", CheckProgressKnownTok, f)
	}
	skipped := map[string]string{}
	for _, s := range rep.Skipped {
		skipped[s.ID] = s.Reason
	}
	for _, id := range []string{CheckResumeRedelivers, CheckResumeOwnStream, CheckProgressOwnStream} {
		if skipped[id] != naOwnStream {
			t.Errorf("%s skipped with %q, want %q", id, skipped[id], naOwnStream)
		}
	}
}
