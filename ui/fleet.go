package ui

import (
	"errors"
	"reflect"
	"slices"
	"strconv"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"inflight/keymap"
	"inflight/session"
	"inflight/termsafe"
	"inflight/ui/list"
	"inflight/ui/screen"
)

// Member is one server of a Fleet: its name and the options of the root
// model that follows it (its own connection or proxy stream, its own
// tracker, its own clock).
type Member struct {
	Name    string
	Options Options
}

// Unjoined is a server the fleet could not take (a proxy that refused
// another viewer): said in the header and on the status line while it
// stands.
type Unjoined struct {
	Name string
	Why  string
}

// FleetOptions configure a Fleet.
type FleetOptions struct {
	// Join, when set, is asked every JoinEvery (default 1s), inside a
	// command (never in Update), for servers that appeared since it was
	// last asked: a proxy started after attach --all. Names it gave once
	// are not given again. It also says which servers it could not take
	// at that ask (each is asked again the next time).
	Join      func() ([]Member, []Unjoined)
	JoinEvery time.Duration
	// Unjoined are the servers that could not be taken before the fleet
	// began (Join's answer before NewFleet).
	Unjoined []Unjoined
	// Now replaces time.Now (tests).
	Now func() time.Time
	// Dark says whether the terminal background is dark until the
	// terminal reports it.
	Dark bool
}

// Fleet is inflight over several servers at once: one root Model per
// server, each with its own connection (or proxy stream) and tracker, and
// one list of all their requests with a SERVER column (list.Merged), the
// header counting per server. A key on a row acts on that row's server:
// the Fleet selects the row in the server's own model and hands it the
// key; when that opens a screen (the detail, a prompt, the composer, the
// log), the server's model is shown alone until it is back at its list.
// A server that fails is shown failed; the others go on.
type Fleet struct {
	members []*member
	list    list.Merged
	// zoom is the member shown alone; -1: the merged list.
	zoom   int
	size   size
	theme  theme
	keys   keymap.KeyMap
	opts   FleetOptions
	ending ending
	// note is the merged list's status line; spoke the member a key
	// was last given to, whose own status line shows when there is no
	// note (-1: none).
	note  string
	spoke int
	// lanesOn draws the merged list as a waterfall, a lane per server (v).
	lanesOn bool
	// unjoined are the servers Join could not take at its last ask.
	unjoined []Unjoined
}

// member is one server of the fleet and its model.
type member struct {
	name string
	m    *Model
	// ended: its model asked the program to end (its clock is stopped).
	ended bool
}

// The fleet's own messages: a member's message tagged with the member it
// is for, a member's end, and the search for servers that joined.
type (
	memberMsg struct {
		i   int
		msg tea.Msg
	}
	memberEndedMsg struct{ i int }
	joinedMsg      struct {
		members  []Member
		unjoined []Unjoined
	}
)

// NewFleet makes the fleet's members' models. Nothing starts until Init.
func NewFleet(members []Member, opts FleetOptions) (*Fleet, error) {
	if len(members) == 0 && opts.Join == nil {
		return nil, errors.New("ui: a fleet needs at least one server")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.JoinEvery <= 0 {
		opts.JoinEvery = time.Second
	}
	f := &Fleet{zoom: -1, spoke: -1, keys: keymap.Default(), opts: opts, list: list.NewMerged(), size: size{width: 80, height: 24}, unjoined: opts.Unjoined}
	f.theme.set(opts.Dark)
	for _, mb := range members {
		if _, err := f.add(mb); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// add makes a member's model.
func (f *Fleet) add(mb Member) (int, error) {
	if mb.Options.Now == nil {
		mb.Options.Now = f.opts.Now
	}
	mb.Options.Dark = f.theme.dark
	m, err := New(mb.Options)
	if err != nil {
		return 0, err
	}
	f.members = append(f.members, &member{name: f.freeName(mb.Name), m: m})
	return len(f.members) - 1, nil
}

// freeName is name, or, when a member has it already (a proxy started
// again under its name), name and the first free "·N".
func (f *Fleet) freeName(name string) string {
	taken := func(n string) bool {
		for _, mb := range f.members {
			if mb.name == n {
				return true
			}
		}
		return false
	}
	out := name
	for n := 2; taken(out); n++ {
		out = name + "·" + strconv.Itoa(n)
	}
	return out
}

// Members are the members' models, in the order they joined (for the
// caller to close their connections once the program ended).
func (f *Fleet) Members() []*Model {
	out := make([]*Model, len(f.members))
	for i, mb := range f.members {
		out[i] = mb.m
	}
	return out
}

// Stop releases every member's timers (see Model.Stop).
func (f *Fleet) Stop() {
	f.ending.quitting = true
	for _, mb := range f.members {
		mb.m.Stop()
	}
}

// Interrupted reports whether Ctrl+C or a signal ended the program.
func (f *Fleet) Interrupted() bool { return f.ending.interrupted }

// Init starts every member and, with Join, the search for new servers.
func (f *Fleet) Init() tea.Cmd {
	cmds := []tea.Cmd{tea.RequestBackgroundColor, f.nextJoin()}
	for i, mb := range f.members {
		cmds = append(cmds, tagged(i, mb.m.Init()))
	}
	return tea.Batch(cmds...)
}

// nextJoin asks Join again in a while.
func (f *Fleet) nextJoin() tea.Cmd {
	join := f.opts.Join
	if join == nil || f.ending.quitting {
		return nil
	}
	return tea.Tick(f.opts.JoinEvery, func(time.Time) tea.Msg {
		members, unjoined := join()
		return joinedMsg{members: members, unjoined: unjoined}
	})
}

// tagged makes a member's command deliver its messages tagged with the
// member, so that they come back to it: each message of a batch too, and
// the program's end as the member's own end. What is not the root's own
// (a command the program runs itself, such as a pager's) goes as it is.
func tagged(i int, cmd tea.Cmd) tea.Cmd {
	if cmd == nil {
		return nil
	}
	return func() tea.Msg { return tag(i, cmd()) }
}

func tag(i int, msg tea.Msg) tea.Msg {
	switch msg := msg.(type) {
	case nil:
		return nil
	case tea.BatchMsg:
		out := make(tea.BatchMsg, len(msg))
		for j, c := range msg {
			out[j] = tagged(i, c)
		}
		return out
	case tea.QuitMsg:
		return memberEndedMsg{i: i}
	}
	if rootMsg(msg) {
		return memberMsg{i: i, msg: msg}
	}
	return msg
}

// rootMsg reports whether msg is one of this package's own messages.
func rootMsg(msg tea.Msg) bool {
	t := reflect.TypeOf(msg)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.PkgPath() == reflect.TypeFor[memberMsg]().PkgPath()
}

// Update routes a message to the member it is for (the keys: to the
// merged list, or to the selected row's server), then lays the list out.
func (f *Fleet) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case memberMsg:
		if msg.i < len(f.members) {
			cmd = f.toMember(msg.i, msg.msg)
		}
	case memberEndedMsg:
		cmd = f.memberEnded(msg.i)
	case joinedMsg:
		cmd = f.join(msg.members, msg.unjoined)
	case tea.WindowSizeMsg:
		f.size.width, f.size.height = msg.Width, msg.Height
		cmd = f.toAll(msg)
	case tea.BackgroundColorMsg:
		f.theme.set(msg.IsDark())
		cmd = f.toAll(msg)
	case tea.InterruptMsg:
		cmd = f.quitAll("interrupted", session.CauseInterrupted)
	case ShutdownMsg:
		cmd = f.quitAll(msg.Reason, session.CauseInterrupted)
	case tea.KeyPressMsg:
		cmd = f.handleKey(msg)
	case tea.MouseWheelMsg:
		if f.zoom >= 0 {
			cmd = f.toMember(f.zoom, msg)
		} else {
			f.list, _ = f.list.Update(f.env(), msg)
		}
	default:
		// A message no member's command tagged (a pager's end, a text
		// input's blink): the member shown alone is the one that asked.
		cmd = f.toMember(max(f.zoom, 0), msg)
	}
	f.layout()
	return f, cmd
}

// toMember hands msg to member i and tags what it returns.
func (f *Fleet) toMember(i int, msg tea.Msg) tea.Cmd {
	if i >= len(f.members) {
		return nil
	}
	_, cmd := f.members[i].m.Update(msg)
	return tagged(i, cmd)
}

// toAll hands msg to every member.
func (f *Fleet) toAll(msg tea.Msg) tea.Cmd {
	cmds := make([]tea.Cmd, len(f.members))
	for i := range f.members {
		cmds[i] = f.toMember(i, msg)
	}
	return tea.Batch(cmds...)
}

// join adds the servers that appeared, sized and started, and keeps
// those that could not be taken (a new refusal is said on the status
// line).
func (f *Fleet) join(members []Member, unjoined []Unjoined) tea.Cmd {
	cmds := []tea.Cmd{f.nextJoin()}
	for _, u := range unjoined {
		if !slices.Contains(f.unjoined, u) {
			f.note = "could not attach to " + u.Name + ": " + u.Why
		}
	}
	f.unjoined = unjoined
	for _, mb := range members {
		if f.ending.quitting {
			break
		}
		i, err := f.add(mb)
		if err != nil {
			f.note = "could not open " + mb.Name + ": " + err.Error()
			continue
		}
		m := f.members[i].m
		m.Update(tea.WindowSizeMsg{Width: f.size.width, Height: f.size.height})
		cmds = append(cmds, tagged(i, m.Init()))
		f.note = mb.Name + " joined"
	}
	return tea.Batch(cmds...)
}

// quitAll ends every member as its own quit would (what is in flight is
// cancelled first, with the right signal; a view on a proxy detaches),
// and the program once all have ended.
func (f *Fleet) quitAll(reason string, cause session.CancelCause) tea.Cmd {
	if cause == session.CauseInterrupted {
		f.ending.interrupted = true
	}
	f.ending.quitting = true
	var cmds []tea.Cmd
	for i, mb := range f.members {
		if !mb.ended {
			cmds = append(cmds, tagged(i, mb.m.quit(reason, cause)))
		}
	}
	if len(cmds) == 0 {
		return tea.Quit
	}
	return tea.Batch(cmds...)
}

// memberEnded is a member's model asking the program to end: the program
// ends when every member has; a member that quit on its own (its quit
// prompt) ends the others too.
func (f *Fleet) memberEnded(i int) tea.Cmd {
	if i >= len(f.members) {
		return nil
	}
	f.members[i].ended = true
	f.ending.interrupted = f.ending.interrupted || f.members[i].m.Interrupted()
	if !f.ending.quitting {
		return f.quitAll("client shutting down", session.CauseShutdown)
	}
	for _, mb := range f.members {
		if !mb.ended {
			return nil
		}
	}
	return tea.Quit
}

// handleKey is a key on the merged list, or on the member shown alone.
func (f *Fleet) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	if f.zoom >= 0 {
		i := f.zoom
		cmd := f.toMember(i, msg)
		f.unzoomIfBack(i)
		return cmd
	}
	k := &f.keys
	switch {
	case f.list.Searching():
	case msg.String() == "ctrl+c":
		return f.quitAll("interrupted", session.CauseInterrupted)
	case key.Matches(msg, k.Quit):
		return f.quitAll("client shutting down", session.CauseShutdown)
	case key.Matches(msg, k.Waterfall):
		f.lanesOn = !f.lanesOn
		return nil
	}
	var act screen.Action
	f.list, act = f.list.Update(f.env(), msg)
	switch a := act.(type) {
	case screen.Status:
		f.note = a.Text
		return nil
	case screen.Unused:
	default:
		return nil
	}
	// Any other key acts on the selected row's server, as on its own list.
	i := f.target()
	if i < 0 {
		return nil
	}
	m := f.members[i].m
	if sel, ok := f.list.Selected(); ok && sel.Lane == i {
		if _, kept := m.tracker.Get(sel.ID); !kept {
			// The server's history let go of it (the merged list drops
			// such rows a batch at a time): no key may act on another.
			f.note = "#" + sel.ID.String() + " of " + f.members[i].name + " is no longer kept"
			return nil
		}
		m.screens.list = m.screens.list.Select(sel.ID, false)
		m.layout()
		// The keys enabled are the selected request's (c only on one
		// that can be cancelled …).
		m.syncKeys()
	}
	f.note, f.spoke = "", i
	cmd := f.toMember(i, msg)
	if !backAtList(m) {
		f.zoom = i
	}
	return cmd
}

// target is the member a key acts on: the selected row's, else the one
// server the search names, else the first.
func (f *Fleet) target() int {
	if sel, ok := f.list.Selected(); ok {
		return sel.Lane
	}
	if len(f.members) == 0 {
		return -1
	}
	for i, mb := range f.members {
		if mb.name == f.list.Search() {
			return i
		}
	}
	return 0
}

// unzoomIfBack goes back to the merged list once member i is back at its
// list with nothing open, its selection kept.
func (f *Fleet) unzoomIfBack(i int) {
	m := f.members[i].m
	if !backAtList(m) {
		return
	}
	f.zoom = -1
	if id := m.screens.list.Selected(); !id.IsZero() {
		f.list = f.list.Select(list.Key{Lane: i, ID: id})
	}
}

// backAtList reports whether m shows its list with nothing over it.
func backAtList(m *Model) bool {
	return m.focus.mode == keymap.ModeList && !m.focus.waterfallOn && !m.screens.prompt.Open() && !m.screens.attachv.Prompting()
}

// env is the merged list's Env: the styles, keys and clock (each lane
// has its own tracker).
func (f *Fleet) env() screen.Env {
	// Each lane's rows are drawn through its own Env (its redactor);
	// this one draws what is the fleet's own (the server names).
	return screen.Env{Now: f.opts.Now(), Styles: f.theme.styles, Keys: &f.keys, Line: termsafe.Line, Block: termsafe.Block}
}

// lanes are the members as the merged list reads them.
func (f *Fleet) lanes() []list.Lane {
	out := make([]list.Lane, len(f.members))
	for i, mb := range f.members {
		m := mb.m
		out[i] = list.Lane{Name: mb.name, Env: m.env(), In: m.screens.listInput(m.conn.state, &m.feed, m.opts.Attach, m.opts.Redact)}
	}
	return out
}

// layout lays the merged list out in the body.
func (f *Fleet) layout() {
	if f.zoom >= 0 {
		return
	}
	f.list = f.list.Layout(f.lanes(), f.size.width, f.bodyHeight())
}
