package check

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"inflight/event"
	"inflight/session"
	"inflight/wire"
)

// judgeScript is traffic after a mid-way cancel on legacy stdio, on a fixed
// clock: the cancel leaves at 100ms, the watch lasts 2s, then the battery
// goes on until the connection closes.
type judgeScript struct {
	progress []time.Duration // arrival times of progress, from the request's start
	response time.Duration   // 0: none
	closed   time.Duration   // when the connection closed; 0: judged at the watch's end
}

const (
	judgeCancelAt = 100 * time.Millisecond
	judgeWatch    = 2 * time.Second
)

// judge applies the script to a tracker and judges the cancel as the
// battery does: a snapshot of the late traffic at the watch's end, and the
// judgement once the connection closed.
func judge(t *testing.T, sc judgeScript) map[string]Finding {
	t.Helper()
	t0 := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
	cfg := session.DefaultConfig()
	cfg.LateWindow = judgeWatch
	tr := session.NewTracker(cfg)
	tr.Apply(event.Event{Kind: event.Connected, Time: t0, Info: &event.ConnInfo{Transport: event.TransportStdio, Era: event.EraLegacy, ProtocolVersion: wire.Version20251125}})
	tr.Apply(event.Event{Kind: event.RoundTrip, Time: t0, RTT: 200 * time.Microsecond, Text: "ping"})
	r := tr.Begin(wire.MethodToolsCall, json.RawMessage(`{"name":"slow","arguments":{}}`), session.RequestOptions{}, t0)
	tr.Apply(event.Event{Kind: event.Sent, Time: t0, RequestID: r.ID, Raw: wire.Request(r.ID, r.Method, nil)})
	cancelAt := t0.Add(judgeCancelAt)
	if _, err := tr.RequestCancel(r.ID, "check", session.CauseUser, cancelAt); err != nil {
		t.Fatal(err)
	}
	tr.Apply(event.Event{Kind: event.CancelSent, Time: cancelAt, RequestID: r.ID, Signal: event.SignalNotification, Reason: "check"})

	type arrival struct {
		at  time.Duration
		raw []byte
	}
	var in []arrival
	for i, at := range sc.progress {
		in = append(in, arrival{at, wire.Notification(wire.NotifyProgress, json.RawMessage(fmt.Sprintf(`{"progressToken":%s,"progress":%d}`, r.ID, i+1)))})
	}
	if sc.response > 0 {
		in = append(in, arrival{sc.response, wire.ResultResponse(r.ID, json.RawMessage(`{"content":[]}`))})
	}
	watchEnd := cancelAt.Add(judgeWatch)
	var atEnd *session.Late
	for _, a := range in {
		at := t0.Add(a.at)
		if atEnd == nil && at.After(watchEnd) {
			tr.Due(watchEnd)
			snap := r.Late
			atEnd = &snap
		}
		msg, err := wire.Decode(a.raw)
		if err != nil {
			t.Fatal(err)
		}
		ev := event.Event{Kind: event.Received, Time: at, Raw: a.raw, Msg: msg}
		if msg.IsResponse() {
			ev.RequestID = r.ID
		} else {
			p, _ := wire.DecodeProgress(msg.Params)
			ev.Progress = &p
		}
		tr.Apply(ev)
	}
	tr.Due(watchEnd)
	if atEnd == nil {
		snap := r.Late
		atEnd = &snap
	}
	w := Watch{From: cancelAt, Until: watchEnd, AtEnd: atEnd}
	if sc.closed > 0 {
		w.ObservedUntil = t0.Add(sc.closed)
	} else {
		w.AtEnd = nil
	}
	out := map[string]Finding{}
	for _, f := range JudgeCancel(tr, r, false, false, true, false, w, Options{CancelAfter: time.Second}) {
		out[f.ID] = f
	}
	return out
}

// A finding says what was seen and for how long. A server sending once a
// second was reported as having "gone quiet 1.003s after the cancel" by a
// 2s watch that ended between two of its messages, while the trace showed
// it sending for 3s more: now the watch's end says it was still sending,
// from what came after it or, judged at the end, from the spacing.
func TestJudgeCancelSaysOnlyWhatItSaw(t *testing.T) {
	everySecond := []time.Duration{101 * time.Millisecond, 1100 * time.Millisecond, 2100*time.Millisecond + 4*time.Millisecond, 3104 * time.Millisecond}
	for _, tc := range []struct {
		name     string
		sc       judgeScript
		stops    string // the status of cancel.progress_stops
		want     []string
		wantNot  []string
		response string // the status of cancel.no_response, and words in it
		respWant string
	}{
		{
			name:  "sends every second past the watch, judged after the connection closed",
			sc:    judgeScript{progress: everySecond, closed: 4100 * time.Millisecond},
			stops: StatusWarn,
			want: []string{"progress did not stop in the 2.0s watched: 4 progress notifications arrived after the server could have seen the cancel",
				"the last message for the request in the 2.0s watched came 1s after the cancel",
				"still sending when the watch ended: 2 of the progress notifications came after it, while the battery went on, the last 3.004s after the cancel"},
			wantNot: []string{"quiet", "nor until"},
			// Still sending progress when the watch ended: no verdict on a response.
			response: StatusWarn, respWant: "no response in the 2.0s watched after the cancel, nor until inflight closed the connection 4.0s after the cancel, but the server was still sending progress for the request when the watch ended: a response may have come later",
		},
		{
			name:  "sends every second, judged at the watch's end",
			sc:    judgeScript{progress: everySecond[:2]},
			stops: StatusWarn,
			want: []string{"progress did not stop in the 2.0s watched: 2 progress notifications",
				"still sending when the watch ended, 1s after that message (its messages came about 999ms apart)"},
			response: StatusWarn, respWant: "a response may have come later",
		},
		{
			name:  "one late progress, then nothing until the connection closed",
			sc:    judgeScript{progress: []time.Duration{120 * time.Millisecond}, closed: 2200 * time.Millisecond},
			stops: StatusWarn,
			want: []string{"1 progress notification arrived after the server could have seen the cancel",
				"the last message for the request in the 2.0s watched came 20ms after the cancel; nothing more until inflight closed the connection 2.1s after the cancel"},
			wantNot:  []string{"did not stop", "still sending"},
			response: StatusPass,
		},
		{
			name:  "quiet progress, a response after the watch",
			sc:    judgeScript{response: 3100 * time.Millisecond, closed: 3200 * time.Millisecond},
			stops: StatusPass,
			want: []string{"no progress after the cancel (signal notifications/cancelled); nothing for the request in the 2.0s watched after the cancel",
				"still sending when the watch ended: the response came after it"},
			response: StatusWarn, respWant: "a response arrived 3s after the cancel, once the 2.0s watch had ended, while the battery went on",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := judge(t, tc.sc)
			stops, resp := got[CheckCancelStops], got[CheckCancelNoResponse]
			if stops.Status != tc.stops {
				t.Errorf("progress_stops %s, want %s: %s", stops.Status, tc.stops, stops.Detail)
			}
			for _, w := range tc.want {
				if !strings.Contains(stops.Detail, w) {
					t.Errorf("progress_stops lacks %q:\n%s", w, stops.Detail)
				}
			}
			for _, w := range tc.wantNot {
				if strings.Contains(stops.Detail, w) {
					t.Errorf("progress_stops says %q:\n%s", w, stops.Detail)
				}
			}
			if resp.Status != tc.response || !strings.Contains(resp.Detail, tc.respWant) {
				t.Errorf("no_response %s %q, want %s with %q", resp.Status, resp.Detail, tc.response, tc.respWant)
			}
		})
	}
}
