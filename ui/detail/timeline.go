package detail

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"inflight/session"
	"inflight/ui/look"
	"inflight/ui/screen"
)

// mark is one point on the timeline.
type mark struct {
	at    time.Time
	glyph string
	label string
}

// Glyphs of the timeline, least telling first: where two fall on one
// cell, the later in this list shows.
var timelineGlyphs = []string{"·", "≡", "◆", "↗", "↘", "?", "↻", look.ActMark, "■", "▶", "●", "x", "✕", "*", "!"}

// timelineLabelRows is how many rows the timeline's labels may take.
const timelineLabelRows = 3

// timeline is one drawing of a request's life as a horizontal bar of w
// cells from start to end: the cells counted per glyph, the marks that
// show one glyph each, and the groups (a label for many cells).
type timeline struct {
	env        screen.Env
	r          *session.Request
	start, end time.Time
	span       time.Duration
	w          int
	line       []rune
	marks      []mark
	groups     []mark
	cells      map[string]map[int]int
	// after is what the trail says came after the cancel.
	after []arrival
}

// timeline draws the request's life as a horizontal bar: sent, each
// progress, the cancel, late traffic and the end, at their relative times.
// Each message after the cancel is placed at its own time (from the
// protocol log, as the tracker judged it): one that shares its cell with
// others of its kind shows their count instead of its glyph.
func (m *Model) timeline(env screen.Env, r *session.Request, width int) []string {
	t := m.newTimeline(env, r, width)
	t.ticks(&m.trail)
	t.lifeMarks()
	t.afterCancel()
	t.task(&m.trail)
	t.conversation()
	for _, a := range m.host.Acts {
		if a.Label != "" {
			t.marks = append(t.marks, mark{a.At, look.ActMark, a.Label + " " + look.Ago(a.At.Sub(t.start))})
		}
	}
	t.paint()
	return t.rows()
}

// newTimeline measures the bar: from the request's start (its first
// round's, for a conversation) to its end, or now, or the last thing that
// came after it.
func (m *Model) newTimeline(env screen.Env, r *session.Request, width int) *timeline {
	t := &timeline{env: env, r: r, start: startOf(r), end: env.Now, cells: map[string]map[int]int{"*": {}, "x": {}}}
	if c := r.Conv; c != nil && len(c.Rounds) > 1 && c.Rounds[0].Began.Before(t.start) {
		// A conversation's timeline starts at its first round, as its
		// ELAPSED does; later rounds are marks on it.
		t.start = c.Rounds[0].Began
	}
	if !r.IsActive() && !r.Ended.IsZero() {
		t.end = r.Ended
	}
	if m.trail.id == r.ID {
		t.after = m.trail.after
	}
	times := []time.Time{r.Late.ResponseAt, r.Late.LastProgressAt, r.Late.LastAt}
	for _, a := range m.host.Acts {
		times = append(times, a.At)
	}
	for _, at := range times {
		if !at.IsZero() && at.After(t.end) {
			t.end = at
		}
	}
	if n := len(t.after); n > 0 && t.after[n-1].at.After(t.end) {
		t.end = t.after[n-1].at
	}
	t.span = t.end.Sub(t.start)
	if t.span <= 0 {
		t.span = time.Millisecond
	}
	t.w = max(10, width-4)
	t.line = []rune(strings.Repeat("─", t.w))
	return t
}

// col is the cell of the bar at time at.
func (t *timeline) col(at time.Time) int {
	c := int(float64(at.Sub(t.start)) / float64(t.span) * float64(t.w-1))
	return min(max(c, 0), t.w-1)
}

// ago is at's time on the timeline, from its start.
func (t *timeline) ago(at time.Time) string { return look.Ago(at.Sub(t.start)) }

// ticks draws each progress (┼) and a subscription's updates (• one, a
// digit several in a cell) on the bar; those after a cancel are marked by
// afterCancel.
func (t *timeline) ticks(tr *trail) {
	r := t.r
	for _, s := range r.Timeline {
		t.line[t.col(t.start.Add(s.At-t.start.Sub(r.Created)))] = '┼'
	}
	if !r.IsListen() || tr.id != r.ID {
		return
	}
	updates := map[int]int{}
	for _, u := range tr.updates {
		if u.verdict == "" {
			updates[t.col(u.at)]++
		}
	}
	for i, n := range updates {
		t.line[i] = cellGlyph("•", n)
	}
}

// lifeMarks are the request's own moments: sent, the cancel, a late or
// crossed response, and the end (or now).
func (t *timeline) lifeMarks() {
	r, start := t.r, t.start
	t.marks = append(t.marks, mark{start, "●", "sent 0s"})
	if r.Cancel != nil {
		t.marks = append(t.marks, mark{r.Cancel.At, "✕", "cancel " + t.ago(r.Cancel.At)})
	}
	switch {
	case r.Late.Response && r.Late.Crossed:
		t.marks = append(t.marks, mark{r.Late.ResponseAt, "x", "crossed response " + t.ago(r.Late.ResponseAt)})
	case r.Late.Response:
		label := "late response "
		if tk := r.Task; tk != nil && tk.EndedAfterCancel != "" {
			label = t.env.Line(tk.EndedAfterCancel) + " after tasks/cancel "
		}
		t.marks = append(t.marks, mark{r.Late.ResponseAt, "!", label + t.ago(r.Late.ResponseAt)})
	}
	if !r.IsActive() && !r.Ended.IsZero() {
		t.marks = append(t.marks, mark{r.Ended, "■", look.StateName(r.State) + " " + t.ago(r.Ended)})
	} else {
		t.marks = append(t.marks, mark{t.env.Now, "▶", "now " + t.ago(t.env.Now)})
	}
	// A late response that settled the cancel shares the end's instant:
	// one label says both.
	marks := t.marks
	for i := len(marks) - 1; i >= 0; i-- {
		if mk := marks[i]; mk.glyph == "■" {
			for j := range marks {
				if marks[j].glyph == "!" && marks[j].at.Equal(mk.at) {
					marks[j].label += ", " + strings.TrimSuffix(mk.label, " "+t.ago(mk.at))
					marks = append(marks[:i], marks[i+1:]...)
					break
				}
			}
		}
	}
	t.marks = marks
}

// afterCancel places progress (and subscription updates) after the
// cancel: each at its cell, counted per cell; one label per kind says how
// many and when.
func (t *timeline) afterCancel() {
	r := t.r
	what := "progress"
	if r.IsListen() {
		what = "updates"
	}
	for _, kind := range []struct {
		verdict, glyph, word string
		count                int
	}{
		{session.VerdictLate, "*", "late", r.Late.ProgressAfterCancel + r.Late.NotificationsAfterCancel},
		{session.VerdictCrossed, "x", "crossed", r.Late.ProgressCrossed + r.Late.NotificationsCrossed},
	} {
		var firstAt, lastAt time.Time
		for _, a := range t.after {
			if a.response || a.verdict != kind.verdict {
				continue
			}
			t.cells[kind.glyph][t.col(a.at)]++
			if firstAt.IsZero() {
				firstAt = a.at
			}
			lastAt = a.at
		}
		if firstAt.IsZero() {
			continue
		}
		// How long after the cancel, as the protocol log says it: from the
		// request's start, a burst 0.3 ms to 12 ms after a cancel at 0.3 s
		// reads "+0.3s…+0.3s".
		since := func(at time.Time) string { return t.ago(at) }
		after := ""
		if r.Cancel != nil {
			since = func(at time.Time) string { return look.Ago(at.Sub(r.Cancel.At)) }
			after = " after the cancel"
		}
		lbl := fmt.Sprintf("%s %d %s %s %s", kind.glyph, kind.count, kind.word, what, since(firstAt))
		if lastAt.After(firstAt) && since(lastAt) != since(firstAt) {
			lbl += "…" + since(lastAt)
		}
		lbl += after
		t.groups = append(t.groups, mark{firstAt, kind.glyph, lbl})
	}
}

// task places a task's polls (·) and the changes of its status or
// message (◆), each at its time; a label for each change of status and
// one for the polls, as for late progress.
func (t *timeline) task(tr *trail) {
	r := t.r
	tk := r.Task
	if tk == nil {
		return
	}
	polls := map[int]int{}
	var firstPoll, lastPoll time.Time
	if tr.id == r.ID {
		for _, at := range tr.polls {
			polls[t.col(at)]++
			if firstPoll.IsZero() {
				firstPoll = at
			}
			lastPoll = at
		}
	}
	if n := tr.pollsSeen; n > 0 && tr.id == r.ID {
		lbl := fmt.Sprintf("· %d %s %s", n, look.CountNoun(n, "poll", "polls"), t.ago(firstPoll))
		if lastPoll.After(firstPoll) {
			lbl += "…" + t.ago(lastPoll)
		}
		t.groups = append(t.groups, mark{firstPoll, "·", lbl})
	}
	t.cells["·"] = polls
	changes := map[int]int{}
	prev := ""
	for _, ch := range tk.History {
		changes[t.col(ch.At)]++
		if ch.Status != prev && ch.Via != session.ViaHandle && !t.saidByTheEnd(ch) {
			// The handle's status is the task's start (the TASK table
			// lists it); the end's ■ says a terminal status seen at its
			// instant.
			t.groups = append(t.groups, mark{ch.At, "◆", "◆ " + t.env.Line(look.ClipRunes(ch.Status, 20)) + " " + t.ago(ch.At)})
		}
		prev = ch.Status
	}
	t.cells["◆"] = changes
}

// saidByTheEnd reports whether the end's label already says the task's
// status change ch: seen at the end's instant, or (legacy, where the
// request ends when tasks/result answers, a moment after the poll that saw
// the terminal status) the same word at the same time as the label reads
// it: "◆ completed +6.0s" beside "completed +6.0s" said it twice.
func (t *timeline) saidByTheEnd(ch session.TaskChange) bool {
	r := t.r
	if r.IsActive() || r.Ended.IsZero() {
		return false
	}
	return ch.At.Equal(r.Ended) || (ch.Status == look.StateName(r.State) && t.ago(ch.At) == t.ago(r.Ended))
}

// conversation puts a request's log lines (≡, counted per cell, one
// label for them all), its rounds (↻ each retry sent under its new ID,
// ? each input_required answer) and a legacy server's requests during it
// (↘ came, ↗ ended) on its timeline.
func (t *timeline) conversation() {
	c := t.r.Conv
	if c == nil {
		return
	}
	line := t.env.Line
	if len(c.Logs) > 0 {
		logs := map[int]int{}
		for _, l := range c.Logs {
			logs[t.col(l.At)]++
		}
		t.cells["≡"] = logs
		first, last := c.Logs[0].At, c.Logs[len(c.Logs)-1].At
		lbl := fmt.Sprintf("≡ %d %s %s", c.LogCount, look.CountNoun(c.LogCount, "log", "logs"), t.ago(first))
		if last.After(first) {
			lbl += "…" + t.ago(last)
		}
		t.groups = append(t.groups, mark{first, "≡", lbl})
	}
	for _, sr := range c.ServerRequests {
		// A legacy server's own request during this one: ↘ when it came,
		// ↗ when it was answered (or withdrawn, or lost).
		method := line(look.ClipRunes(strings.TrimSuffix(strings.TrimSuffix(sr.Method, "/create"), "/createMessage"), 20))
		t.marks = append(t.marks, mark{sr.At, "↘", fmt.Sprintf("↘ %s %s", method, t.ago(sr.At))})
		if !sr.Open() && !sr.Ended.IsZero() {
			t.marks = append(t.marks, mark{sr.Ended, "↗", fmt.Sprintf("↗ %s %s", strings.ReplaceAll(sr.State.String(), "_", " "), t.ago(sr.Ended))})
		}
	}
	for i, rd := range c.Rounds {
		if i > 0 && !rd.Began.IsZero() {
			t.marks = append(t.marks, mark{rd.Began, "↻", fmt.Sprintf("↻ round %d #%s %s", i+1, line(look.ClipRunes(rd.ID.String(), 12)), t.ago(rd.Began))})
		}
		if !rd.ResponseAt.IsZero() && rd.Outcome == session.StateInputRequired {
			t.marks = append(t.marks, mark{rd.ResponseAt, "?", fmt.Sprintf("? #%s asked %s", line(look.ClipRunes(rd.ID.String(), 12)), t.ago(rd.ResponseAt))})
		}
	}
}

// paint draws the cells and the marks on the bar, glyph by glyph, the
// most telling last. The cancel keeps its cell: what came after it in the
// same cell (late or crossed progress, counted) moves to the next free
// cell on its right, or, with none left, is told by its label alone.
func (t *timeline) paint() {
	cancel := -1
	if t.r.Cancel != nil {
		cancel = t.col(t.r.Cancel.At)
	}
	var moved []string
	for _, g := range timelineGlyphs {
		if c, ok := t.cells[g]; ok {
			for i, n := range c {
				if i == cancel && afterCancelGlyph(g) {
					moved = append(moved, g)
					continue
				}
				t.line[i] = cellGlyph(g, n)
			}
		}
		for _, mk := range t.marks {
			if mk.glyph == g {
				t.line[t.col(mk.at)] = []rune(mk.glyph)[0]
			}
		}
	}
	for _, g := range moved {
		for i := cancel + 1; i < len(t.line); i++ {
			if t.line[i] == '─' {
				t.line[i] = cellGlyph(g, t.cells[g][cancel])
				break
			}
		}
	}
}

// afterCancelGlyph reports whether g marks traffic counted after the
// cancel (late or crossed progress), which gives way to the cancel's ✕.
func afterCancelGlyph(g string) bool { return g == "*" || g == "x" }

// rows is the bar and the rows of labels under it. Labels go under their
// mark, on the first of three rows where they do not overwrite a
// neighbour. When marks crowd one spot, a label that fits under none of
// them goes right of the least crowded row's last label: every label is
// shown, and its text says its time.
func (t *timeline) rows() []string {
	marks := append(t.marks, t.groups...)
	sort.SliceStable(marks, func(i, j int) bool { return marks[i].at.Before(marks[j].at) })
	w := t.w
	var rows [timelineLabelRows][]rune
	var next [timelineLabelRows]int
	for i := range rows {
		rows[i] = []rune(strings.Repeat(" ", w+1))
	}
	for _, mk := range marks {
		c := t.col(mk.at)
		lbl := []rune(mk.label)
		if c+len(lbl) > w {
			c = max(0, w-len(lbl))
		}
		row := -1
		for i := range rows {
			if c >= next[i] {
				row = i
				break
			}
		}
		if row < 0 {
			row = 0
			for i := range rows {
				if next[i] < next[row] {
					row = i
				}
			}
			c = next[row]
			if c >= w-1 {
				continue // no room left on any row
			}
			if c+len(lbl) > w {
				lbl = append(lbl[:max(0, w-c-1)], '…')
			}
		}
		copy(rows[row][c:], lbl)
		next[row] = c + len(lbl) + 1
	}
	st := t.env.Styles
	out := []string{"  " + st.Running.Render(string(t.line))}
	for i, r := range rows {
		text := strings.TrimRight(string(r), " ")
		if i >= 2 && text == "" {
			break // the third row only when it is needed
		}
		out = append(out, "  "+st.Dim.Render(text))
	}
	// A bar holds glyphs its labels do not all explain (a change of a
	// task's status, polls or late progress counted per cell, "+" for
	// more than nine): a legend says those drawn, as the waterfall's does.
	// It takes the second row of labels when that is empty.
	if l := t.legend(); l != "" {
		if last := len(out) - 1; strings.TrimSpace(ansi.Strip(out[last])) == "" {
			out = out[:last]
		}
		out = append(out, "  "+l)
	}
	return out
}

// legendWords say what the bar's glyphs mean, in the order the legend
// lists them.
var legendWords = []struct{ glyph, word string }{
	{"●", "sent"}, {"┼", "progress"}, {"•", "update"}, {"◆", "task status"}, {"·", "poll"}, {"≡", "log"},
	{"?", "question"}, {"↻", "round"}, {"↘", "server's request"}, {"↗", "its end"}, {look.ActMark, "proxy"},
	{"✕", "cancel"}, {"*", "late"}, {"x", "crossed"}, {"!", "late response"}, {"■", "end"}, {"▶", "now"},
}

// countWords say what a cell's count means, when the bar draws one.
var countWords = []struct{ glyph, word string }{{"2…9", "that many"}, {"+", "more than 9"}}

// legend names the glyphs the bar shows, as many as the width holds, and
// what a digit or + in a cell means when one is drawn (several of one
// glyph: the labels say which).
func (t *timeline) legend() string {
	bar := string(t.line)
	st := t.env.Styles
	var parts []string
	used := 0
	var words []struct{ glyph, word string }
	for _, it := range legendWords {
		if strings.Contains(bar, it.glyph) || t.counted(it.glyph) {
			words = append(words, it)
		}
	}
	if strings.ContainsAny(bar, "23456789") {
		words = append(words, countWords[0])
	}
	if strings.Contains(bar, "+") {
		words = append(words, countWords[1])
	}
	for _, it := range words {
		w := len([]rune(it.glyph)) + 1 + len([]rune(it.word))
		if len(parts) > 0 {
			w += 2
		}
		if used+w > t.w {
			continue // a shorter one further on may still fit
		}
		used += w
		parts = append(parts, st.Running.Render(it.glyph)+" "+st.Dim.Render(it.word))
	}
	return strings.Join(parts, "  ")
}

// counted reports whether glyph g has a cell holding several of it (drawn
// as their count).
func (t *timeline) counted(g string) bool {
	for _, n := range t.cells[g] {
		if n > 1 {
			return true
		}
	}
	return false
}

// cellGlyph is what a cell holding n marks of glyph g shows: the glyph for
// one, the count for 2–9, + for more.
func cellGlyph(g string, n int) rune {
	switch {
	case n <= 1:
		return []rune(g)[0]
	case n <= 9:
		return rune('0' + n)
	}
	return '+'
}
