package detail

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"inflight/event"
	"inflight/session"
	"inflight/ui/look"
	"inflight/ui/screen"
	"inflight/wire"
)

// body is the scrollable part: what the request became (its task, its
// conversation, its log lines), the raw JSON of the request and of the
// response (or the late response), a subscription's updates and the
// violations.
func (m *Model) body(env screen.Env, r *session.Request) string {
	var b strings.Builder
	if r.Task != nil {
		// The task is what the request became: first.
		writeTask(&b, env, r)
		b.WriteString("\n")
	}
	if r.Conv != nil && (len(r.Conv.Rounds) > 0 || len(r.Conv.ServerRequests) > 0) {
		writeConversation(&b, env, r)
		b.WriteString("\n")
	}
	if untied := m.untied(r); untied > 0 || r.Conv != nil && (r.Conv.LogCount > 0 || r.Conv.LogLevel != "") {
		writeLogs(&b, env, r, untied)
		b.WriteString("\n")
	}
	writePayloads(&b, env, r)
	if r.IsListen() {
		m.writeUpdates(&b, env, r)
	}
	if vs := env.Tracker.Violations().ForRequest(r.ID); len(vs) > 0 {
		// The server's violations, then what a proxy found of the host:
		// different parties' faults, under titles of their own.
		writeViolations(&b, env, "VIOLATIONS", "⚠ ", vs, false)
		writeViolations(&b, env, "THE HOST'S FINDINGS", "⚑ ", vs, true)
	}
	return b.String()
}

// writeViolations is a section of the violations vs that are the host's
// findings (host) or the server's, each its code and words.
func writeViolations(b *strings.Builder, env screen.Env, title, mark string, vs []session.Violation, host bool) {
	st := env.Styles
	titled := false
	for _, v := range vs {
		if session.IsHostFinding(v.Code) != host {
			continue
		}
		if !titled {
			b.WriteString("\n")
			b.WriteString(st.Bold.Render(title))
			b.WriteByte('\n')
			titled = true
		}
		b.WriteString(st.Flag.Render(mark+v.Code) + "  " + env.Line(v.Detail) + "\n")
		if len(v.Raw) > 0 {
			b.WriteString(st.Dim.Render("  "+env.Line(string(v.Raw))) + "\n")
		}
	}
}

// writePayloads is the raw JSON of the request and of its response, under
// a title that says what the response was.
func writePayloads(b *strings.Builder, env screen.Env, r *session.Request) {
	st := env.Styles
	section := func(title string) {
		b.WriteString(st.Bold.Render(title))
		b.WriteByte('\n')
	}
	section("REQUEST")
	if raw, ok := env.Tracker.RawRequest(r.ID); ok {
		b.WriteString(look.PrettyJSON(raw, env.Block))
	} else {
		b.WriteString(st.Dim.Render("(no longer in the bounded store)"))
	}
	b.WriteString("\n\n")
	raw, haveResponse := env.Tracker.RawResponse(r.ID)
	switch {
	case r.Task != nil:
		section("RESPONSE (the task handle)")
	case r.Late.Response && r.Late.Crossed:
		section("RESPONSE THAT CROSSED THE CANCEL (sent before the server could see it; " + look.LateFate(r) + ")")
	case r.Late.Response:
		section("LATE RESPONSE (arrived after the cancel; " + look.LateFate(r) + ")")
	case !haveResponse && r.LocalError != "":
		// No response: what inflight saw itself went wrong.
		section("ERROR (seen by inflight; the server sent no response)")
	default:
		section("RESPONSE")
	}
	switch {
	case haveResponse:
		b.WriteString(look.PrettyJSON(raw, env.Block))
	case r.LocalError != "":
		b.WriteString(st.Failed.Render(env.Block(r.LocalError)))
	default:
		b.WriteString(st.Dim.Render("(none)"))
	}
	b.WriteString("\n")
}

// writeUpdates lists a subscription's updates: when each came, and what it
// said, as the protocol log keeps them (the last maxTrailUpdates).
func (m *Model) writeUpdates(b *strings.Builder, env screen.Env, r *session.Request) {
	st := env.Styles
	tr := &m.trail
	if tr.id != r.ID {
		return
	}
	b.WriteString("\n")
	head := fmt.Sprintf("UPDATES (%d received", r.Notifications)
	if n := r.Late.NotificationsAfterCancel + r.Late.NotificationsCrossed; n > 0 {
		head += fmt.Sprintf(", %d after the cancel", n)
	}
	if shown := len(tr.updates); shown < tr.updatesSeen || tr.updatesSeen < r.Notifications {
		head += fmt.Sprintf("; the last %d the log keeps", shown)
	}
	b.WriteString(st.Bold.Render(head+")") + "\n")
	if len(tr.updates) == 0 {
		b.WriteString(st.Dim.Render("("+noneYet(r)+")") + "\n")
		return
	}
	for _, u := range tr.updates {
		line := fmt.Sprintf("%-8s %s  %s", look.Ago(u.at.Sub(startOf(r))), u.at.Format("15:04:05.000"), env.Line(u.text))
		switch u.verdict {
		case session.VerdictLate:
			line = st.Flag.Render("⚑ late "+look.Ago(u.after)) + "  " + line
		case session.VerdictCrossed:
			line = st.Dim.Render("crossed the cancel "+look.Ago(u.after)) + "  " + line
		}
		b.WriteString(line + "\n")
	}
}

// writeTask is the body's TASK section: every status change, where it
// came from, the cancel and its acknowledgement, and the outcome.
func writeTask(b *strings.Builder, env screen.Env, r *session.Request) {
	st := env.Styles
	tk := r.Task
	head := fmt.Sprintf("TASK %s (%d %s", env.Line(tk.ID), tk.Polls, look.CountNoun(tk.Polls, "poll", "polls"))
	if tk.HistoryDropped > 0 {
		head += fmt.Sprintf("; %d later status changes not kept", tk.HistoryDropped)
	}
	b.WriteString(st.Bold.Render(head+")") + "\n")
	if tk.AfterCancelHandle {
		b.WriteString(st.Flag.Render("⚑ the task handle came after the request was cancelled: the task was cancelled with tasks/cancel too") + "\n")
	}
	for _, l := range taskLines(env, r) {
		text := l.text
		if l.flagged {
			text = st.Flag.Render(text)
		}
		b.WriteString(fmt.Sprintf("%-8s %s  %s\n", look.Ago(l.at.Sub(startOf(r))), l.at.Format("15:04:05.000"), text))
	}
	if tk.EndedAfterCancel != "" {
		b.WriteString(st.Flag.Render(fmt.Sprintf("⚑ %s after tasks/cancel (+%s): its outcome is kept below as late, never a success", env.Line(tk.EndedAfterCancel), look.Dur(tk.AfterCancel))) + "\n")
	}
	if tk.InputRequests != "" && tk.Status == wire.TaskInputRequired {
		how := "inputRequests; a answers them with tasks/update"
		if w := tk.UpdateWords(); w != "" && len(r.TaskAsks()) == 0 {
			how = "inputRequests; " + w
		}
		b.WriteString("\n" + st.Bold.Render("WHAT THE SERVER ASKS FOR ("+env.Line(how)+")") + "\n")
		b.WriteString(look.PrettyJSON([]byte(tk.InputRequests), env.Block) + "\n")
	}
	if raw, isErr, ok := env.Tracker.TaskOutcome(r.ID); ok {
		title := "TASK RESULT"
		switch {
		case tk.EndedAfterCancel != "":
			title = "TASK RESULT AFTER tasks/cancel (late; ignored)"
		case isErr:
			title = "TASK ERROR"
		}
		b.WriteString("\n" + st.Bold.Render(title) + "\n")
		b.WriteString(look.PrettyJSON(raw, env.Block) + "\n")
	}
}

// taskLine is one line of a task's history; flagged: a status said after
// the terminal one, which does not count.
type taskLine struct {
	at      time.Time
	text    string
	flagged bool
}

// taskLines are a task's status changes and its cancel, in time order: a
// status change and the cancel interleave. A status the server said after
// its terminal one is listed too, flagged: the tracker keeps the terminal
// status, and the violation says when the other came.
func taskLines(env screen.Env, r *session.Request) []taskLine {
	tk := r.Task
	var lines []taskLine
	for _, c := range tk.History {
		t := fmt.Sprintf("%-14s (%s)", env.Line(c.Status), c.Via)
		if c.Message != "" {
			t += fmt.Sprintf(" %q", env.Line(c.Message))
		}
		lines = append(lines, taskLine{at: c.At, text: t})
	}
	for _, v := range env.Tracker.Violations().ForRequest(r.ID) {
		if v.Code != session.ViolationTaskStatusAfterTerminal {
			continue
		}
		status, via := afterTerminal(v.Raw, tk)
		t := fmt.Sprintf("⚑ %-12s (%s) after %s: ignored", env.Line(status), via, env.Line(tk.Status))
		lines = append(lines, taskLine{at: v.Time, text: t, flagged: true})
	}
	if !tk.CancelSentAt.IsZero() {
		lines = append(lines, taskLine{at: tk.CancelSentAt, text: "tasks/cancel sent"})
	}
	if !tk.CancelAckAt.IsZero() {
		lines = append(lines, taskLine{at: tk.CancelAckAt, text: "tasks/cancel acknowledged"})
	}
	if tk.CancelError != nil {
		lines = append(lines, taskLine{at: tk.CancelSentAt, text: fmt.Sprintf("tasks/cancel refused: error %d %s", tk.CancelError.Code, env.Line(tk.CancelError.Message))})
	}
	for i := 1; i < len(lines); i++ {
		for j := i; j > 0 && lines[j].at.Before(lines[j-1].at); j-- {
			lines[j], lines[j-1] = lines[j-1], lines[j]
		}
	}
	return lines
}

// afterTerminal reads the status a message said after a task's terminal
// one, and how it came (a poll's result or a notification), from the
// violation's copy of the message; the first such status the task keeps
// when the copy was cut too short to read.
func afterTerminal(raw []byte, tk *session.Task) (string, session.TaskVia) {
	if msg, err := wire.Decode(raw); err == nil {
		obj, via := msg.Params, session.ViaNotification
		if msg.Kind == wire.KindResult {
			obj, via = msg.Result, session.ViaPoll
		}
		if ts, err := wire.DecodeTask(obj); err == nil && ts.Status != "" {
			return ts.Status, via
		}
	}
	return tk.AfterTerminal, tk.AfterTerminalVia
}

// writeConversation is the body's CONVERSATION section: every round with
// its ID, what was asked and answered (requestState only as opaque
// bytes), and the legacy server's own requests with their fate.
func writeConversation(b *strings.Builder, env screen.Env, r *session.Request) {
	st := env.Styles
	c := r.Conv
	// Times from the request's start (its first round), where ELAPSED
	// counts from.
	start := r.Created
	at := func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return look.Ago(t.Sub(start))
	}
	if n := len(c.Rounds); n > 0 {
		b.WriteString(st.Bold.Render(fmt.Sprintf("CONVERSATION (%d %s)", n, look.CountNoun(n, "round", "rounds"))) + "\n")
		for i, rd := range c.Rounds {
			writeRound(b, env, i, rd, at)
		}
		if c.Stopped != "" {
			b.WriteString(st.Warn.Render("  "+env.Line(c.Stopped)) + "\n")
		}
	}
	if len(c.ServerRequests) > 0 {
		b.WriteString(st.Bold.Render("THE SERVER'S REQUESTS") + "\n")
		if n := c.ServerRequestsDropped; n > 0 {
			b.WriteString(st.Dim.Render(fmt.Sprintf("  … %d older ones that had ended are not kept; these %d are the open ones and the newest", n, len(c.ServerRequests))) + "\n")
		}
		for _, s := range c.ServerRequests {
			fate := "waiting for you"
			if !s.Open() {
				fate = strings.ReplaceAll(s.State.String(), "_", " ") + " " + at(s.Ended)
			}
			b.WriteString(fmt.Sprintf("  ↘ %s  id %s  %s · %s\n", env.Line(s.Method), env.Line(s.ID.String()), at(s.At), fate))
		}
	}
}

// writeRound is round i of a conversation: its ID, when it was sent and
// what it came to, what it asked, and how it was answered.
func writeRound(b *strings.Builder, env screen.Env, i int, rd session.Round, at func(time.Time) string) {
	st := env.Styles
	line := fmt.Sprintf("round %d  #%s  sent %s", i+1, env.Line(rd.ID.String()), at(rd.Began))
	if !rd.ResponseAt.IsZero() {
		line += fmt.Sprintf(" → %s %s", look.StateName(rd.Outcome), at(rd.ResponseAt))
	} else if rd.Outcome.IsFinal() {
		line += " → " + look.StateName(rd.Outcome)
	}
	b.WriteString("  " + line + "\n")
	for _, q := range rd.Asked {
		b.WriteString(st.Dim.Render("      asked "+env.Line(q.Key)+": ") + look.QuestionText(q.Method, q.Params, env.Line) + "\n")
	}
	if len(rd.RequestState) > 0 {
		b.WriteString(st.Dim.Render(fmt.Sprintf("      requestState: %d opaque bytes, echoed as they came", len(rd.RequestState))) + "\n")
	}
	if !rd.AnsweredAt.IsZero() {
		keys := make([]string, 0, len(rd.Answers))
		for k, v := range rd.Answers {
			keys = append(keys, env.Line(k)+" "+look.AnswerWord(v))
		}
		sort.Strings(keys)
		b.WriteString(st.Dim.Render("      answered "+at(rd.AnsweredAt)+": ") + strings.Join(keys, ", ") + "\n")
	}
}

// tieWords says how lines that came on no stream of the request's, with
// several requests in flight, were known to be its ("" when none were).
func tieWords(logs []session.LogLine) string {
	var ways []string
	for _, l := range logs {
		w := ""
		switch l.TiedBy {
		case session.TiedProgressToken:
			w = "its progress token"
		case session.TiedLogger:
			w = "the logger's name"
		case session.TiedLevel:
			w = "the level it asked for"
		}
		if w != "" && !slices.Contains(ways, w) {
			ways = append(ways, w)
		}
	}
	if len(ways) == 0 {
		return ""
	}
	return "; tied by " + strings.Join(ways, ", ")
}

// noneYet is what an empty list says: "none yet" while more can come,
// "none" once the request has ended.
func noneYet(r *session.Request) string {
	if r.State.IsActive() {
		return "none yet"
	}
	return "none"
}

// untied is how many log lines tied to no request came while r was in
// flight, as the trail counted them.
func (m *Model) untied(r *session.Request) int {
	if m.trail.id != r.ID {
		return 0
	}
	return m.trail.untied
}

// writeLogs lists the request's log lines: when each came (from the
// request's start), its level, logger and data; its heading also counts
// the untied lines that came while it was in flight, which only the
// protocol log shows.
func writeLogs(b *strings.Builder, env screen.Env, r *session.Request, untied int) {
	c := r.Conv
	if c == nil {
		c = &session.Conversation{}
	}
	st := env.Styles
	line := env.Line
	title := fmt.Sprintf("LOGS (%d %s", c.LogCount, look.CountNoun(c.LogCount, "line", "lines"))
	if c.LogLevel != "" {
		title += ", asked at " + line(c.LogLevel)
	} else if info, _ := env.Tracker.Conn(); info.Era == event.EraModern {
		title += "; the request asked for none"
	}
	title += tieWords(c.Logs)
	if untied > 0 && c.LogCount > 0 {
		// Its own lines are listed below; these, only in the protocol log.
		title += fmt.Sprintf("; %d %s tied to no request came while it was in flight, the protocol log has %s",
			untied, look.CountNoun(untied, "line", "lines"), look.CountNoun(untied, "it", "them"))
	}
	b.WriteString(st.Bold.Render(title+")") + "\n")
	if c.LogCount == 0 {
		n := untied
		if n == 0 {
			// The lines the bounded protocol log no longer holds are
			// still counted, for the whole connection.
			n = env.Tracker.LogsUnattributed()
		}
		if n > 0 {
			// Lines came, but nothing named this request as theirs.
			b.WriteString(st.Dim.Render(fmt.Sprintf("  (none tied to it: %d %s untied — they came with several requests in flight and named none; the protocol log has them)",
				n, look.CountNoun(n, "line", "lines"))) + "\n")
			return
		}
		b.WriteString(st.Dim.Render("  ("+noneYet(r)+")") + "\n")
		return
	}
	// The loggers' column is as wide as the widest of them.
	loggers := 0
	for _, l := range c.Logs {
		loggers = max(loggers, ansi.StringWidth(line(look.ClipRunes(l.Logger, 24))))
	}
	for _, l := range c.Logs {
		text := fmt.Sprintf("  %-7s %-9s", look.Ago(l.At.Sub(r.Created)), line(look.ClipRunes(l.Level, 9)))
		if loggers > 0 {
			lg := line(look.ClipRunes(l.Logger, 24))
			text += " " + lg + strings.Repeat(" ", loggers-ansi.StringWidth(lg))
		}
		b.WriteString(st.Dim.Render(text) + "  " + line(l.Data) + "\n")
	}
	if more := c.LogCount - len(c.Logs); more > 0 {
		b.WriteString(st.Dim.Render(fmt.Sprintf("  … %d more not kept (the first %d are)", more, len(c.Logs))) + "\n")
	}
}
