package ui

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"inflight/event"
	"inflight/keymap"
	"inflight/msgtext"
	"inflight/session"
	"inflight/ui/look"
	"inflight/wire"
)

// detailView shows one request: a timeline bar and the raw JSON of what
// went back and forth, in a scrollable viewport.
type detailView struct {
	// id is the request shown: the detail stays on it even when the list's
	// selection follows newer requests.
	id wire.ID
	vp viewport.Model
	// content is the body the viewport holds, built by layoutDetail when
	// built (what it was built from) no longer matches the request: the
	// viewport keeps its scroll position while the request is unchanged,
	// and a payload is indented and sanitised once, not every frame.
	content string
	built   detailSource
	// wrapped is the width content was cut to for the viewport (0: lay
	// it out again).
	wrapped int
	// trail is what the protocol log holds about the request that the
	// tracker's counts do not: when each message after the cancel came,
	// and a subscription's updates. layoutDetail keeps it up to date.
	trail trail
	// srv is the server's own request shown instead of a request
	// (incoming.go), and srvBuilt what its body was built from.
	srv      *session.ServerRequest
	srvBuilt incomingSig
}

// trail is what the protocol log says about one request, gathered as the
// log grows (each entry is read once).
type trail struct {
	id      wire.ID
	scanned int64 // log Total when last read
	// after is every message the tracker judged late or crossed, in
	// order, as long as the bounded log keeps it.
	after []arrival
	// updates are a subscription's notifications, the last
	// maxTrailUpdates of them; updatesSeen counts them all.
	updates     []arrival
	updatesSeen int
	// ackAt is when the subscription was acknowledged (zero: not seen).
	ackAt time.Time
	// polls are when a task's tasks/get went out, the last
	// maxTrailUpdates of them; pollsSeen counts them all.
	polls     []time.Time
	pollsSeen int
}

// arrival is one message of a trail.
type arrival struct {
	abs      int64 // its log position
	at       time.Time
	verdict  string
	progress bool // notifications/progress (else a response or an update)
	response bool
	text     string // msgtext's words for it, for updates
	after    time.Duration
}

// maxTrailUpdates bounds the updates a detail lists.
const maxTrailUpdates = 200

// detailSource is everything detailBody reads. Progress is not in it: the
// body does not show progress (the header does), so a flood of progress
// never rebuilds the body. The width is not in it either: cutting the body
// to the width is a step of its own (detailView.wrapped), which a resize
// redoes without building the body again.
type detailSource struct {
	id         wire.ID
	late       bool // a late (or crossed) response
	crossed    bool
	localError string
	// violations counts the request's violations, and kept how many of
	// them the bounded violation log still holds (it drops the oldest).
	violations, kept int
	// request and response are the raw bytes shown, compared by identity:
	// the store's bytes are never changed in place, and holding them here
	// keeps their address from being reused by other bytes.
	request, response     []byte
	haveRequest, haveResp bool
	dark                  bool
	// updates counts the subscription updates the body lists.
	updates int
	// task is what the body's TASK section shows of the request's task.
	task taskSig
	// conv is what the CONVERSATION section shows (answer.go).
	conv  convSig
	valid bool // false: nothing built yet
}

// sourceOf is what the body of r would be built from now.
func (m *Model) sourceOf(r *session.Request) detailSource {
	src := detailSource{
		id: r.ID, late: r.Late.Response, crossed: r.Late.Crossed,
		localError: r.LocalError, violations: r.Violations, dark: m.dark, valid: true,
	}
	if r.Violations > 0 {
		src.kept = len(m.tracker.Violations().ForRequest(r.ID))
	}
	src.request, src.haveRequest = m.tracker.RawRequest(r.ID)
	src.response, src.haveResp = m.tracker.RawResponse(r.ID)
	if m.detail.trail.id == r.ID {
		src.updates = m.detail.trail.updatesSeen
	}
	src.conv = convSigOf(r)
	if tk := r.Task; tk != nil {
		_, _, outcome := m.tracker.TaskOutcome(r.ID)
		src.task = taskSig{changes: len(tk.History) + tk.HistoryDropped, polls: tk.Polls, sent: !tk.CancelSentAt.IsZero(),
			acked: !tk.CancelAckAt.IsZero(), refused: tk.CancelError != nil, after: tk.EndedAfterCancel, outcome: outcome, input: len(tk.InputRequests)}
	}
	return src
}

// same reports whether a body built from a is the body built from b.
func (a *detailSource) same(b *detailSource) bool {
	return a.valid && b.valid && a.id == b.id && a.late == b.late && a.crossed == b.crossed &&
		a.localError == b.localError && a.violations == b.violations && a.kept == b.kept && a.dark == b.dark && a.updates == b.updates && a.task == b.task && a.conv == b.conv &&
		a.haveRequest == b.haveRequest && a.haveResp == b.haveResp &&
		sameBytes(a.request, b.request) && sameBytes(a.response, b.response)
}

// sameBytes reports whether a and b are the same bytes in memory.
func sameBytes(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	return len(a) == 0 || &a[0] == &b[0]
}

func (m *Model) openDetail() {
	if s := m.list.srv; s != nil && m.mode == keymap.ModeList {
		m.openIncomingDetail(s)
		return
	}
	r, ok := m.selectedRequest()
	if !ok {
		return
	}
	m.detail.srv = nil
	m.detail.id = r.ID
	m.mode = keymap.ModeDetail
	m.detail.vp = viewport.New()
	m.detail.content = ""
	m.detail.built = detailSource{}
	m.detail.wrapped = 0
	m.detail.trail = trail{}
	m.detail.vp.SetHorizontalStep(horizontalStep)
	m.detail.vp.SetWidth(m.width)
	m.detail.vp.SetHeight(max(1, m.bodyHeight()-detailHeaderLines))
}

// layoutDetail rebuilds the body when what it shows changed, and sizes the
// viewport to what the header above it takes.
func (m *Model) layoutDetail(height int) {
	if m.detail.srv != nil {
		m.layoutIncomingDetail(height)
		return
	}
	r, ok := m.selectedRequest()
	if !ok {
		return
	}
	d := &m.detail
	m.readTrail(r)
	if src := m.sourceOf(r); !src.same(&d.built) {
		d.built = src
		if body := m.detailBody(r); body != d.content {
			// Following the end of a growing body stays at its end.
			atBottom := d.vp.AtBottom() && d.content != ""
			d.content = body
			d.vp.SetContentLines(m.pagerLines(body))
			d.wrapped = m.width
			if atBottom {
				d.vp.GotoBottom()
			}
		}
	}
	if d.wrapped != m.width {
		d.vp.SetContentLines(m.pagerLines(d.content))
		if !m.pager.chop {
			d.vp.SetXOffset(0)
		}
		d.wrapped = m.width
	}
	d.vp.SetWidth(m.width)
	d.vp.SetHeight(detailViewportHeight(height, len(m.timeline(r, m.width, m.now()))))
}

// pagerLines is s as the payload views lay it out: wrapped to the width,
// or, with the lines cut (pager.chop), as it is for the viewport to cut.
func (m *Model) pagerLines(s string) []string {
	if m.pager.chop {
		return strings.Split(s, "\n")
	}
	return look.WrapLines(s, m.width)
}

// readTrail brings the detail's trail up to date with the log: the
// entries logged since it was last read.
func (m *Model) readTrail(r *session.Request) {
	tr := &m.detail.trail
	if tr.id != r.ID {
		*tr = trail{id: r.ID}
	}
	lg := m.tracker.Log()
	first := lg.Total() - int64(lg.Len())
	for len(tr.after) > 0 && tr.after[0].abs < first {
		tr.after = tr.after[1:]
	}
	for abs := max(tr.scanned, first); abs < lg.Total(); abs++ {
		e := lg.At(int(abs - first))
		if e.Kind == event.Sent && e.Parent == r.ID && e.Method == wire.MethodTasksGet {
			tr.pollsSeen++
			if len(tr.polls) == maxTrailUpdates {
				copy(tr.polls, tr.polls[1:])
				tr.polls = tr.polls[:maxTrailUpdates-1]
			}
			tr.polls = append(tr.polls, e.Time)
			continue
		}
		if e.ID != r.ID || e.Kind != event.Received {
			continue
		}
		a := arrival{abs: abs, at: e.Time, verdict: e.Verdict, after: e.AfterCancel,
			progress: e.Method == wire.NotifyProgress && e.MsgKind == wire.KindNotification,
			response: e.MsgKind == wire.KindResult || e.MsgKind == wire.KindError}
		if a.verdict != "" {
			tr.after = append(tr.after, a)
		}
		if !r.IsListen() || e.MsgKind != wire.KindNotification || a.progress {
			continue
		}
		if e.Method == wire.NotifySubscriptionAck {
			if tr.ackAt.IsZero() {
				tr.ackAt = e.Time
			}
			continue
		}
		a.text = msgtext.Raw(e.Raw, "")
		tr.updatesSeen++
		if len(tr.updates) == maxTrailUpdates {
			copy(tr.updates, tr.updates[1:])
			tr.updates = tr.updates[:maxTrailUpdates-1]
		}
		tr.updates = append(tr.updates, a)
	}
	tr.scanned = lg.Total()
	if r.Late.Response && !r.Late.Crossed {
		// A response judged crossed for want of the cancel's send time
		// and late once it was known: the tracker relabelled its entry.
		for i := range tr.after {
			if tr.after[i].response {
				tr.after[i].verdict = session.VerdictLate
			}
		}
	}
}

// detailViewportHeight is what is left for the body under a timeline of
// timelineLines lines (it takes a third row of labels when they crowd).
func detailViewportHeight(height, timelineLines int) int {
	return max(1, height-detailHeaderLines-(timelineLines-3))
}

func (m *Model) handleDetailKey(msg tea.KeyPressMsg) bool {
	return m.handlePagerKey(msg, &m.detail.vp)
}

// detailHeaderLines is the height of the part above the viewport: the
// summary, the cancel line, the timeline (bar and two label rows, a third
// when labels crowd) and a gap.
const detailHeaderLines = 8

func (m *Model) viewDetail(height int) string {
	if m.detail.srv != nil {
		return m.viewIncomingDetail(height)
	}
	r, ok := m.selectedRequest()
	if !ok {
		return m.viewEmpty(height)
	}
	st := m.styles
	now := m.now()
	sl := look.StateLookOf(r.State)
	var b strings.Builder
	title := fmt.Sprintf("#%s %s", r.ID, look.RequestLabel(r, true, m.line))
	b.WriteString(look.Fit(st.Title.Render(title)+"  "+sl.Style(st).Render(sl.Icon+" "+look.StateName(r.State))+
		st.Dim.Render("  ·  "+look.Dur(look.Elapsed(r, now))), m.width))
	b.WriteByte('\n')
	b.WriteString(look.Fit(m.detailFacts(r, now), m.width))
	b.WriteByte('\n')
	cancelLine, flagLine := m.cancelFacts(r, now)
	b.WriteString(look.Fit(cancelLine, m.width))
	b.WriteByte('\n')
	b.WriteString(look.Fit(flagLine, m.width))
	b.WriteByte('\n')
	tl := m.timeline(r, m.width, now)
	for _, line := range tl {
		b.WriteString(look.Fit(line, m.width))
		b.WriteByte('\n')
	}
	// layoutDetail built the body and sized the viewport for the timeline
	// as it was then; should the clock have moved a label onto a third row
	// since, this frame draws a copy one row shorter, so the screen stays
	// exact without View changing the model.
	vp := m.detail.vp
	if h := detailViewportHeight(height, len(tl)); h != vp.Height() {
		vp.SetHeight(h)
	}
	b.WriteByte('\n')
	b.WriteString(vp.View())
	return b.String()
}

// detailFacts is the line of times and the timeout.
func (m *Model) detailFacts(r *session.Request, now time.Time) string {
	st := m.styles
	if r.Task != nil {
		sent := "sent " + r.Sent.Format("15:04:05.000") + " · "
		if m.width < 100 {
			sent = "" // the timeline says when it was sent
		}
		return st.Dim.Render(sent) + m.taskFacts(r, now, m.width-len(sent))
	}
	var parts []string
	if !r.Sent.IsZero() {
		parts = append(parts, "sent "+r.Sent.Format("15:04:05.000"))
	} else {
		parts = append(parts, "not sent yet")
	}
	if r.Progress.Count > 0 {
		p := fmt.Sprintf("%d progress (┼)", r.Progress.Count)
		total := &r.Progress.Total
		if !r.Progress.HasTotal {
			total = nil
		}
		p += ", last " + msgtext.Numbers(r.Progress.Value, total)
		parts = append(parts, p)
	}
	rem, limit := r.Remaining(now)
	switch {
	case r.IsListen() && r.Acked:
		// An acknowledged subscription lives until it is ended: its
		// timeout stopped with the acknowledgment.
		ack := "acknowledged"
		if at := m.detail.trail.ackAt; !at.IsZero() && m.detail.trail.id == r.ID {
			ack += " " + look.Ago(at.Sub(startOf(r)))
		}
		u := fmt.Sprintf("%d %s (•)", r.Notifications, look.CountNoun(r.Notifications, "update", "updates"))
		if !r.LastNotificationAt.IsZero() {
			u += ", last " + look.Ago(r.LastNotificationAt.Sub(startOf(r)))
		}
		// What it says of the timeout goes first: "sent" is on the timeline.
		parts = append([]string{ack + " (no timeout since)", u}, parts...)
		return st.Dim.Render(strings.Join(parts, " · "))
	}
	switch limit {
	case session.LimitTimeout:
		reset := ""
		if r.Timeout.ResetOnProgress {
			reset = ", reset by progress"
		}
		parts = append(parts, fmt.Sprintf("times out in %s (timeout %s%s; max %s)", look.Dur(rem), look.Dur(r.Timeout.Timeout), reset, look.Dur(r.Timeout.Max)))
	case session.LimitMax:
		parts = append(parts, fmt.Sprintf("maximum reached in %s (max %s, never reset)", look.Dur(rem), look.Dur(r.Timeout.Max)))
	case session.LimitNone:
		if r.ByHost {
			parts = append(parts, hostTimeoutText)
			if f := m.actFact(r, now); f != "" {
				parts = append(parts, f)
			}
			break
		}
		fallthrough
	default:
		parts = append(parts, fmt.Sprintf("timeout %s · max %s", look.Dur(r.Timeout.Timeout), look.Dur(r.Timeout.Max)))
	}
	return st.Dim.Render(strings.Join(parts, " · "))
}

// cancelFacts says what happened to the cancel, if there was one, and on a
// second line what the server sent after it.
func (m *Model) cancelFacts(r *session.Request, now time.Time) (string, string) {
	st := m.styles
	failure := m.failureCause(r)
	if r.Cancel == nil {
		if r.IsActive() {
			return st.Dim.Render("not cancelled · press c to cancel it, C to give a reason"), ""
		}
		if failure != "" {
			return st.Failed.Render("✗ " + failure), m.urlsRequired(r)
		}
		return "", "" // nothing to say: it ended on its own
	}
	c := r.Cancel
	sig := look.SignalText(c.Signal)
	if c.Failed != "" {
		sig = "could not be sent: " + m.line(c.Failed)
	}
	s := fmt.Sprintf("cancel (%s) at %s · %s", c.Cause, look.Ago(c.At.Sub(startOf(r))), sig)
	if c.Reason != "" {
		s += fmt.Sprintf(" · reason %q", m.line(c.Reason))
		switch c.Signal {
		case event.SignalStreamClosed:
			s += " (not sent: a closed stream carries none)"
		case event.SignalTaskCancel:
			s += " (not sent: tasks/cancel carries none)"
		}
	}
	var flags, crossed []string
	if tk := r.Task; tk != nil && tk.EndedAfterCancel != "" {
		flags = append(flags, fmt.Sprintf("⚑ %s after tasks/cancel (+%s) — its result ignored", m.line(tk.EndedAfterCancel), look.Dur(tk.AfterCancel)))
	} else if r.Late.Response && !r.Late.Crossed {
		flags = append(flags, fmt.Sprintf("⚑ late response %s after the cancel — %s", look.Dur(r.Late.AfterCancel), look.LateFate(r)))
	}
	if r.Late.ProgressAfterCancel > 0 {
		flags = append(flags, fmt.Sprintf("⚑ %d progress after the cancel", r.Late.ProgressAfterCancel))
	}
	if r.Late.Response && r.Late.Crossed {
		crossed = append(crossed, fmt.Sprintf("a response crossed the cancel in flight (%s after it) — %s", look.Dur(r.Late.AfterCancel), look.LateFate(r)))
	}
	if n := r.Late.ProgressCrossed; n > 0 {
		crossed = append(crossed, fmt.Sprintf("%d progress crossed in flight", n))
	}
	if watched, still, ok := r.WatchEnded(); ok && still {
		flags = append(flags, fmt.Sprintf("still sending when the %s watch ended", look.Dur(watched)))
	}
	if len(flags)+len(crossed) > 0 {
		var parts []string
		if len(flags) > 0 {
			parts = append(parts, st.Flag.Render(strings.Join(flags, " · ")))
		}
		if len(crossed) > 0 {
			parts = append(parts, st.Dim.Render(strings.Join(crossed, " · ")+" · "+look.CrossingBasis(m.tracker, m.line)))
		}
		return st.Cancelling.Render(s), strings.Join(parts, st.Dim.Render(" · "))
	}
	switch r.State {
	case session.StateCancelRequested:
		if w := look.WatchingText(r, now); w != "" {
			return st.Cancelling.Render(s), st.Dim.Render(w)
		}
		return st.Cancelling.Render(s), st.Dim.Render(fmt.Sprintf("waiting for the server's answer to the cancel, %s so far", look.Dur(now.Sub(c.At))))
	case session.StateCompleted, session.StateFailed, session.StateInputRequired, session.StateEndedByServer:
		line := st.Dim.Render("the answer had arrived before the cancel: nothing was cancelled")
		if failure != "" {
			line = st.Failed.Render("✗ "+failure) + st.Dim.Render(" · the answer had arrived before the cancel")
		}
		return st.Dim.Render(s), line
	case session.StateConnectionLost:
		if failure != "" {
			return st.Cancelled.Render(s), st.Failed.Render("✗ " + failure)
		}
	}
	if r.Task != nil && r.Task.Status == wire.TaskCancelled {
		return st.Cancelled.Render(s), st.Dim.Render("the task says cancelled: what the server says of it, not whether its work stopped")
	}
	if watched, _, ok := r.WatchEnded(); ok && c.Signal != event.SignalStreamClosed {
		return st.Cancelled.Render(s), st.Dim.Render(fmt.Sprintf("the server sent nothing more for this request in the %s watched", look.Dur(watched)))
	}
	return st.Cancelled.Render(s), st.Dim.Render("the server sent nothing more for this request")
}

// codeURLElicitationRequired is URLElicitationRequiredError: the request
// cannot go on until the user has opened the URLs its data lists.
const codeURLElicitationRequired = -32042

// urlsRequired says, for a request refused with URLElicitationRequired,
// which sites the server asks the user to open (never opened here) and
// that E sends it again; "" for any other.
func (m *Model) urlsRequired(r *session.Request) string {
	if r.Error == nil || r.Error.Code != codeURLElicitationRequired {
		return ""
	}
	var data struct {
		Elicitations []struct {
			URL     string `json:"url"`
			Message string `json:"message"`
		} `json:"elicitations"`
	}
	if json.Unmarshal(r.Error.Data, &data) != nil || len(data.Elicitations) == 0 {
		return ""
	}
	var parts []string
	for _, e := range data.Elicitations {
		site := look.URLHost(e.URL)
		if site == "" {
			site = "no host inflight can read"
		}
		parts = append(parts, "site "+m.line(site)+": "+m.line(e.URL))
	}
	return m.styles.Warn.Render("open first, yourself (inflight never does), then E sends it again: " + strings.Join(parts, " · "))
}

// failureCause is why a failed (or lost) request failed, in the words of
// the error the server sent, of the tool result that reported an error, or
// of what inflight saw itself; "" for any other request.
func (m *Model) failureCause(r *session.Request) string {
	if r.State != session.StateFailed && r.State != session.StateConnectionLost {
		return ""
	}
	switch {
	case r.Error != nil:
		return m.line(msgtext.Error(r.Error))
	case r.ToolError:
		if raw, ok := m.tracker.RawResponse(r.ID); ok {
			if msg, err := wire.Decode(raw); err == nil && msg.Kind == wire.KindResult {
				return "tool error " + strings.TrimPrefix(m.line(msgtext.Result(r.Method, msg.Result)), "(tool error) ")
			}
		}
		return "the tool reported an error (isError)"
	case r.LocalError != "":
		return m.line(r.LocalError)
	}
	return ""
}

func startOf(r *session.Request) time.Time {
	if !r.Sent.IsZero() {
		return r.Sent
	}
	return r.Created
}

// mark is one point on the timeline.
type mark struct {
	at    time.Time
	glyph string
	label string
}

// Glyphs of the timeline, least telling first: where two fall on one
// cell, the later in this list shows.
var timelineGlyphs = []string{"·", "≡", "◆", "↗", "↘", "?", "↻", "⚑", "■", "▶", "●", "x", "✕", "*", "!"}

// timeline draws the request's life as a horizontal bar: sent, each
// progress, the cancel, late traffic and the end, at their relative times.
// Each message after the cancel is placed at its own time (from the
// protocol log, as the tracker judged it): one that shares its cell with
// others of its kind shows their count instead of its glyph.
func (m *Model) timeline(r *session.Request, width int, now time.Time) []string {
	st := m.styles
	start := startOf(r)
	if c := r.Conv; c != nil && len(c.Rounds) > 1 && c.Rounds[0].Began.Before(start) {
		// A conversation's timeline starts at its first round, as its
		// ELAPSED does; later rounds are marks on it.
		start = c.Rounds[0].Began
	}
	end := now
	if !r.IsActive() && !r.Ended.IsZero() {
		end = r.Ended
	}
	var after []arrival
	if m.detail.trail.id == r.ID {
		after = m.detail.trail.after
	}
	for _, t := range append([]time.Time{r.Late.ResponseAt, r.Late.LastProgressAt, r.Late.LastAt}, m.actTimes(r)...) {
		if !t.IsZero() && t.After(end) {
			end = t
		}
	}
	if n := len(after); n > 0 && after[n-1].at.After(end) {
		end = after[n-1].at
	}
	span := end.Sub(start)
	if span <= 0 {
		span = time.Millisecond
	}
	w := max(10, width-4)
	col := func(t time.Time) int {
		c := int(float64(t.Sub(start)) / float64(span) * float64(w-1))
		return min(max(c, 0), w-1)
	}
	line := []rune(strings.Repeat("─", w))
	for _, s := range r.Timeline {
		line[col(start.Add(s.At-start.Sub(r.Created)))] = '┼'
	}
	if r.IsListen() && m.detail.trail.id == r.ID {
		// A subscription's updates, each at its time (• one, a digit
		// several in a cell); those after a cancel are marked below.
		updates := map[int]int{}
		for _, u := range m.detail.trail.updates {
			if u.verdict == "" {
				updates[col(u.at)]++
			}
		}
		for i, n := range updates {
			line[i] = cellGlyph("•", n)
		}
	}
	marks := []mark{{start, "●", "sent 0s"}}
	if r.Cancel != nil {
		marks = append(marks, mark{r.Cancel.At, "✕", "cancel " + look.Ago(r.Cancel.At.Sub(start))})
	}
	switch {
	case r.Late.Response && r.Late.Crossed:
		marks = append(marks, mark{r.Late.ResponseAt, "x", "crossed response " + look.Ago(r.Late.ResponseAt.Sub(start))})
	case r.Late.Response:
		label := "late response "
		if tk := r.Task; tk != nil && tk.EndedAfterCancel != "" {
			label = m.line(tk.EndedAfterCancel) + " after tasks/cancel "
		}
		marks = append(marks, mark{r.Late.ResponseAt, "!", label + look.Ago(r.Late.ResponseAt.Sub(start))})
	}
	if !r.IsActive() && !r.Ended.IsZero() {
		marks = append(marks, mark{r.Ended, "■", look.StateName(r.State) + " " + look.Ago(r.Ended.Sub(start))})
	} else {
		marks = append(marks, mark{now, "▶", "now " + look.Ago(now.Sub(start))})
	}
	// A late response that settled the cancel shares the end's instant:
	// one label says both.
	for i := len(marks) - 1; i >= 0; i-- {
		if mk := marks[i]; mk.glyph == "■" {
			for j := range marks {
				if marks[j].glyph == "!" && marks[j].at.Equal(mk.at) {
					marks[j].label += ", " + strings.TrimSuffix(mk.label, " "+look.Ago(mk.at.Sub(start)))
					marks = append(marks[:i], marks[i+1:]...)
					break
				}
			}
		}
	}
	// Progress (and subscription updates) after the cancel: each at its
	// cell, counted per cell; one label per kind says how many and when.
	cells := map[string]map[int]int{"*": {}, "x": {}}
	var groups []mark
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
		for _, a := range after {
			if a.response || a.verdict != kind.verdict {
				continue
			}
			cells[kind.glyph][col(a.at)]++
			if firstAt.IsZero() {
				firstAt = a.at
			}
			lastAt = a.at
		}
		if firstAt.IsZero() {
			continue
		}
		lbl := fmt.Sprintf("%s %d %s %s %s", kind.glyph, kind.count, kind.word, what, look.Ago(firstAt.Sub(start)))
		if lastAt.After(firstAt) {
			lbl += "…" + look.Ago(lastAt.Sub(start))
		}
		groups = append(groups, mark{firstAt, kind.glyph, lbl})
	}
	// A task's polls (·) and the changes of its status or message (◆),
	// each at its time; a label for each change of status and one for
	// the polls, as for late progress.
	if tk := r.Task; tk != nil {
		polls := map[int]int{}
		var firstPoll, lastPoll time.Time
		if m.detail.trail.id == r.ID {
			for _, at := range m.detail.trail.polls {
				polls[col(at)]++
				if firstPoll.IsZero() {
					firstPoll = at
				}
				lastPoll = at
			}
		}
		if n := m.detail.trail.pollsSeen; n > 0 && m.detail.trail.id == r.ID {
			lbl := fmt.Sprintf("· %d %s %s", n, look.CountNoun(n, "poll", "polls"), look.Ago(firstPoll.Sub(start)))
			if lastPoll.After(firstPoll) {
				lbl += "…" + look.Ago(lastPoll.Sub(start))
			}
			groups = append(groups, mark{firstPoll, "·", lbl})
		}
		cells["·"] = polls
		changes := map[int]int{}
		prev := ""
		for _, ch := range tk.History {
			changes[col(ch.At)]++
			if ch.Status != prev && ch.Via != session.ViaHandle && !(ch.At.Equal(r.Ended) && !r.IsActive()) {
				// The handle's status is the task's start (the TASK
				// table lists it); the end's ■ says a terminal status
				// seen at its instant.
				groups = append(groups, mark{ch.At, "◆", "◆ " + m.line(look.ClipRunes(ch.Status, 20)) + " " + look.Ago(ch.At.Sub(start))})
			}
			prev = ch.Status
		}
		cells["◆"] = changes
	}
	m.conversationMarks(r, start, col, cells, &marks, &groups)
	marks = append(marks, m.actMarks(r, start)...)
	for _, g := range timelineGlyphs {
		if c, ok := cells[g]; ok {
			for i, n := range c {
				line[i] = cellGlyph(g, n)
			}
		}
		for _, mk := range marks {
			if mk.glyph == g {
				line[col(mk.at)] = []rune(mk.glyph)[0]
			}
		}
	}
	marks = append(marks, groups...)
	sort.SliceStable(marks, func(i, j int) bool { return marks[i].at.Before(marks[j].at) })
	// Labels go under their mark, on the first of three rows where they
	// do not overwrite a neighbour. When marks crowd one spot, a label
	// that fits under none of them goes right of the least crowded row's
	// last label: every label is shown, and its text says its time.
	var rows [timelineLabelRows][]rune
	var next [timelineLabelRows]int
	for i := range rows {
		rows[i] = []rune(strings.Repeat(" ", w+1))
	}
	for _, mk := range marks {
		c := col(mk.at)
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
	out := []string{"  " + st.Running.Render(string(line))}
	for i, r := range rows {
		text := strings.TrimRight(string(r), " ")
		if i >= 2 && text == "" {
			break // the third row only when it is needed
		}
		out = append(out, "  "+st.Dim.Render(text))
	}
	return out
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

// timelineLabelRows is how many rows the timeline's labels may take.
const timelineLabelRows = 3

// detailBody is the scrollable part: the raw JSON of the request, the
// response (or the late response) and the violations.
func (m *Model) detailBody(r *session.Request) string {
	st := m.styles
	var b strings.Builder
	section := func(title string) {
		b.WriteString(st.Bold.Render(title))
		b.WriteByte('\n')
	}
	if r.Task != nil {
		// The task is what the request became: first.
		m.writeTask(&b, r)
		b.WriteString("\n")
	}
	if r.Conv != nil && (len(r.Conv.Rounds) > 0 || len(r.Conv.ServerRequests) > 0) {
		m.writeConversation(&b, r)
		b.WriteString("\n")
	}
	if r.Conv != nil && (r.Conv.LogCount > 0 || r.Conv.LogLevel != "") {
		m.writeLogs(&b, r)
		b.WriteString("\n")
	}
	section("REQUEST")
	if raw, ok := m.tracker.RawRequest(r.ID); ok {
		b.WriteString(look.PrettyJSON(raw, m.block))
	} else {
		b.WriteString(st.Dim.Render("(no longer in the bounded store)"))
	}
	b.WriteString("\n\n")
	raw, haveResponse := m.tracker.RawResponse(r.ID)
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
		b.WriteString(look.PrettyJSON(raw, m.block))
	case r.LocalError != "":
		b.WriteString(st.Failed.Render(m.block(r.LocalError)))
	default:
		b.WriteString(st.Dim.Render("(none)"))
	}
	b.WriteString("\n")
	if r.IsListen() {
		m.writeUpdates(&b, r)
	}

	if vs := m.tracker.Violations().ForRequest(r.ID); len(vs) > 0 {
		b.WriteString("\n")
		section("VIOLATIONS")
		for _, v := range vs {
			b.WriteString(st.Flag.Render("⚠ "+v.Code) + "  " + m.line(v.Detail) + "\n")
			if len(v.Raw) > 0 {
				b.WriteString(st.Dim.Render("  "+m.line(string(v.Raw))) + "\n")
			}
		}
	}
	return b.String()
}

// writeUpdates lists a subscription's updates: when each came, and what it
// said, as the protocol log keeps them (the last maxTrailUpdates).
func (m *Model) writeUpdates(b *strings.Builder, r *session.Request) {
	st := m.styles
	tr := &m.detail.trail
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
		b.WriteString(st.Dim.Render("(none yet)") + "\n")
		return
	}
	for _, u := range tr.updates {
		line := fmt.Sprintf("%-8s %s  %s", look.Ago(u.at.Sub(startOf(r))), u.at.Format("15:04:05.000"), m.line(u.text))
		switch u.verdict {
		case session.VerdictLate:
			line = st.Flag.Render("⚑ late "+look.Ago(u.after)) + "  " + line
		case session.VerdictCrossed:
			line = st.Dim.Render("crossed the cancel "+look.Ago(u.after)) + "  " + line
		}
		b.WriteString(line + "\n")
	}
}
