// Package replay is `inflight replay`: a trace file (package trace) read
// back and printed as a time-ordered table of what happened to each
// request, then to the connection.
package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"inflight/exitcode"
	"inflight/report"
	"inflight/termsafe"
	"inflight/trace"
	"inflight/wire"
)

// Options configure File and Reader.
type Options struct {
	// All shows the client's own housekeeping too (era probe, initialize,
	// answers to server pings), which is hidden by default.
	All bool
}

// File prints a trace file as a readable, time-ordered table of what
// happened to each request, followed by what happened to the connection.
// It returns 0, or 2 when the file cannot be read.
func File(path string, o Options, stdout, stderr io.Writer) int {
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintf(stderr, "inflight replay: %s\n", termsafe.Line(err.Error()))
		return exitcode.Usage
	}
	defer f.Close()
	return Reader(f, termsafe.Line(path), o, stdout, stderr)
}

// Reader is File of an open trace; name is shown in the heading.
func Reader(r io.Reader, name string, o Options, stdout, stderr io.Writer) int {
	recs, bad, err := trace.ReadAll(r)
	for i, le := range bad {
		if i == maxSkipWarnings {
			fmt.Fprintf(stderr, "inflight replay: %s: skipped %d more lines that are not trace records\n", name, len(bad)-i)
			break
		}
		fmt.Fprintf(stderr, "inflight replay: %s: skipped %s\n", name, termsafe.Line(le.Error()))
	}
	if err != nil {
		fmt.Fprintf(stderr, "inflight replay: %s: %s\n", name, termsafe.Line(err.Error()))
		return exitcode.Usage
	}
	if len(recs) == 0 {
		why := "it is empty"
		if len(bad) > 0 {
			why = "none of its lines is a trace record"
		}
		fmt.Fprintf(stderr, "inflight replay: %s is not an inflight trace: %s\n", name, why)
		return exitcode.Usage
	}
	// Lines are written in the order events were applied, which can differ
	// slightly from the order they happened in; the table is by time.
	sort.SliceStable(recs, func(i, j int) bool { return recs[i].MS < recs[j].MS })
	printReplay(stdout, name, recs, o)
	return 0
}

// maxSkipWarnings bounds the lines replay names as skipped: a file that is
// no trace at all would otherwise flood the terminal.
const maxSkipWarnings = 10

// replayRequest gathers the lines of one request.
type replayRequest struct {
	id       wire.ID
	method   string
	target   string
	state    string
	lines    []*trace.Record
	cancelMS float64 // -1 until a cancel was requested
	endMS    float64 // -1 until the request ended (answered, or a final state)
	signal   string
	// cancelAfterEnd: a cancel went out after the request had ended (the
	// check battery's cancel of a finished request).
	cancelAfterEnd bool
	// Counts after the cancel.
	lateProgress int
	lateResponse float64 // ms after the cancel, -1 when none
	progress     int
	violations   int
	findings     []string
}

func printReplay(w io.Writer, name string, recs []trace.Record, o Options) {
	var order []*replayRequest
	byID := map[wire.ID]*replayRequest{}
	var other []*trace.Record
	var conn *trace.Record
	for i := range recs {
		rec := &recs[i]
		if rec.Event == trace.EventConnected && conn == nil {
			conn = rec
		}
		if rec.Internal && !o.All && !isCancelOut(rec) {
			continue
		}
		id, ok := rec.RequestID()
		if !ok || rec.Internal && !isCancelOut(rec) {
			other = append(other, rec)
			continue
		}
		rq := byID[id]
		if rq == nil && !opensRequest(rec) {
			// A cancel for an ID inflight never sent (the check battery
			// does that on purpose) is connection-level news.
			other = append(other, rec)
			continue
		}
		if rq == nil {
			rq = &replayRequest{id: id, cancelMS: -1, endMS: -1, lateResponse: -1}
			byID[id] = rq
			order = append(order, rq)
		}
		rq.add(rec)
	}

	span := 0.0
	if len(recs) > 0 {
		span = recs[len(recs)-1].MS
	}
	writeLine(w, "trace %s: %d line%s over %s, %d request%s", name, len(recs), report.Plural(len(recs)), fmtMsFloat(span), len(order), report.Plural(len(order)))
	if conn != nil {
		server := conn.Server
		if server == "" {
			server = "unnamed server"
		}
		writeLine(w, "connection: %s, %s era, protocol %s, %s", conn.Transport, conn.Era, conn.ProtocolVersion, server)
	}
	for _, rq := range order {
		fmt.Fprintln(w)
		heading := rq.method
		if heading == "" {
			heading = "(method unknown)"
		}
		if rq.target != "" {
			heading += " " + rq.target
		}
		state := rq.state
		switch state {
		case "":
			state = "state not traced"
		case "pending", "running", "listening", "cancel_requested":
			// Still active at the last line: the run was cut short (killed,
			// or the file truncated), and the fate is not in the trace.
			state += " (the trace ends before its fate)"
		}
		writeLine(w, "request %s: %s: %s", rq.id, heading, state)
		printReplayTable(w, rq.lines, rq)
		writeLine(w, "  %s", rq.summary())
	}
	if len(other) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "connection and server")
		printReplayTable(w, other, nil)
	}
}

// writeLine prints one line of the replay, made inert as a whole. Every
// field of a trace file is whatever the file says — a server's method name,
// an ID, a state a crafted file invents — so the line is sanitised where it
// is written, not field by field, where a field added later could be
// missed.
func writeLine(w io.Writer, format string, args ...any) {
	fmt.Fprintln(w, termsafe.Line(fmt.Sprintf(format, args...)))
}

// opensRequest reports whether a line may start a request's section: its
// request going out, its first state, or anything the server sent about it
// (a response to an unknown ID deserves a section of its own).
func opensRequest(rec *trace.Record) bool {
	if rec.Event == trace.EventState || rec.Dir == trace.DirIn {
		return true
	}
	m, ok := rec.Message()
	return ok && rec.Dir == trace.DirOut && m.Kind == wire.KindRequest
}

// isCancelOut reports the client's own notifications/cancelled line: the
// client marks it internal, but it is the cancel, and belongs to the request.
func isCancelOut(rec *trace.Record) bool {
	if rec.Dir != trace.DirOut {
		return false
	}
	m, ok := rec.Message()
	return ok && m.Method == wire.NotifyCancelled
}

func (rq *replayRequest) add(rec *trace.Record) {
	rq.lines = append(rq.lines, rec)
	if rec.Method != "" && rq.method == "" {
		rq.method, rq.target = rec.Method, rec.Target
	}
	if rec.State != "" {
		rq.state = rec.State
		if rec.State == "cancel_requested" && rq.cancelMS < 0 {
			rq.cancelMS = rec.MS
		}
		if isFinalState(rec.State) && rq.endMS < 0 {
			rq.endMS = rec.MS
		}
	}
	if rq.endMS >= 0 && rq.cancelMS < 0 && (rec.Event == trace.EventCancelSent || isCancelOut(rec)) {
		rq.cancelAfterEnd = true
		return
	}
	switch rec.Event {
	case trace.EventCancelSent:
		rq.signal = rec.Signal
		if rq.cancelMS < 0 {
			rq.cancelMS = rec.MS
		}
	case trace.EventViolation:
		rq.violations++
	case trace.EventFinding:
		rq.findings = append(rq.findings, rec.CheckStatus+" "+rec.Code)
	}
	m, ok := rec.Message()
	if !ok {
		return
	}
	switch {
	case rec.Dir == trace.DirOut && m.Kind == wire.KindRequest && rq.method == "":
		rq.method, rq.target = m.Method, wire.Target(m.Method, m.Params)
	case rec.Dir == trace.DirOut && m.Method == wire.NotifyCancelled && rq.cancelMS < 0:
		rq.cancelMS = rec.MS
	case rec.Dir == trace.DirIn && m.Method == wire.NotifyProgress:
		if rq.cancelMS >= 0 {
			rq.lateProgress += 1 + rec.Coalesced
		} else {
			rq.progress += 1 + rec.Coalesced
		}
	case rec.Dir == trace.DirIn && m.IsResponse() && rq.cancelMS >= 0 && rq.lateResponse < 0:
		rq.lateResponse = rec.MS - rq.cancelMS
	}
	if rec.Dir == trace.DirIn && m.IsResponse() && rq.endMS < 0 {
		rq.endMS = rec.MS
	}
}

// isFinalState reports the tracker's final states (session.State names).
func isFinalState(s string) bool {
	switch s {
	case "completed", "failed", "input_required", "cancelled", "timed_out", "ended_by_server", "connection_lost":
		return true
	}
	return false
}

func (rq *replayRequest) summary() string {
	var parts []string
	parts = append(parts, fmt.Sprintf("%d progress notification%s", rq.progress, report.Plural(rq.progress)))
	if rq.cancelMS >= 0 {
		c := "cancel at " + fmtMsFloat(rq.cancelMS)
		if rq.signal != "" {
			c += " (" + rq.signal + ")"
		}
		parts = append(parts, c)
		if rq.lateResponse >= 0 {
			parts = append(parts, "LATE RESPONSE "+fmtMsFloat(rq.lateResponse)+" after the cancel")
		} else {
			parts = append(parts, "no response after the cancel")
		}
		if rq.lateProgress > 0 {
			parts = append(parts, fmt.Sprintf("%d PROGRESS after the cancel", rq.lateProgress))
		}
	}
	if rq.cancelAfterEnd {
		parts = append(parts, "a cancel went out after the request had ended")
	}
	if rq.violations > 0 {
		parts = append(parts, fmt.Sprintf("%d VIOLATION%s", rq.violations, report.Plural(rq.violations)))
	}
	if len(rq.findings) > 0 {
		parts = append(parts, "findings: "+strings.Join(rq.findings, ", "))
	}
	return strings.Join(parts, "; ")
}

// printReplayTable prints lines as "ms  dir  what". For a request, lines
// after its cancel are marked.
func printReplayTable(w io.Writer, lines []*trace.Record, rq *replayRequest) {
	fmt.Fprintf(w, "  %10s  %-5s  %s\n", "ms", "dir", "what")
	hidden := progressRuns(lines, rq != nil)
	cancelMS := -1.0
	for i, rec := range lines {
		if n, ok := hidden[i]; ok {
			if n > 0 {
				writeLine(w, "  %10s  %-5s  … %d more progress notifications", "", "in", n)
			}
			continue
		}
		what := describeRecord(rec)
		if rq != nil && rec.State == "cancel_requested" && cancelMS < 0 {
			cancelMS = rec.MS
		}
		if rq != nil && cancelMS >= 0 && rec.Dir == trace.DirIn {
			if m, ok := rec.Message(); ok && (m.IsResponse() || m.Method == wire.NotifyProgress) {
				what += fmt.Sprintf("  ← %s after the cancel", fmtMsFloat(rec.MS-cancelMS))
			}
		}
		if rq != nil && cancelMS < 0 && (rec.Event == trace.EventCancelSent || isCancelOut(rec)) {
			cancelMS = rec.MS
		}
		// The direction is sanitised before it is padded, so that the
		// column stays aligned whatever a crafted file puts there.
		writeLine(w, "  %10.3f  %-5s  %s", rec.MS, termsafe.Line(rec.Dir), what)
	}
}

// A long run of ordinary progress (a flood) is shown by its first and last
// few lines and a count: thousands of alike lines would bury the rest.
const (
	progressRunHead = 5
	progressRunTail = 3
)

// progressRuns finds the lines of a request's table to leave out: the
// middle of every run of timely progress notifications (before any cancel,
// with no violation) longer than head and tail together. The first line
// left out of a run maps to the run's hidden count, the others to 0.
func progressRuns(lines []*trace.Record, request bool) map[int]int {
	hidden := map[int]int{}
	if !request {
		return hidden
	}
	plain := func(rec *trace.Record) bool {
		m, ok := rec.Message()
		return ok && rec.Dir == trace.DirIn && m.Method == wire.NotifyProgress && rec.Violation == "" && rec.Coalesced == 0
	}
	for i := 0; i < len(lines); {
		if lines[i].State == "cancel_requested" || lines[i].Event == trace.EventCancelSent || isCancelOut(lines[i]) {
			break // from the cancel on, every line is evidence
		}
		if !plain(lines[i]) {
			i++
			continue
		}
		j := i
		for j < len(lines) && plain(lines[j]) {
			j++
		}
		if n := j - i - progressRunHead - progressRunTail; n > 1 {
			first := i + progressRunHead
			hidden[first] = n
			for k := first + 1; k < first+n; k++ {
				hidden[k] = 0
			}
		}
		i = j
	}
	return hidden
}

// describeRecord says what one line is, in a few words. The caller
// sanitises the whole line (writeLine); text quoted with %q is sanitised
// before quoting, so that its hazards show as the same placeholders as
// everywhere else rather than as Go escapes.
func describeRecord(rec *trace.Record) string {
	if m, ok := rec.Message(); ok {
		return describeMessage(rec, m)
	}
	var s string
	switch rec.Event {
	case trace.EventState:
		s = "state " + rec.State
		if rec.Reason != "" {
			s += fmt.Sprintf(" (%q)", safeLine(rec.Reason))
		}
		if rec.Error != "" {
			s += ": " + rec.Error
		}
		return s
	case trace.EventCancelSent:
		s = "cancel signal: " + rec.Signal
		if rec.Signal == "stream_closed" {
			s += " (inflight closed the request's response stream; nothing is sent)"
		}
	case trace.EventStreamOpened:
		s = fmt.Sprintf("stream opened (HTTP %d %s)", rec.Status, rec.ContentType)
	case trace.EventStreamClosed:
		s = "stream closed by the server"
		if rec.ByClient {
			s = "stream closed by inflight"
		}
	case trace.EventHTTPStatus:
		s = "HTTP"
		if rec.Status != 0 {
			s += fmt.Sprintf(" %d", rec.Status)
		}
	case trace.EventRequestFailed:
		s = "request failed"
		if rec.Lost {
			s += " (lost)"
		}
	case trace.EventViolation:
		s = "VIOLATION " + rec.Code
	case trace.EventFinding:
		s = "check " + rec.CheckStatus + " " + rec.Code
	case trace.EventConnected:
		s = fmt.Sprintf("connected: %s, %s era, protocol %s, %s", rec.Transport, rec.Era, rec.ProtocolVersion, rec.Server)
		if rec.SessionID != "" {
			s += ", session " + rec.SessionID
		}
	case trace.EventTransportClosed:
		s = "connection closed"
	case trace.EventMalformed:
		s = "MALFORMED " + quoteClip(rec.Raw, 120)
	default:
		s = rec.Event
		if rec.Raw != "" {
			s += " " + quoteClip(rec.Raw, 120)
		}
	}
	if rec.Reason != "" {
		s += fmt.Sprintf(" reason %q", safeLine(rec.Reason))
	}
	if rec.Text != "" {
		s += ": " + clipText(rec.Text, 200)
	}
	if rec.Error != "" {
		s += ": " + clipText(rec.Error, 200)
	}
	if rec.Violation != "" {
		s += "  [VIOLATION " + rec.Violation + "]"
	}
	return s
}

// describeMessage is describeRecord for a line with a message.
func describeMessage(rec *trace.Record, m wire.Message) string {
	var s string
	switch m.Kind {
	case wire.KindRequest:
		s = m.Method
		if t := wire.Target(m.Method, m.Params); t != "" {
			s += " " + t
		}
		if args := briefParams(m.Params); args != "" {
			s += " " + args
		}
		if rec.Dir == trace.DirIn {
			s = "server request " + s
		}
	case wire.KindNotification:
		switch m.Method {
		case wire.NotifyProgress:
			if p, err := wire.DecodeProgress(m.Params); err == nil {
				s = "progress " + report.Progress(p.Progress, p.Total)
				if p.Message != "" {
					s += fmt.Sprintf(" %q", safeLine(clipText(p.Message, 80)))
				}
				if rec.Coalesced > 0 {
					s = fmt.Sprintf("%d progress notifications merged by the log, until +%.0fms; the latest: %s",
						rec.Coalesced+1, rec.LastMS, s)
				}
				break
			}
			s = "progress (unreadable)"
		case wire.NotifyCancelled:
			s = m.Method
			if c, err := wire.DecodeCancelled(m.Params); err == nil {
				s += " " + c.RequestID.String()
				if c.Reason != "" {
					s += fmt.Sprintf(" %q", safeLine(clipText(c.Reason, 80)))
				}
			} else {
				s += " (malformed)"
			}
			if rec.Dir == trace.DirIn {
				s += " FROM THE SERVER"
			}
		default:
			s = m.Method
		}
	case wire.KindResult:
		s = "result " + briefResult(m.Result)
	case wire.KindError:
		s = fmt.Sprintf("error %d %q", m.Error.Code, safeLine(clipText(m.Error.Message, 120)))
	}
	if rec.Text != "" {
		s += " (" + rec.Text + ")"
	}
	if rec.Violation != "" {
		s += "  [VIOLATION " + rec.Violation + "]"
	}
	return s
}

// briefParams shows a request's params without _meta, clipped.
func briefParams(params json.RawMessage) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(params, &m) != nil {
		return ""
	}
	delete(m, "_meta")
	delete(m, "name")
	if len(m) == 0 {
		return ""
	}
	b, _ := json.Marshal(m)
	return clipText(string(b), 100)
}

// briefResult shows the gist of a result: a tool result's first text, or
// the compact JSON, clipped.
func briefResult(result json.RawMessage) string {
	var r struct {
		IsError bool `json:"isError"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	if json.Unmarshal(result, &r) == nil && len(r.Content) > 0 && r.Content[0].Type == "text" {
		s := fmt.Sprintf("%q", safeLine(clipText(r.Content[0].Text, 100)))
		if r.IsError {
			s = "(tool error) " + s
		}
		return s
	}
	var buf bytes.Buffer
	if json.Compact(&buf, result) != nil {
		return ""
	}
	return clipText(buf.String(), 100)
}

func safeLine(s string) string { return termsafe.Line(s) }

func quoteClip(s string, n int) string { return fmt.Sprintf("%q", safeLine(clipText(s, n))) }

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

func fmtMsFloat(ms float64) string {
	d := time.Duration(ms * float64(time.Millisecond))
	if d < time.Second {
		return fmt.Sprintf("%.1fms", ms)
	}
	return fmt.Sprintf("%.2fs", d.Seconds())
}
