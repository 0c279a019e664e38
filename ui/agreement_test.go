package ui

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"inflight/call"
	"inflight/check"
	"inflight/event"
	"inflight/session"
	"inflight/wire"
)

// The same traffic is judged the same way by the TUI, by `call --json` and
// by `check`: all three read the one judgement the tracker makes
// (session/crossing.go). Before, the battery kept its own --grace over its
// own arrival times, and a flood the TUI flagged as "⚑ 682 progress after
// cancel" passed check as having crossed the cancel.
//
// Each script is traffic as recorded from a run (a flood cancelled mid-way
// on stdio, the demo's stubborn tool, a modern HTTP stream close), with
// fixed times, so that the counts are known: it is applied to the TUI's
// model, and to a tracker from which call's report (call.ReportOf) and the
// battery's judgement of the cancel (check.JudgeCancel) are made.
func TestOneVerdictForTheSameTraffic(t *testing.T) {
	for _, sc := range agreementScripts() {
		t.Run(sc.name, func(t *testing.T) {
			// The TUI.
			h := newHarness(t, 160, 30)
			h.fake.info = sc.info
			h.connect()
			h.run(h.m.send(wire.MethodToolsCall, json.RawMessage(`{"name":"slow","arguments":{}}`), session.RequestOptions{}))
			id := h.m.tracker.At(h.m.tracker.Len() - 1).ID
			start := h.now
			for _, st := range sc.steps {
				h.now = start.Add(st.at)
				if st.cancel {
					h.run(h.m.cancel(id, "user", session.CauseUser))
					continue
				}
				h.events(st.event(id, h.now))
			}
			h.now = start.Add(sc.end)
			h.send(tickMsg{gen: h.m.clock.gen})
			n, _ := id.Int()
			tui := h.request(n)
			row := h.screen()

			// call and check, from their own tracker fed the same events.
			tr := session.NewTracker(session.DefaultConfig())
			info := sc.info
			tr.Apply(event.Event{Kind: event.Connected, Time: t0, Info: &info})
			tr.Begin(wire.MethodToolsList, nil, session.RequestOptions{}, t0) // as the TUI does on connecting
			r := tr.Begin(wire.MethodToolsCall, json.RawMessage(`{"name":"slow","arguments":{}}`), session.RequestOptions{}, start)
			if r.ID != id {
				t.Fatalf("ids differ: TUI %s, tracker %s", id, r.ID)
			}
			var cancelAt time.Time
			for _, st := range sc.steps {
				at := start.Add(st.at)
				if st.cancel {
					cancelAt = at
					if _, err := tr.RequestCancel(id, "user", session.CauseUser, at); err != nil {
						t.Fatal(err)
					}
					continue
				}
				tr.Apply(st.event(id, at))
			}
			tr.Due(start.Add(sc.end))
			rep := call.ReportOf(info, tr, r, nil, start.Add(sc.end))
			findings := check.JudgeCancel(tr, r, info.Era == event.EraModern, info.Transport == event.TransportHTTP,
				true, false, check.Watch{From: cancelAt, Until: start.Add(sc.end)}, check.Options{})

			want := sc.want
			got := map[string]counts{
				"tui":       {tui.Late.ProgressAfterCancel, tui.Late.ProgressCrossed, tui.Late.Response && !tui.Late.Crossed, tui.Late.Response && tui.Late.Crossed},
				"call":      fromCall(rep),
				"check":     fromCheck(t, findings),
				"tui's row": fromRow(row),
			}
			for who, c := range got {
				if c != want {
					t.Errorf("%s: %+v, want %+v", who, c, want)
				}
			}
			if t.Failed() {
				t.Logf("screen:\n%s\ncheck: %+v", row, findings)
			}
		})
	}
}

// counts is what is compared: late and crossed progress, and whether the
// response was late or crossed the cancel.
type counts struct {
	lateProgress, crossedProgress int
	lateResponse, crossedResponse bool
}

func fromCall(rep call.Report) counts {
	if rep.Late == nil {
		return counts{}
	}
	l := rep.Late
	return counts{l.ProgressAfterCancel, l.ProgressCrossed, l.Response && !l.Crossed, l.Response && l.Crossed}
}

var (
	lateProgressText    = regexp.MustCompile(`(\d+) progress notifications? arrived after the server could have seen the cancel`)
	andCrossedText      = regexp.MustCompile(`and (\d+) crossed the cancel in flight`)
	onlyCrossedText     = regexp.MustCompile(`(\d+) progress notifications? crossed the cancel in flight, none came later`)
	rowLateProgressText = regexp.MustCompile(`⚑ (\d+) progress after cancel`)
	rowCrossedText      = regexp.MustCompile(`(\d+) crossed in flight`)
)

// fromCheck reads the counts out of the battery's findings, as a reader of
// `check` would.
func fromCheck(t *testing.T, findings []check.Finding) counts {
	var c counts
	for _, f := range findings {
		switch f.ID {
		case check.CheckCancelStops:
			c.lateProgress = atoiMatch(lateProgressText, f.Detail)
			c.crossedProgress = atoiMatch(andCrossedText, f.Detail) + atoiMatch(onlyCrossedText, f.Detail)
		case check.CheckCancelNoResponse:
			c.lateResponse = strings.Contains(f.Detail, "(a late response)")
			c.crossedResponse = strings.Contains(f.Detail, "it crossed the cancel in flight")
		case check.CheckStreamClose:
			if f.Status != check.StatusPass {
				t.Errorf("stream close: %s %s", f.Status, f.Detail)
			}
		}
	}
	return c
}

// fromRow reads the counts out of the list's row, as a person would.
func fromRow(screen string) counts {
	var row string
	for _, line := range strings.Split(screen, "\n") {
		if strings.Contains(line, "slow") && strings.Contains(line, "cancel") {
			row = line
		}
	}
	return counts{
		lateProgress:    atoiMatch(rowLateProgressText, row),
		crossedProgress: atoiMatch(rowCrossedText, row),
		lateResponse:    strings.Contains(row, "late response ignored"),
		crossedResponse: strings.Contains(row, "response crossed the cancel in flight"),
	}
}

func atoiMatch(re *regexp.Regexp, s string) int {
	m := re.FindStringSubmatch(s)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// step is one moment of a script: an event, or the user's cancel.
type step struct {
	at     time.Duration
	cancel bool
	event  func(id wire.ID, at time.Time) event.Event
}

type script struct {
	name  string
	info  event.ConnInfo
	steps []step
	end   time.Duration
	want  counts
}

func agreementScripts() []script {
	rtt := func(d time.Duration) step {
		return step{event: func(_ wire.ID, at time.Time) event.Event {
			return event.Event{Kind: event.RoundTrip, Time: at, RTT: d, Text: "ping"}
		}}
	}
	progress := func(at time.Duration, v int) step {
		return step{at: at, event: func(id wire.ID, t time.Time) event.Event {
			raw := wire.Notification(wire.NotifyProgress, json.RawMessage(fmt.Sprintf(`{"progressToken":%s,"progress":%d}`, id, v)))
			msg, _ := wire.Decode(raw)
			p, _ := wire.DecodeProgress(msg.Params)
			return event.Event{Kind: event.Received, Time: t, Raw: raw, Msg: msg, Progress: &p}
		}}
	}
	response := func(at time.Duration) step {
		return step{at: at, event: func(id wire.ID, t time.Time) event.Event {
			raw := wire.ResultResponse(id, json.RawMessage(`{"resultType":"complete","content":[]}`))
			msg, _ := wire.Decode(raw)
			return event.Event{Kind: event.Received, Time: t, RequestID: id, Raw: raw, Msg: msg}
		}}
	}
	cancel := func(at time.Duration, sig event.CancelSignal) []step {
		return []step{{at: at, cancel: true}, {at: at, event: func(id wire.ID, t time.Time) event.Event {
			return event.Event{Kind: event.CancelSent, Time: t, RequestID: id, Signal: sig, Reason: "user"}
		}}}
	}
	streamClosed := func(at time.Duration) step {
		return step{at: at, event: func(id wire.ID, t time.Time) event.Event {
			return event.Event{Kind: event.StreamClosed, Time: t, RequestID: id, ByClient: true}
		}}
	}
	legacyStdio := event.ConnInfo{Transport: event.TransportStdio, Era: event.EraLegacy, ProtocolVersion: wire.Version20251125, ServerName: "recorded"}
	modernStdio := event.ConnInfo{Transport: event.TransportStdio, Era: event.EraModern, ProtocolVersion: wire.VersionModern, ServerName: "recorded"}
	modernHTTP := event.ConnInfo{Transport: event.TransportHTTP, Era: event.EraModern, ProtocolVersion: wire.VersionModern, ServerName: "recorded"}

	// A flood cancelled mid-way: progress every 20µs; the cancel leaves at
	// 10ms on a 200µs round trip, so what is read in the next 100µs crossed
	// it (4 notifications), the rest is late (20), and so is the answer.
	flood := []step{rtt(200 * time.Microsecond)}
	v := 0
	for at := time.Millisecond; at < 10*time.Millisecond; at += 20 * time.Microsecond {
		v++
		flood = append(flood, progress(at, v))
	}
	flood = append(flood, cancel(10*time.Millisecond, event.SignalNotification)...)
	for at := 10*time.Millisecond + 20*time.Microsecond; at <= 10*time.Millisecond+480*time.Microsecond; at += 20 * time.Microsecond {
		v++
		flood = append(flood, progress(at, v))
	}
	flood = append(flood, response(11*time.Millisecond))

	// The demo's stubborn tool: it ignores the cancel, goes on with its
	// progress and answers anyway.
	stubborn := []step{rtt(300 * time.Microsecond), progress(100*time.Millisecond, 1), progress(200*time.Millisecond, 2)}
	stubborn = append(stubborn, cancel(250*time.Millisecond, event.SignalNotification)...)
	stubborn = append(stubborn, progress(300*time.Millisecond, 3), progress(400*time.Millisecond, 4), response(450*time.Millisecond))

	// A modern HTTP cancel closes the stream: nothing can come after it.
	closed := []step{rtt(time.Millisecond), progress(100*time.Millisecond, 1)}
	closed = append(closed, cancel(150*time.Millisecond, event.SignalStreamClosed)...)
	closed = append(closed, streamClosed(150*time.Millisecond))

	return []script{
		{name: "flood cancelled mid-way", info: legacyStdio, steps: flood, end: 6 * time.Second,
			want: counts{lateProgress: 20, crossedProgress: 4, lateResponse: true}},
		{name: "stubborn", info: modernStdio, steps: stubborn, end: 6 * time.Second,
			want: counts{lateProgress: 2, lateResponse: true}},
		{name: "modern HTTP stream close", info: modernHTTP, steps: closed, end: time.Second},
	}
}
