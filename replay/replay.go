// Package replay is `inflight replay`: a trace file (package trace) read
// back and printed as a time-ordered table of what happened to each
// request, then to the connection.
package replay

import (
	"container/heap"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"inflight/event"
	"inflight/exitcode"
	"inflight/msgtext"
	"inflight/report"
	"inflight/session"
	"inflight/termsafe"
	"inflight/trace"
	"inflight/wire"
)

// Options configure File and Reader.
type Options struct {
	// All shows the client's own housekeeping too (era probe, initialize,
	// answers to server pings), which is hidden by default.
	All bool
	// Stop, once closed, ends the replay where it is (exit 4): its output
	// is no longer read (`inflight replay big.jsonl | head`) or it was
	// interrupted, and reading the rest of a huge file would be for no one.
	Stop <-chan struct{}
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
//
// The trace is read one record at a time and never held whole: a trace can
// be gigabytes (a million progress notifications, a server's stderr
// flood). Each request keeps only what its table prints — a flood of
// progress its first and last lines and a count — and every table is
// bounded, so memory stays flat however long the file is.
func Reader(r io.Reader, name string, o Options, stdout, stderr io.Writer) int {
	rp := newReplay(o)
	tr := trace.NewReader(r)
	bad := 0
	ord := newReorder(rp.add)
	for {
		rec, err := tr.Next()
		var le *trace.LineError
		switch {
		case err == nil:
			ord.push(rec)
			if tr.Line()%stopEvery == 0 && stopped(o.Stop) {
				fmt.Fprintf(stderr, "inflight replay: %s: stopped after %d lines\n", name, tr.Line())
				return exitcode.Cancelled
			}
			continue
		case errors.As(err, &le):
			if bad < maxSkipWarnings {
				fmt.Fprintf(stderr, "inflight replay: %s: skipped %s\n", name, termsafe.Line(le.Error()))
			}
			bad++
			continue
		case errors.Is(err, io.EOF):
		default:
			warnSkipped(stderr, name, bad)
			fmt.Fprintf(stderr, "inflight replay: %s: %s\n", name, termsafe.Line(err.Error()))
			return exitcode.Usage
		}
		break
	}
	ord.drain()
	warnSkipped(stderr, name, bad)
	if rp.records == 0 {
		why := "it is empty"
		if bad > 0 {
			why = "none of its lines is a trace record"
		}
		fmt.Fprintf(stderr, "inflight replay: %s is not an inflight trace: %s\n", name, why)
		return exitcode.Usage
	}
	rp.print(stdout, name)
	return 0
}

// stopEvery is how many lines replay reads between looks at Options.Stop.
const stopEvery = 4096

func stopped(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

func warnSkipped(stderr io.Writer, name string, bad int) {
	if bad > maxSkipWarnings {
		fmt.Fprintf(stderr, "inflight replay: %s: skipped %d more lines that are not trace records\n", name, bad-maxSkipWarnings)
	}
}

// maxSkipWarnings bounds the lines replay names as skipped: a file that is
// no trace at all would otherwise flood the terminal.
const maxSkipWarnings = 10

// Lines are written in the order events were applied, which can differ
// slightly from the order they happened in (a state line carries the time
// the request ended); the tables are by time. A window of the latest
// records is kept sorted and the earliest handed on once the window is
// full: the order of a stable sort, for records at most reorderWindow
// lines (or reorderBytes of messages) out of place, which is far more than
// a trace's own slack.
const (
	reorderWindow = 1024
	reorderBytes  = 16 << 20
)

// reorder hands records on in time order, through a bounded window.
type reorder struct {
	h     recordHeap
	seq   int
	bytes int
	out   func(rec *trace.Record)
}

func newReorder(out func(rec *trace.Record)) *reorder { return &reorder{out: out} }

func (o *reorder) push(rec trace.Record) {
	heap.Push(&o.h, &heldRecord{rec: rec, seq: o.seq})
	o.seq++
	o.bytes += len(rec.Msg) + len(rec.Raw) + len(rec.Text)
	for len(o.h) > reorderWindow || o.bytes > reorderBytes && len(o.h) > 1 {
		o.pop()
	}
}

func (o *reorder) pop() {
	held := heap.Pop(&o.h).(*heldRecord)
	o.bytes -= len(held.rec.Msg) + len(held.rec.Raw) + len(held.rec.Text)
	o.out(&held.rec)
}

func (o *reorder) drain() {
	for len(o.h) > 0 {
		o.pop()
	}
}

type heldRecord struct {
	rec trace.Record
	seq int
}

// recordHeap orders records by time, then by their place in the file.
type recordHeap []*heldRecord

func (h recordHeap) Len() int { return len(h) }
func (h recordHeap) Less(i, j int) bool {
	if h[i].rec.MS != h[j].rec.MS {
		return h[i].rec.MS < h[j].rec.MS
	}
	return h[i].seq < h[j].seq
}
func (h recordHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *recordHeap) Push(x any)   { *h = append(*h, x.(*heldRecord)) }
func (h *recordHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return x
}

// replay gathers what the tables print, one record at a time.
type replay struct {
	o       Options
	records int
	span    float64
	conn    *connLine
	order   []*replayRequest
	byID    map[wire.ID]*replayRequest
	other   *table
	// children and taskOwner route a task's own requests and its status
	// notifications to the request it continues (task.go).
	children  map[wire.ID]*taskChild
	taskOwner map[string]wire.ID
	// rounds sends a multi round-trip request's later rounds to its first
	// round's table: one conversation, one section.
	rounds map[wire.ID]wire.ID
	// judged: the trace carries the tracker's verdicts (a round trip was
	// timed, or a verdict seen), so a message after a cancel without one
	// was timely.
	judged bool
}

// connLine is what the heading says of the connection: its first
// connected line.
type connLine struct{ transport, era, protocol, server string }

// maxRequests bounds the requests given a section of their own: a server
// answering a million IDs inflight never sent would otherwise make a
// million sections. Lines of further requests go with the connection's.
const maxRequests = 10_000

func newReplay(o Options) *replay {
	return &replay{o: o, byID: map[wire.ID]*replayRequest{}, other: newTable(false)}
}

func (rp *replay) add(rec *trace.Record) {
	rp.records++
	if rec.Event == event.RoundTrip.String() || rec.Verdict != "" {
		rp.judged = true
	}
	rp.span = max(rp.span, rec.MS)
	if rec.Event == trace.EventConnected && rp.conn == nil {
		rp.conn = &connLine{rec.Transport, rec.Era, rec.ProtocolVersion, rec.Server}
	}
	if rec.Internal && !rp.o.All && !isCancelOut(rec) {
		return
	}
	if rp.routeTask(rec) {
		return
	}
	id, ok := rec.RequestID()
	if !ok || rec.Internal && !isCancelOut(rec) {
		rp.other.add(rec)
		return
	}
	if rec.Conversation != nil {
		if rp.rounds == nil {
			rp.rounds = map[wire.ID]wire.ID{}
		}
		rp.rounds[id] = *rec.Conversation
	}
	if first, ok := rp.rounds[id]; ok {
		id = first
	}
	rq := rp.byID[id]
	if rq == nil && (!opensRequest(rec) || len(rp.order) >= maxRequests) {
		// A cancel for an ID inflight never sent (the check battery
		// does that on purpose) is connection-level news.
		rp.other.add(rec)
		return
	}
	if rq == nil {
		rq = &replayRequest{id: id, startMS: rec.MS, cancelMS: -1, endMS: -1, fateMS: -1, lateResponse: -1, table: newTable(true)}
		rp.byID[id] = rq
		rp.order = append(rp.order, rq)
	}
	rq.judged = rp.judged
	rq.add(rec)
	rp.noteHandle(rec, id)
}

func (rp *replay) print(w io.Writer, name string) {
	writeLine(w, "trace %s: %d line%s over %s, %d request%s", name, rp.records, report.Plural(rp.records), termsafe.Millis(rp.span),
		len(rp.order), report.Plural(len(rp.order)))
	if c := rp.conn; c != nil {
		server := c.server
		if server == "" {
			server = "unnamed server"
		}
		writeLine(w, "connection: %s, %s era, protocol %s, %s", c.transport, c.era, c.protocol, server)
	}
	for _, rq := range rp.order {
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
		rq.table.print(w)
		writeLine(w, "  %s", rq.summary())
	}
	if len(rp.other.rows) > 0 || rp.other.pending() {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "connection and server")
		rp.other.print(w)
	}
}

// replayRequest gathers the lines of one request.
type replayRequest struct {
	id       wire.ID
	method   string
	target   string
	state    string
	table    *table
	startMS  float64 // the request's first line
	cancelMS float64 // -1 until a cancel was requested
	endMS    float64 // -1 until the request ended (answered, or a final state)
	// fateMS is when the request reached its final state (-1: it had not
	// by the end of the trace): elapsed runs from startMS to it, as the TUI
	// and call count it.
	fateMS float64
	signal string
	// cancelAfterEnd: a cancel went out after the request had ended (the
	// check battery's cancel of a finished request).
	cancelAfterEnd bool
	// Counts after the cancel. A trace inflight wrote carries the
	// tracker's verdict on each message after a cancel ("late",
	// "crossed"): replay counts those, and judges nothing itself. An older
	// trace without verdicts counts everything after the cancel as late.
	lateProgress    int
	crossedProgress int
	lateResponse    float64 // ms after the cancel, -1 when none
	// taskID, polls and taskStatus: the request's task, if it became one.
	taskID          string
	polls           int
	taskStatus      string
	crossedResponse bool
	judged          bool // see replay.judged
	progress        int
	violations      int // the server's (and inflight's own): protocol violations
	hostFindings    int // a proxy's findings of the host (session.IsHostFinding)
	findings        []string
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
	rq.table.add(rec)
	if rec.Method != "" && rq.method == "" {
		rq.method, rq.target = rec.Method, rec.Target
	}
	if rec.State == "waiting_input" {
		// A round answered input_required: the request goes on.
		rq.endMS = -1
	}
	if rec.State != "" {
		rq.state = rec.State
		if rec.State == "cancel_requested" && rq.cancelMS < 0 {
			rq.cancelMS = rec.MS
		}
		if isFinalState(rec.State) && rq.endMS < 0 {
			rq.endMS = rec.MS
		}
		if isFinalState(rec.State) && rq.fateMS < 0 {
			rq.fateMS = rec.MS
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
		if session.IsHostFinding(rec.Code) {
			rq.hostFindings++
		} else {
			rq.violations++
		}
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
		switch {
		case rec.Verdict == "crossed":
			rq.crossedProgress += 1 + rec.Coalesced
		case rec.Verdict == "late", rq.cancelMS >= 0 && !rq.judged:
			rq.lateProgress += 1 + rec.Coalesced
		default:
			rq.progress += 1 + rec.Coalesced
		}
	case rec.Dir == trace.DirIn && m.IsResponse() && rq.cancelMS >= 0 && rq.lateResponse < 0:
		switch {
		case rec.Verdict == "crossed":
			rq.crossedResponse = true
			rq.lateResponse = rec.MS - rq.cancelMS
		case rec.Verdict == "late" || !rq.judged:
			rq.lateResponse = rec.MS - rq.cancelMS
		}
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
	if rq.fateMS >= 0 {
		// Elapsed means one thing everywhere: from the request's start
		// until its fate was known (its final state), the late window
		// after a cancel included.
		parts = append(parts, "elapsed "+termsafe.Millis(rq.fateMS-rq.startMS)+" until "+strings.ReplaceAll(rq.state, "_", " "))
	}
	parts = append(parts, fmt.Sprintf("%d progress notification%s", rq.progress, report.Plural(rq.progress)))
	if rq.cancelMS >= 0 {
		// From the request's start, as the TUI and call say it; the
		// trace's own clock in brackets, to find the line.
		c := "cancel at +" + termsafe.Millis(rq.cancelMS-rq.startMS) + " (" + termsafe.Millis(rq.cancelMS) + " into the trace)"
		if rq.signal != "" {
			c += " (" + rq.signal + ")"
		}
		parts = append(parts, c)
		switch {
		case rq.lateResponse >= 0 && rq.crossedResponse:
			parts = append(parts, "a response crossed the cancel in flight ("+termsafe.Millis(rq.lateResponse)+" after it)")
		case rq.lateResponse >= 0:
			parts = append(parts, "LATE RESPONSE "+termsafe.Millis(rq.lateResponse)+" after the cancel")
		default:
			parts = append(parts, "no response after the cancel")
		}
		if rq.crossedProgress > 0 {
			parts = append(parts, fmt.Sprintf("%d progress crossed the cancel in flight", rq.crossedProgress))
		}
		if rq.lateProgress > 0 {
			parts = append(parts, fmt.Sprintf("%d progress notification%s after the cancel", rq.lateProgress, report.Plural(rq.lateProgress)))
		}
	}
	if rq.taskID != "" {
		t := fmt.Sprintf("task %s: %d poll%s", quoteClip(rq.taskID, 64), rq.polls, report.Plural(rq.polls))
		if rq.taskStatus != "" {
			t += ", last status " + termsafe.Line(clipText(rq.taskStatus, 32))
		}
		parts = append(parts, t)
	}
	if rq.cancelAfterEnd {
		parts = append(parts, "a cancel went out after the request had ended")
	}
	if rq.violations > 0 {
		parts = append(parts, fmt.Sprintf("%d VIOLATION%s", rq.violations, report.Plural(rq.violations)))
	}
	if rq.hostFindings > 0 {
		parts = append(parts, fmt.Sprintf("%d host finding%s", rq.hostFindings, report.Plural(rq.hostFindings)))
	}
	if len(rq.findings) > 0 {
		parts = append(parts, "findings: "+strings.Join(rq.findings, ", "))
	}
	return strings.Join(parts, "; ")
}

// table is the "ms  dir  what" table of a request or of the connection,
// built one record at a time and bounded: a long run of alike lines (a
// flood) keeps its first and last few and a count, and past maxTableRows
// only the last maxTableTail rows are kept, with a count of the rest.
type table struct {
	request bool
	rows    []row
	// cancelMS is the time of the request's cancel as the table marks it:
	// lines from the server after it say how long after.
	cancelMS float64
	// cancelled: from the cancel on, every line is evidence, and runs of
	// progress are cut only past a far larger bound.
	cancelled bool

	run     runKind
	runN    int
	runRows []row // the run's last rows past its head, at most tail+1

	capped    int   // rows left out past maxTableRows
	cappedEnd []row // the last rows past maxTableRows, at most maxTableTail

	// pollRow is the row of the last task poll (-1: none), pollWhat what
	// it said and pollN how many polls in a row said it (task.go).
	pollRow  int
	pollWhat string
	pollN    int
}

// row is one printed line of a table.
type row struct {
	ms   float64
	gap  string // instead of ms and dir: a count of rows left out
	dir  string
	what string
	// rec, until the row is described (a flood's row past its head, which
	// is most often left out).
	rec *trace.Record
}

// runKind is a kind of line a flood is made of.
type runKind uint8

const (
	runNone runKind = iota
	runProgress
	runLateProgress
	runStderr
)

// A long run of alike lines (a flood) is shown by its first and last few
// lines and a count: thousands of alike lines would bury the rest. After
// a cancel, progress is evidence, and only a flood of it is cut.
const (
	progressRunHead = 5
	progressRunTail = 3
	lateRunHead     = 20
	lateRunTail     = 5
	maxTableRows    = 2000
	maxTableTail    = 200
)

func newTable(request bool) *table { return &table{request: request, cancelMS: -1, pollRow: -1} }

// add puts a record's line in the table.
func (t *table) add(rec *trace.Record) {
	cancelLine := t.request && (rec.State == "cancel_requested" || rec.Event == trace.EventCancelSent || isCancelOut(rec))
	kind := t.kindOf(rec)
	if kind != t.run {
		// Before the cancel is noted: the run's rows were before it.
		t.endRun()
	}
	if cancelLine {
		t.cancelled = true
	}
	if t.request && rec.State == "cancel_requested" && t.cancelMS < 0 {
		t.cancelMS = rec.MS
	}
	var r row
	head, tail := kind.bounds()
	if kind != runNone && t.runN >= head && len(rec.Msg)+len(rec.Raw)+len(rec.Text) <= deferBytes {
		// Most rows of a flood are never printed: describe only those
		// that are.
		c := *rec
		r = row{ms: rec.MS, rec: &c}
	} else {
		r = t.describe(rec)
	}
	if t.request && t.cancelMS < 0 && (rec.Event == trace.EventCancelSent || isCancelOut(rec)) {
		t.cancelMS = rec.MS
	}
	if kind == runNone {
		t.push(r)
		return
	}
	t.run = kind
	t.runN++
	if t.runN <= head {
		t.push(r)
		return
	}
	if len(t.runRows) == tail+1 {
		copy(t.runRows, t.runRows[1:])
		t.runRows = t.runRows[:tail]
	}
	t.runRows = append(t.runRows, r)
}

// deferBytes bounds the record a flood's row keeps to describe it later.
const deferBytes = 64 << 10

// describe is a record's row.
func (t *table) describe(rec *trace.Record) row {
	what := describeRecord(rec)
	if t.request && t.cancelMS >= 0 && rec.Dir == trace.DirIn {
		if m, ok := rec.Message(); ok && (m.IsResponse() || m.Method == wire.NotifyProgress) {
			what += fmt.Sprintf("  ← %s after the cancel", termsafe.Millis(rec.MS-t.cancelMS))
			if rec.Verdict != "" {
				what += ", " + clipText(rec.Verdict, 16)
			}
		}
	}
	// The direction is sanitised before it is padded, so that the column
	// stays aligned whatever a crafted file puts there.
	return row{ms: rec.MS, dir: termsafe.Line(clipText(rec.Dir, 16)), what: what}
}

// kindOf is the kind of flood a record's line can be part of.
func (t *table) kindOf(rec *trace.Record) runKind {
	if !t.request {
		if rec.Event == trace.EventStderr {
			return runStderr
		}
		return runNone
	}
	m, ok := rec.Message()
	if !ok || rec.Dir != trace.DirIn || m.Method != wire.NotifyProgress || rec.Violation != "" || rec.Coalesced != 0 {
		return runNone
	}
	if t.cancelled {
		return runLateProgress
	}
	return runProgress
}

func (k runKind) bounds() (head, tail int) {
	switch k {
	case runLateProgress:
		return lateRunHead, lateRunTail
	}
	return progressRunHead, progressRunTail
}

func (k runKind) gap(n int) string {
	switch k {
	case runStderr:
		return fmt.Sprintf("… %d more stderr lines", n)
	case runLateProgress:
		return fmt.Sprintf("… %d more progress notifications after the cancel", n)
	}
	return fmt.Sprintf("… %d more progress notifications", n)
}

// endRun puts the end of the run being read in the table: its last rows,
// after a count of those left out when that saves more than one line.
func (t *table) endRun() {
	if t.run == runNone {
		return
	}
	head, tail := t.run.bounds()
	if hidden := t.runN - head - tail; hidden > 1 {
		// Progress and stderr both come from the server.
		t.push(row{gap: t.run.gap(hidden), dir: trace.DirIn})
		t.runRows = t.runRows[len(t.runRows)-tail:]
	}
	for _, r := range t.runRows {
		t.push(r)
	}
	t.run, t.runN, t.runRows = runNone, 0, t.runRows[:0]
}

// push adds a row, or past maxTableRows keeps it among the last ones.
func (t *table) push(r row) {
	if r.rec != nil {
		r = t.describe(r.rec)
	}
	if len(t.rows) < maxTableRows {
		t.rows = append(t.rows, r)
		return
	}
	t.capped++
	if len(t.cappedEnd) == maxTableTail {
		copy(t.cappedEnd, t.cappedEnd[1:])
		t.cappedEnd = t.cappedEnd[:maxTableTail-1]
	}
	t.cappedEnd = append(t.cappedEnd, r)
}

// pending reports rows not in t.rows yet (a run being read).
func (t *table) pending() bool { return t.runN > 0 }

func (t *table) print(w io.Writer) {
	t.endRun()
	fmt.Fprintf(w, "  %10s  %-5s  %s\n", "ms", "dir", "what")
	printRow := func(r row) {
		if r.gap != "" {
			writeLine(w, "  %10s  %-5s  %s", "", r.dir, r.gap)
			return
		}
		writeLine(w, "  %10s  %-5s  %s", termsafe.Fixed(r.ms, 3), r.dir, r.what)
	}
	for _, r := range t.rows {
		printRow(r)
	}
	if t.capped > 0 {
		if left := t.capped - len(t.cappedEnd); left > 0 {
			writeLine(w, "  %10s  %-5s  … %d more lines left out (a table shows its first %d and last %d)", "", "", left, maxTableRows, maxTableTail)
		}
		for _, r := range t.cappedEnd {
			printRow(r)
		}
	}
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
		if id, ok := rec.RequestID(); ok && rec.Round > 1 {
			s += fmt.Sprintf(" · round %d, #%s", rec.Round, id)
		}
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
		s = violationLabel(rec.Code)
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
		s += "  [" + violationLabel(rec.Violation) + "]"
	}
	return s
}

// describeMessage is describeRecord for a line with a message, worded by
// msgtext as the TUI's protocol log words it, with what only a trace says
// (who sent it, how many the log merged, the violation) around it.
func describeMessage(rec *trace.Record, m wire.Message) string {
	s := msgtext.Of(m, rec.Method)
	switch {
	case m.Kind == wire.KindRequest && rec.Dir == trace.DirIn:
		s = "server request " + s
	case m.Method == wire.NotifyCancelled && rec.Dir == trace.DirIn:
		s += " FROM THE SERVER"
	case m.Method == wire.NotifyProgress && rec.Coalesced > 0:
		s = fmt.Sprintf("%d progress notifications merged by the log, until +%sms; the latest: %s",
			rec.Coalesced+1, termsafe.Fixed(rec.LastMS, 0), s)
	}
	if rec.Text != "" {
		s += " (" + rec.Text + ")"
	}
	if rec.Violation != "" {
		s += "  [" + violationLabel(rec.Violation) + "]"
	}
	if rec.Injected != "" {
		// A proxy's rule acted on it (held, dropped), or inflight sent it.
		s += "  [injected " + rec.Injected + "]"
	}
	return s
}

// violationLabel names a verdict's code as what it is: a finding of the
// host (what a proxy saw the host do) is no protocol violation of the
// server's, and is labelled and counted apart.
func violationLabel(code string) string {
	if session.IsHostFinding(code) {
		return "host finding " + code
	}
	return "VIOLATION " + code
}

func safeLine(s string) string { return termsafe.Line(s) }

func quoteClip(s string, n int) string { return msgtext.Quote(s, n) }

func clipText(s string, n int) string { return msgtext.Clip(s, n) }
