package logview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"charm.land/lipgloss/v2"

	"inflight/event"
	"inflight/msgtext"
	"inflight/session"
	"inflight/ui/look"
	"inflight/ui/screen"
	"inflight/wire"
)

// logRow is what a log row shows, as plain text: the filter matches it,
// and logLine styles it.
type logRow struct {
	time, dir, what, id, msg string
	// mark is the tracker's verdict in words ("⚑ late +0.3s", "crossed
	// the cancel +1ms"), "" when there is none.
	mark string
}

// rowOf is what entry e's row shows.
func rowOf(env screen.Env, e session.LogEntry) logRow {
	what, msg := describeEntry(e)
	if e.Status != 0 {
		msg = fmt.Sprintf("HTTP %d %s", e.Status, msg)
	}
	row := logRow{time: e.Time.Format("15:04:05.000"), what: env.Line(what), id: env.Line(logID(e.ID)), msg: env.Line(msg)}
	switch Direction(e) {
	case session.DirOut:
		row.dir = "→ out"
	case session.DirIn:
		row.dir = "← in "
	default:
		row.dir = "· loc"
	}
	switch e.Verdict {
	case session.VerdictLate:
		row.mark = "⚑ late " + look.Ago(e.AfterCancel)
	case session.VerdictCrossed:
		row.mark = "crossed the cancel " + look.Ago(e.AfterCancel)
	}
	return row
}

// entryMatches reports whether entry e matches needle (lower case): its
// row as shown, or its bytes.
func entryMatches(env screen.Env, e session.LogEntry, needle string) bool {
	r := rowOf(env, e)
	for _, s := range []string{r.time, r.dir, r.what, r.id, r.msg, r.mark, e.Violation} {
		if strings.Contains(strings.ToLower(s), needle) {
			return true
		}
	}
	return bytes.Contains(bytes.ToLower(e.Raw), []byte(needle))
}

// logLine is entry e's row, width wide, with the WHAT and ID columns
// whatW and idW wide.
func logLine(env screen.Env, e session.LogEntry, width, whatW, idW int) string {
	st := env.Styles
	r := rowOf(env, e)
	var dir string
	switch Direction(e) {
	case session.DirOut:
		dir = st.Out.Render(r.dir)
	case session.DirIn:
		dir = st.In.Render(r.dir)
	default:
		dir = st.Local.Render(r.dir)
	}
	whatCell := look.Fit(r.what, whatW)
	msg := r.msg
	switch {
	case e.Violation != "":
		// The violation takes the WHAT column, so the message keeps its room
		// (for a rejected line the message is why it was rejected); a
		// verdict then leads the message.
		whatCell = st.Flag.Render(look.Fit("⚠ "+env.Line(e.Violation), whatW))
		if r.mark != "" {
			msg = r.mark + " · " + msg
		}
	case r.mark != "":
		// The verdict takes the WHAT column as a violation does: the
		// message says what it was (progress, result, error), and the
		// mark is never the part cut off.
		mark := r.mark
		if lipgloss.Width(mark) > whatW {
			mark = strings.TrimSuffix(mark, " "+look.Ago(e.AfterCancel))
		}
		style := st.Flag
		if e.Verdict == session.VerdictCrossed {
			style = st.Dim
		}
		whatCell = style.Render(look.Fit(mark, whatW))
	}
	return look.Fit(fmt.Sprintf("  %s  %s  %s %s  %s", r.time, dir, whatCell, look.FitLeft(r.id, idW), msg), width)
}

// logColumns sizes the WHAT and ID columns: the message gets the rest, and
// it is often the part that explains (why a line was rejected).
func logColumns(width int) (what, id int) {
	switch {
	case width >= 140:
		return 30, 6
	case width >= 100:
		return 27, 3
	}
	return 22, 3
}

// Direction is the direction the log draws an entry with: as the trace
// records it, except that a cancel event is inflight's own note (the
// notifications/cancelled or tasks/cancel it sent is a → out row of its
// own, and a closed stream sends nothing), so it is drawn local.
func Direction(e session.LogEntry) session.Direction {
	if e.Kind == event.CancelSent {
		return session.DirLocal
	}
	return e.Dir
}

// logID is an ID as the log shows it: the client's own housekeeping IDs
// ("inflight-3") are shortened to i3 so they do not crowd the message.
func logID(id wire.ID) string {
	if id.IsZero() {
		return ""
	}
	if s := id.Raw(); strings.HasPrefix(s, `"inflight-`) {
		return "i" + strings.TrimSuffix(strings.TrimPrefix(s, `"inflight-`), `"`)
	}
	return id.String()
}

// describeEntry says what a log entry is and what it carried: a message
// in msgtext's words (as replay words it), its bytes being the entry
// view's business.
func describeEntry(e session.LogEntry) (what, msg string) {
	if e.IsState {
		return "state", look.StateLookOf(e.From).Word + " → " + look.StateLookOf(e.State).Word
	}
	what, msg = e.Method, e.Text
	switch e.Kind {
	case event.Sent, event.Received:
		what, msg = describeMessage(e)
	case event.Malformed:
		// Why it was rejected first: the raw bytes are often just noise.
		what, msg = "malformed", e.Text+" · "+msgtext.Clip(string(e.Raw), 200)
	case event.CancelSent:
		// inflight noting its cancel: the signal's own message, if it has
		// one, is the → out row before this one.
		what, msg = "cancel", look.SignalText(e.Signal)
		if e.Text != "" && e.Signal != event.SignalNotification {
			// notifications/cancelled carries the reason, on its own row;
			// a closed stream or tasks/cancel does not.
			msg += " · " + msgtext.Quote(e.Text, 80)
		}
	case event.RoundTrip:
		// The client's own timed request: one sample of the round trip the
		// crossing window is judged by.
		what, msg = "round trip", look.FineDur(e.RTT)
		if e.Text != "" {
			msg += " for " + e.Text // the value first: it is what is cut last
		}
	case event.StreamClosed:
		what = "stream closed"
		if e.ByClient {
			what += " by inflight"
		}
	default:
		what = strings.ReplaceAll(e.Kind.String(), "_", " ")
	}
	return what, msg
}

// describeMessage is describeEntry for a message sent or received.
func describeMessage(e session.LogEntry) (what, msg string) {
	what = e.Method
	switch e.MsgKind {
	case wire.KindResult, wire.KindError:
		if what == "" {
			what = e.MsgKind.String()
		}
	case wire.KindInvalid:
		what = e.Kind.String()
	}
	msg = msgtext.Raw(e.Raw, e.Method)
	if e.Truncated > 0 && len(e.Raw) > 0 && !json.Valid(e.Raw) {
		// Cut bytes are no message: say so rather than show a stub.
		msg = fmt.Sprintf("(%d bytes, %d of them not kept) %s", len(e.Raw)+e.Truncated, e.Truncated, msgtext.Clip(string(e.Raw), 80))
	}
	if e.Coalesced > 0 {
		what = fmt.Sprintf("progress ×%d", e.Coalesced+1)
		msg = fmt.Sprintf("merged, until %s; latest: %s", e.LastTime.Format("15:04:05.000"), msg)
	}
	return what, msg
}
