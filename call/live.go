package call

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/term"

	"inflight/event"
	"inflight/redact"
	"inflight/report"
	"inflight/session"
	"inflight/target"
	"inflight/termsafe"
)

// Progress output is throttled: a server may send thousands of
// notifications a second (the demo's flood), and a terminal cannot show
// them anyway. The counts in the summary stay exact.
const (
	barInterval  = 100 * time.Millisecond
	lineInterval = 100 * time.Millisecond
	barWidth     = 24
)

// liveView prints a run as it happens. A nil writer prints nothing.
type liveView struct {
	w   io.Writer
	bar bool
	red *redact.Redactor

	// barShown: a bar is on the current line and must be cleared before
	// any other line is printed.
	barShown bool
	lastDraw time.Time
	// pending is a progress update not drawn yet because of the throttle.
	pending *session.Request
	pendAt  time.Time
	// columns is the terminal's width (0 when unknown), read at every
	// draw so that a resize is followed.
	columns func() int
}

func newLiveView(w io.Writer, bar bool, red *redact.Redactor) *liveView {
	return &liveView{w: w, bar: bar, red: red, columns: func() int { return terminalColumns(w) }}
}

// terminalColumns is the width of the terminal w writes to, 0 if none.
func terminalColumns(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok {
		return 0
	}
	cols, _, err := term.GetSize(f.Fd())
	if err != nil {
		return 0
	}
	return cols
}

func (v *liveView) safe(s string) string { return termsafe.Line(v.red.String(s)) }

// line prints one line of narrative, keeping the bar below it.
func (v *liveView) line(format string, args ...any) {
	if v.w == nil {
		return
	}
	v.clearBar()
	fmt.Fprintf(v.w, format+"\n", args...)
}

func (v *liveView) clearBar() {
	if v.barShown {
		// Carriage return and erase-line: our own control sequence, never
		// server text.
		fmt.Fprint(v.w, "\r\x1b[K")
		v.barShown = false
	}
}

func (v *liveView) note(s string) { v.line("  %s", v.safe(s)) }

func (v *liveView) connected(t target.Target, info event.ConnInfo) {
	v.line("%s", report.ConnectedLine(t, info, v.red))
}

func (v *liveView) sent(r *session.Request) {
	what := r.Method
	if r.Target != "" {
		what += " " + v.safe(r.Target)
	}
	v.line("→ #%s %s", r.ID, what)
}

// progress shows the request's latest progress, throttled.
func (v *liveView) progress(r *session.Request, at time.Time) {
	if v.w == nil {
		return
	}
	interval := lineInterval
	if v.bar {
		interval = barInterval
	}
	if !v.lastDraw.IsZero() && at.Sub(v.lastDraw) < interval {
		v.pending, v.pendAt = r, at
		return
	}
	v.drawProgress(r, at)
}

func (v *liveView) drawProgress(r *session.Request, at time.Time) {
	v.pending = nil
	v.lastDraw = at
	p := r.Progress
	elapsed := at.Sub(r.Created).Round(100 * time.Millisecond)
	msg := ""
	if p.Message != "" {
		msg = "  " + v.safe(p.Message)
	}
	var total *float64
	if p.HasTotal {
		total = &p.Total
	}
	if !v.bar {
		v.line("  progress %s%s  [%s]", report.Progress(p.Value, total), msg, elapsed)
		return
	}
	// The numbers are the server's: report.Progress and termsafe.Percent
	// keep 1e308 (or a total of 1e-300) to a few columns.
	fill := "[" + strings.Repeat("?", barWidth) + "]"
	if pct, frac, ok := termsafe.Percent(p.Value, p.Total); p.HasTotal && ok {
		n := int(frac * barWidth)
		fill = fmt.Sprintf("[%s%s] %4s", strings.Repeat("#", n), strings.Repeat("-", barWidth-n), pct)
	}
	line := fmt.Sprintf("%s %s%s  %s", fill, report.Progress(p.Value, total), msg, elapsed)
	if cols := v.columns(); cols > 1 {
		// A bar that wraps leaves its first line behind at every redraw:
		// it must fit on one line, with the cursor's column to spare.
		line = ansi.Truncate(line, cols-1, "…")
	}
	v.clearBar()
	fmt.Fprint(v.w, line)
	v.barShown = true
}

// flush draws a progress update the throttle held back.
func (v *liveView) flush() {
	if v.pending != nil {
		v.drawProgress(v.pending, v.pendAt)
	}
}

func (v *liveView) cancelRequested(r *session.Request) {
	v.flush()
	c := r.Cancel
	why := c.Cause.String()
	if c.Cause == session.CauseTimeout {
		why = fmt.Sprintf("timeout (%s limit)", c.Limit)
	}
	v.line("✕ cancel requested after %s: %s; reason %q", c.At.Sub(r.Created).Round(time.Millisecond), why, v.safe(c.Reason))
}

func (v *liveView) cancelSent(r *session.Request) {
	c := r.Cancel
	switch c.Signal {
	case event.SignalStreamClosed:
		v.line("  closed the request's response stream (the cancel signal on modern Streamable HTTP; nothing is sent)")
	default:
		v.line("  sent %s", c.Signal)
	}
}

func (v *liveView) lateProgress(r *session.Request, ev event.Event) {
	v.flush()
	if r.Cancel == nil {
		v.line("! late progress #%d, %s after the request ended (ignored)", r.Late.ProgressAfterCancel,
			report.After(ev.Time.Sub(r.Ended)))
		return
	}
	v.line("! late progress #%d, %s after the cancel (ignored)", r.Late.ProgressAfterCancel,
		report.After(ev.Time.Sub(r.Cancel.At)))
}

// crossedProgress shows the first progress that crossed the cancel in
// flight; the report counts the rest.
func (v *liveView) crossedProgress(r *session.Request, ev event.Event) {
	if r.Late.ProgressCrossed != 1 || r.Cancel == nil {
		return
	}
	v.flush()
	v.line("  progress crossed the cancel in flight, %s after it (it may have been sent before the server saw the cancel; ignored)",
		report.After(ev.Time.Sub(r.Cancel.At)))
}

func (v *liveView) lateResponse(r *session.Request) {
	how := "LATE RESPONSE"
	if r.Late.Crossed {
		how = "a response that crossed the cancel"
	}
	v.line("! %s arrived %s after the cancel (ignored: the request stays %s)", how,
		report.After(r.Late.AfterCancel), settledName(r))
}

// settledName is the state a cancel_requested request ends in.
func settledName(r *session.Request) string {
	if r.State.IsFinal() {
		return r.State.String()
	}
	if r.Cancel != nil && r.Cancel.Cause == session.CauseTimeout {
		return session.StateTimedOut.String()
	}
	return session.StateCancelled.String()
}

// finish draws what the throttle held back and ends the bar's line.
func (v *liveView) finish() {
	if v.w == nil {
		return
	}
	v.flush()
	if v.barShown {
		fmt.Fprintln(v.w)
		v.barShown = false
	}
}
