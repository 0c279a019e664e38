package call

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"inflight/event"
	"inflight/redact"
	"inflight/session"
	"inflight/wire"
)

// The summary says for how long inflight watched after the cancel, when
// the last message came, and whether the server was still sending when
// the watch ended: "no response after the cancel" alone said nothing of
// how long anyone looked.
func TestCallSummarySaysHowLongItWatched(t *testing.T) {
	for _, tc := range []struct {
		name     string
		progress []time.Duration // after the cancel
		end      time.Duration   // the end of the run, after the cancel
		want     []string
		wantNot  string
	}{
		{"sends every second to the end", []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}, 4 * time.Second,
			[]string{"3 progress notifications after the cancel", "watched 4.0s after the cancel; the last message came 3.00s after it; still sending when the watch ended"}, ""},
		{"one late progress, then quiet", []time.Duration{20 * time.Millisecond}, 5 * time.Second,
			[]string{"1 progress notification after the cancel", "watched 5.0s after the cancel; the last message came 20ms after it"}, "still sending"},
		{"nothing", nil, 5 * time.Second,
			[]string{"no response after the cancel; no progress after the cancel", "watched 5.0s after the cancel"}, "the last message"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t0 := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
			tr := session.NewTracker(session.DefaultConfig())
			info := event.ConnInfo{Transport: event.TransportStdio, Era: event.EraLegacy, ProtocolVersion: wire.Version20251125}
			tr.Apply(event.Event{Kind: event.Connected, Time: t0, Info: &info})
			r := tr.Begin(wire.MethodToolsCall, json.RawMessage(`{"name":"slow","arguments":{}}`), session.RequestOptions{}, t0)
			tr.Apply(event.Event{Kind: event.Sent, Time: t0, RequestID: r.ID, Raw: wire.Request(r.ID, r.Method, nil)})
			cancelAt := t0.Add(100 * time.Millisecond)
			if _, err := tr.RequestCancel(r.ID, "user", session.CauseUser, cancelAt); err != nil {
				t.Fatal(err)
			}
			tr.Apply(event.Event{Kind: event.CancelSent, Time: cancelAt, RequestID: r.ID, Signal: event.SignalNotification, Reason: "user"})
			for i, d := range tc.progress {
				raw := wire.Notification(wire.NotifyProgress, json.RawMessage(fmt.Sprintf(`{"progressToken":%s,"progress":%d}`, r.ID, i+1)))
				msg, _ := wire.Decode(raw)
				p, _ := wire.DecodeProgress(msg.Params)
				tr.Apply(event.Event{Kind: event.Received, Time: cancelAt.Add(d), Raw: raw, Msg: msg, Progress: &p})
			}
			end := cancelAt.Add(tc.end)
			tr.Due(end)
			var out bytes.Buffer
			printCallSummary(&out, ReportOf(info, tr, r, nil, end), redact.New(nil, nil, ""))
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("summary lacks %q:\n%s", w, out.String())
				}
			}
			if tc.wantNot != "" && strings.Contains(out.String(), tc.wantNot) {
				t.Errorf("summary says %q:\n%s", tc.wantNot, out.String())
			}
		})
	}
}
