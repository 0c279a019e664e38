package check

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"inflight/internal/testkit/hostile"
	"inflight/session"
	"inflight/source"
	"inflight/target"
	"inflight/trace"
	"inflight/wire"
)

// The battery's --trace of a server misbehaving on a request's own stream
// (a resumed stream replaying another's messages, progress mixed between
// two calls' streams), replayed through a fresh tracker as `inflight
// replay` does, gives the verdicts of the live run: which stream carried
// each message, and which stream was resumed, are in the trace.
func TestCheckOwnStreamTraceReplaysAlike(t *testing.T) {
	for _, tc := range []struct {
		mode    hostile.ResumeMode
		version string
		want    string // the violation the run must have found ("": none of these)
	}{
		{hostile.ReplaysOther, wire.Version20251125, session.ViolationReplayedOtherStream},
		{hostile.MixesProgress, wire.Version20251125, session.ViolationProgressOtherStream},
		{hostile.MixesProgress, "", session.ViolationProgressOtherStream},
		{hostile.Redelivers, wire.Version20251125, ""},
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
			var o Options
			var data []byte
			var live map[string]int
			byCode := map[string]int{}
			// The step that provokes it runs two calls at once and drops
			// one's stream at its first progress: on a loaded machine it can
			// end inconclusive (the call over before the drop), and the
			// battery says so; it is run again then, at most three times.
			for attempt := 1; ; attempt++ {
				path := filepath.Join(t.TempDir(), "check.jsonl")
				o = Options{Target: target.Target{URL: ts.URL, ProtocolVersion: tc.version}, Tool: hostile.ToolName,
					LateWindow: 300 * time.Millisecond, Timeout: 5 * time.Second, NoTasks: true, TracePath: path}
				rep, _ := runCheck(t, o)
				var err error
				if data, err = os.ReadFile(path); err != nil {
					t.Fatal(err)
				}
				live = liveViolations(t, data)
				clear(byCode)
				for k, n := range live {
					byCode[strings.SplitN(k, " ", 2)[0]] += n
				}
				if tc.want == "" || byCode[tc.want] > 0 || attempt == 3 {
					break
				}
				t.Logf("attempt %d found no %s; the stream checks said: %s", attempt, tc.want, streamFindings(rep))
			}
			if tc.want != "" && byCode[tc.want] == 0 {
				t.Fatalf("the live run found no %s: %v", tc.want, live)
			}
			for _, code := range []string{session.ViolationReplayedOtherStream, session.ViolationProgressOtherStream} {
				if code != tc.want && byCode[code] != 0 {
					t.Errorf("the live run found %d %s, a violation this server does not commit", byCode[code], code)
				}
			}
			cfg := session.DefaultConfig()
			reset := true
			cfg.DefaultTimeout, cfg.MaxTimeout, cfg.LateWindow, cfg.ResetOnProgress = o.Timeout, o.Timeout, o.LateWindow, &reset
			rp, err := source.OpenReplay(bytes.NewReader(data), int64(len(data)), source.ReplayOptions{Start: time.Unix(0, 0), Tracker: cfg})
			if err != nil {
				t.Fatal(err)
			}
			if n, last := rp.Disagreements(); n != 0 {
				t.Errorf("%d disagreements with the live run, the latest: %s", n, last)
			}
			vl := rp.Tracker().Violations()
			replayed := map[string]int{}
			for i := range vl.Len() {
				v := vl.At(i)
				replayed[v.Code+" #"+v.RequestID.String()]++
			}
			if !maps.Equal(replayed, live) {
				t.Errorf("the replay found violations %v, the live run %v", replayed, live)
			}
			if resumes := bytes.Count(data, []byte(`"resumed":true`)); (tc.mode == hostile.ReplaysOther || tc.mode == hostile.Redelivers) && resumes == 0 {
				t.Errorf("the trace of a resumed stream says none was resumed")
			}
		})
	}
}

// liveViolations counts, by code and request ("code #id"), the
// violations a trace says its run's tracker found.
func liveViolations(t *testing.T, data []byte) map[string]int {
	t.Helper()
	counts := map[string]int{}
	rd := trace.NewReader(bytes.NewReader(data))
	for {
		rec, err := rd.Next()
		if err != nil {
			break
		}
		if rec.Event == trace.EventViolation {
			counts[rec.Code+" #"+idOf(rec.ID)]++
		}
	}
	return counts
}

func idOf(id *wire.ID) string {
	if id == nil {
		return wire.ID{}.String()
	}
	return id.String()
}

// streamFindings is what the battery said of a request's own stream, for
// a log line.
func streamFindings(rep Report) string {
	var out []string
	for _, f := range rep.Findings {
		if strings.HasPrefix(f.ID, "resume.") || f.ID == CheckProgressOwnStream {
			out = append(out, f.Status+" "+f.ID+": "+f.Detail)
		}
	}
	return strings.Join(out, "; ")
}
