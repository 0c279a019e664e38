package waterfall

import (
	"strings"
	"time"

	"charm.land/lipgloss/v2"

	"inflight/session"
	"inflight/ui/look"
)

// Glyphs of a bar. The marks are the detail timeline's, so that the two
// screens say the same thing the same way.
const (
	fillRun      = '━' // sent, in flight (or until the cancel)
	fillTask     = '═' // working as a task, after its handle came
	fillWindow   = '╌' // the late window: cancelled, watching for late traffic
	fillWindowTo = '┈' // what is left of a late window still running
	fillQuestion = '─' // a server's question, asked until answered
	markProgress = '┼'
	markPoll     = '·'
	markStatus   = '◆' // a task's status changed
	markAnswered = '↗' // a server's question answered (or withdrawn, lost)
	markAsked    = '↘' // a server's question came
	markInput    = '?' // a round answered input_required; a question waiting
	markRound    = '↻' // a conversation's next round
	markEnd      = '■'
	markNow      = '▶'
	markCrossed  = 'x' // crossed the cancel in flight
	markCancel   = '✕' // the cancel's signal left
	markDeadline = '◷' // a timeout's deadline: ahead, or where its cancel left
	markLate     = '*' // late progress or notification
	markLateResp = '!' // a response after the cancel
	markEarlier  = '◂' // the request lies left of the axis
	markLater    = '▸' // … right of it
	gridLine     = '┊'
)

// markOrder ranks the marks, least telling first: where two fall on one
// cell, the later in this list shows. It is the detail timeline's order
// but for crossed traffic, which here outranks the cancel: the detail
// labels each mark, a bar does not, and a response that crossed the
// cancel lands in the cancel's cell more often than not (it crossed it),
// where the x says both that there was a cancel and what crossed it.
var markOrder = []rune{markPoll, markStatus, markAnswered, markAsked, markInput, markRound, markDeadline, markEnd, markNow, markCancel, markCrossed, markLate, markLateResp}

// pen is how a run of cells is drawn: the escape sequences that turn its
// style on and off, taken once per frame from a rendering of the style.
type pen struct{ on, off string }

func penOf(s lipgloss.Style) pen {
	on, off, _ := strings.Cut(s.Render("x"), "x")
	return pen{on, off}
}

// pens are the styles of the bars, built by Layout for the palette it
// was given and read by View; a state's pen is built for every state up
// front, so that drawing never adds one.
type pens struct {
	byState map[session.State]uint8
	list    []pen
	// sign is what tells one palette from another: the pens of Dim and
	// Running as built.
	sign [2]pen
}

// The pens every frame has; a state's fill is added as it is met.
const (
	penPlain uint8 = iota
	penGrid
	penDim
	penWindow
	penFlag
	penCrossed
	penCancel
	penDeadline
	penProgress
	penQuestion
	penCursor
	penCount
)

func newPens(st look.Styles) *pens {
	p := &pens{byState: map[session.State]uint8{}, list: make([]pen, penCount), sign: signOf(st)}
	p.list[penGrid] = penOf(st.Faint)
	p.list[penDim] = penOf(st.Dim)
	p.list[penWindow] = penOf(st.Cancelled)
	p.list[penFlag] = penOf(st.Flag)
	p.list[penCrossed] = penOf(st.Warn)
	p.list[penCancel] = penOf(st.Cancelling)
	p.list[penDeadline] = penOf(st.TimedOut)
	p.list[penProgress] = penOf(st.Running)
	p.list[penQuestion] = penOf(st.Warn)
	p.list[penCursor] = penOf(st.Cursor)
	for s := session.StatePending; s <= session.StateConnectionLost; s++ {
		p.list = append(p.list, penOf(look.StateLookOf(s).Style(st)))
		p.byState[s] = uint8(len(p.list) - 1)
	}
	return p
}

func signOf(st look.Styles) [2]pen { return [2]pen{penOf(st.Dim), penOf(st.Running)} }

// pensFor is p when it was built for st's palette, else pens built now.
func pensFor(p *pens, st look.Styles) *pens {
	if p != nil && p.sign == signOf(st) {
		return p
	}
	return newPens(st)
}

// paint draws s with pen i.
func (p *pens) paint(i uint8, s string) string { return p.list[i].on + s + p.list[i].off }

// state is the pen of a state's bar: its colour, as the list's STATE.
func (p *pens) state(s session.State) uint8 {
	if i, ok := p.byState[s]; ok {
		return i
	}
	return penDim
}

// bar is one row's cells on the axis, glyph and pen per cell.
type bar struct {
	a     axis
	now   time.Time
	cells []rune
	pen   []uint8
	// rank is the rank in markOrder of the mark a cell shows (0: none),
	// so that a less telling mark never hides a more telling one.
	rank []int8
}

func newBar(a axis, now time.Time) *bar {
	return &bar{a: a, now: now, cells: make([]rune, a.cells), pen: make([]uint8, a.cells), rank: make([]int8, a.cells)}
}

// reset empties the bar for the next row: the grid at the ticks.
func (b *bar) reset(ticks []tick) {
	for i := range b.cells {
		b.cells[i], b.pen[i], b.rank[i] = ' ', penPlain, 0
	}
	for _, t := range ticks {
		b.cells[t.col], b.pen[t.col] = gridLine, penGrid
	}
}

// fill draws glyph g from a to z (at least one cell when any of it is on
// the axis), under any mark.
func (b *bar) fill(a, z time.Time, g rune, p uint8) {
	if z.Before(a) {
		return
	}
	ca, cz := b.a.col(a), b.a.col(z)
	if cz < 0 || ca >= b.a.cells {
		return
	}
	for c := max(ca, 0); c <= min(cz, b.a.cells-1); c++ {
		if b.rank[c] == 0 {
			b.cells[c], b.pen[c] = g, p
		}
	}
}

// mark puts glyph g at time at, unless a more telling mark is there.
func (b *bar) mark(at time.Time, g rune, p uint8) {
	b.markAs(at, g, markRank(g), p)
}

// markAs puts glyph g at time at with the rank of another mark.
func (b *bar) markAs(at time.Time, g rune, rank int8, p uint8) {
	if at.IsZero() {
		return
	}
	c := b.a.col(at)
	if c < 0 || c >= b.a.cells {
		return
	}
	if rank < b.rank[c] {
		return
	}
	b.cells[c], b.pen[c], b.rank[c] = g, p, rank
}

func markRank(g rune) int8 {
	for i, m := range markOrder {
		if m == g {
			return int8(i + 1)
		}
	}
	return 1
}

// outside marks a life wholly left or right of the axis at its edge, so
// that a row is never blank for a request that is there.
func (b *bar) outside(from, to time.Time) {
	switch {
	case b.a.col(to) < 0:
		b.cells[0], b.pen[0] = markEarlier, penDim
	case b.a.col(from) >= b.a.cells:
		b.cells[b.a.cells-1], b.pen[b.a.cells-1] = markLater, penDim
	}
}

// render draws the cells, one escape sequence per run of a pen.
func (b *bar) render(p *pens, out *strings.Builder) {
	for i := 0; i < len(b.cells); {
		j := i
		for j < len(b.cells) && b.pen[j] == b.pen[i] {
			j++
		}
		pn := p.list[b.pen[i]]
		out.WriteString(pn.on)
		for _, c := range b.cells[i:j] {
			out.WriteRune(c)
		}
		out.WriteString(pn.off)
		i = j
	}
}

// request draws r's life: its bar from when it was created to its fate
// (or now), the task it became, its late window, and its marks.
func (b *bar) request(r *session.Request, tr *trail, p *pens) {
	end := b.now
	if !r.IsActive() && !r.Ended.IsZero() {
		end = r.Ended
	}
	last := end
	for _, at := range []time.Time{r.Late.ResponseAt, r.Late.LastAt} {
		if at.After(last) {
			last = at
		}
	}
	b.outside(r.Created, last)
	fill := p.state(r.State)
	runEnd := end
	if c := r.Cancel; c != nil && c.At.Before(end) {
		runEnd = c.At
	}
	b.fill(r.Created, runEnd, fillRun, fill)
	if tk := r.Task; tk != nil && !tk.HandleAt.IsZero() {
		b.fill(tk.HandleAt, runEnd, fillTask, fill)
	}
	if c := r.Cancel; c != nil {
		b.fill(c.At, end, fillWindow, penWindow)
		if left, ok := look.LateWindowLeft(r, b.now); ok && left > 0 {
			b.fill(b.now, c.SettleBy, fillWindowTo, penDim)
		}
	}
	b.lifeMarks(r, end, p)
	b.taskMarks(r, tr, p)
	b.conversationMarks(r)
	b.afterCancel(r, tr)
}

// lifeMarks are the request's own moments: progress, its deadline ahead,
// the cancel where its signal left, a late or crossed response, and its
// end (or now).
func (b *bar) lifeMarks(r *session.Request, end time.Time, p *pens) {
	for _, s := range r.Timeline {
		b.mark(r.Created.Add(s.At), markProgress, penProgress)
	}
	if left, limit := r.Remaining(b.now); limit != session.LimitNone {
		b.mark(b.now.Add(left), markDeadline, penDeadline)
	}
	if c := r.Cancel; c != nil {
		at := c.SignalAt
		if at.IsZero() {
			at = c.At
		}
		if c.Cause == session.CauseTimeout {
			// A timeout's cancel is its deadline: ◷ where it fell, as
			// telling as any cancel.
			b.markAs(at, markDeadline, markRank(markCancel), penDeadline)
		} else {
			b.mark(at, markCancel, penCancel)
		}
	}
	if r.IsActive() {
		b.mark(b.now, markNow, penProgress)
	} else if !r.Ended.IsZero() {
		b.mark(end, markEnd, p.state(r.State))
	}
	switch {
	case r.Late.Response && r.Late.Crossed:
		b.mark(r.Late.ResponseAt, markCrossed, penCrossed)
	case r.Late.Response:
		b.mark(r.Late.ResponseAt, markLateResp, penFlag)
	}
}

// taskMarks are a task's polls and the changes of its status.
func (b *bar) taskMarks(r *session.Request, tr *trail, p *pens) {
	tk := r.Task
	if tk == nil {
		return
	}
	if tr != nil {
		for _, at := range tr.polls {
			b.mark(at, markPoll, penDim)
		}
	} else if !tk.LastPollAt.IsZero() {
		b.mark(tk.LastPollAt, markPoll, penDim)
	}
	// A change of status (not of its message alone: that comes with
	// nearly every poll, and would hide the polls).
	prev := ""
	for _, ch := range tk.History {
		if ch.Status != prev && ch.Via != session.ViaHandle {
			b.mark(ch.At, markStatus, p.state(r.State))
		}
		prev = ch.Status
	}
}

// conversationMarks are a conversation's later rounds and the answers
// that asked for input.
func (b *bar) conversationMarks(r *session.Request) {
	c := r.Conv
	if c == nil {
		return
	}
	for i, rd := range c.Rounds {
		if i > 0 {
			b.mark(rd.Began, markRound, penProgress)
		}
		if rd.Outcome == session.StateInputRequired {
			b.mark(rd.ResponseAt, markInput, penQuestion)
		}
	}
}

// afterCancel marks the progress and notifications that came after the
// cancel, each at its time as the log told: late (flagged) or crossed.
// Without the log's word (it let them go), the request's own last time of
// them stands for them.
func (b *bar) afterCancel(r *session.Request, tr *trail) {
	if tr != nil && len(tr.after) > 0 {
		for _, a := range tr.after {
			if a.crossed {
				b.mark(a.at, markCrossed, penCrossed)
			} else {
				b.mark(a.at, markLate, penFlag)
			}
		}
		return
	}
	l := &r.Late
	switch {
	case l.ProgressAfterCancel+l.NotificationsAfterCancel > 0:
		b.mark(l.LastProgressAt, markLate, penFlag)
	case l.ProgressCrossed+l.NotificationsCrossed > 0:
		b.mark(l.LastProgressAt, markCrossed, penCrossed)
	}
}

// question draws a server's question: asked (↘) until answered (↗), or
// still waiting (?) now.
func (b *bar) question(s *session.ServerRequest) {
	end := b.now
	if !s.Open() && !s.Ended.IsZero() {
		end = s.Ended
	}
	b.outside(s.At, end)
	b.fill(s.At, end, fillQuestion, penQuestion)
	b.mark(s.At, markAsked, penQuestion)
	if s.Open() {
		b.mark(b.now, markInput, penQuestion)
	} else {
		b.mark(end, markAnswered, penQuestion)
	}
}
