// Package ui is inflight's Bubble Tea program: the request list with live
// timers, progress and timeout countdowns, one-key cancellation, the detail
// timeline, the composer, the protocol log and the server's stderr.
//
// The root Model owns the session tracker, the client, the key map and the
// sizes. Update never blocks and never does I/O: anything that touches the
// wire or a file runs in a tea.Cmd that copies what it needs first.
package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unsafe"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"inflight/client"
	"inflight/event"
	"inflight/keymap"
	"inflight/session"
	"inflight/source"
	"inflight/termsafe"
	"inflight/trace"
	"inflight/ui/answer"
	"inflight/ui/attach"
	"inflight/ui/authview"
	"inflight/ui/composer"
	"inflight/ui/detail"
	helpscreen "inflight/ui/help"
	"inflight/ui/logview"
	"inflight/ui/look"
	"inflight/ui/screen"
	"inflight/wire"
)

// Client is what the UI needs of a connection. *client.Client implements
// it; tests use fakes.
type Client interface {
	Connect(ctx context.Context) (event.ConnInfo, error)
	Send(ctx context.Context, r client.Request) error
	Cancel(id wire.ID, reason string) (event.CancelSignal, error)
	// CancelAll cancels ids and returns once the signals went out or within
	// passed (the client owns the goroutine that bounds it).
	CancelAll(ids []wire.ID, reason string, within time.Duration)
	Events() <-chan event.Event
	Close() error
}

// Dialer creates a new connection to the same target (used to reconnect; a
// stdio server is restarted).
type Dialer func() (Client, error)

// Call is a request to send as soon as the connection is up (--call).
type Call struct {
	Method string
	Params json.RawMessage
}

// Options configure the UI.
type Options struct {
	// Trace, when set, records the session from the start (--trace): every
	// event with the tracker's verdict, every state change and violation,
	// as a headless run's trace. The caller closes what it writes to.
	Trace *trace.Writer
	// Target describes what inflight is connected to, for the header (it
	// must already be redacted).
	Target string
	// Transport is "stdio", "http" or "sse" until the connection says more.
	Transport string
	// Dial creates connections. Required.
	Dial Dialer
	// Tracker configures the session tracker (timeouts, late window, history).
	Tracker session.Config
	// Calls are sent right after connecting.
	Calls []Call
	// LogLevel is the level requests ask the server to log at until the
	// composer says otherwise (--log-level; "" asks for no logs): per
	// request in the modern era, with logging/setLevel in the legacy one.
	LogLevel string
	// Export writes the session's trace; path is chosen by the UI. Nil
	// disables export.
	// It returns the path it actually wrote (it may differ when a file of
	// the chosen name exists).
	Export func(path string, snapshot Snapshot) (string, error)
	// ExportDir is where exported traces go ("" = current directory).
	ExportDir string
	// Now replaces time.Now (tests).
	Now func() time.Time
	// Dark says whether the terminal background is dark until the terminal
	// reports it.
	Dark bool
	// FrameInterval is how often timers redraw while something runs
	// (default 100ms).
	FrameInterval time.Duration
	// Redact hides secrets (credential header values) in any text shown;
	// nil shows text as it is.
	Redact func(string) string
	// RedactBytes hides secrets in the bytes of every message before the
	// session stores them, so that the protocol log, the detail view and
	// an export hold only redacted bytes, whichever way the server
	// escaped a secret (redact.Redactor.Bytes). It must return its
	// argument when nothing changed. Nil derives it from Redact.
	RedactBytes func([]byte) []byte
	// Attach, when set, makes the UI a read-only view on a running proxy
	// (attach.go) instead of a client: Dial is not used, and the events
	// come from Source.
	Attach *Attach
	// Replay, when set, makes the UI a player of a recorded run
	// (replay.go): Dial is not used, and nothing is sent.
	Replay *Replay
	// Source is where the events come from when they do not come from a
	// client of the UI's own (the proxy's stream, with Attach): the same
	// pump reads it as it reads a live connection's events.
	Source source.Source
	// Questions hands a legacy server's own requests to the UI to answer
	// (its Serve is the client's ServerRequests); nil: the UI answers none.
	Questions *Questions
	// Roots is the roots/list result a modern round's roots question is
	// answered with, without a prompt (--root; nil: no roots).
	Roots json.RawMessage
}

// Snapshot is a copy of the protocol log taken for an export; it shares no
// memory that Update changes afterwards.
type Snapshot struct {
	Entries []session.LogEntry
	Start   time.Time
	// Dropped counts the oldest entries the bounded log had already lost.
	Dropped int64
}

// mode is the screen being shown.
type mode = keymap.Mode

// prompt is a small modal dialog.
type prompt struct {
	kind  promptKind
	text  string
	note  string // a dim line under the text
	input textinput.Model
	// id is the request a reason prompt is for.
	id wire.ID
	// hint replaces a reason prompt's keys line (the delay prompt's).
	hint string
}

type promptKind uint8

const (
	promptNone promptKind = iota
	promptQuit
	promptCancelAll
	promptReason
)

// Model is the root model.
type Model struct {
	opts    Options
	tracker *session.Tracker
	conn    Client
	connGen int // events and replies of older connections are ignored
	state   connState
	connErr error

	// legacyLogLevel is the level last asked for with logging/setLevel on
	// this connection (legacy era; "" none yet).
	legacyLogLevel string

	keys   keymap.KeyMap
	help   help.Model
	styles look.Styles
	dark   bool

	width, height int
	mode          mode
	prev          mode // where esc from help goes back to

	list     listView
	detail   detail.Model
	incoming incomingDetail
	composer composer.Model
	logv     logview.Model
	stderrv  logview.Stderr
	pager    pager
	prompt   prompt
	helpv    helpscreen.Model

	status statusLine

	// The one clock: a single pending tick, tagged with a generation so a
	// stale one is ignored.
	tickGen int
	tickAt  time.Time

	quitting bool
	// everConnected distinguishes "could not connect" from "connection lost".
	everConnected bool
	// startPending: Connect returned, but the tracker has not yet applied
	// the event.Connected it emitted (events come in batches, on their own
	// command), so the first requests wait for it. Sending them earlier
	// would let what the server sent during the handshake be applied after
	// they began, and be judged against them.
	startPending bool
	// interrupted: the program ends because of Ctrl+C or a signal, not q.
	interrupted bool
	// connectedSeen: the tracker applied this connection's event.Connected
	// (the tracker's own "connected" outlives a connection, so after R it
	// would let the first requests go out too early).
	connectedSeen bool
	// summaries caches what each completed request returned, for its row.
	summaries map[wire.ID]string

	// tick makes the clock; wait and waitItems the event pump, of a live
	// connection's events and of Options.Source's items. Tests replace
	// them so that no command sleeps or blocks.
	tick      func(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd
	wait      func(ch <-chan event.Event, gen int) tea.Cmd
	waitItems func(ch <-chan source.Item, gen int) tea.Cmd
	// exec hands the terminal to a pager or editor (tea.Exec); tests
	// record the command instead, and run it themselves.
	exec func(c tea.ExecCommand, fn tea.ExecCallback) tea.Cmd
	// stop is closed when the program ends, so that no pending tick keeps a
	// goroutine and a timer alive after it.
	stop     chan struct{}
	stopOnce sync.Once
	// attach is the view on a proxy's stream (Options.Attach), attachv
	// its keys and what it draws of the proxy (ui/attach).
	attach  attachState
	attachv attach.Model
	// replay is the player of a recorded run (Options.Replay).
	replay replayState

	// The server's questions (answer.go): the legacy ones waiting for
	// the user, the open answer form, and the screen it was opened from.
	questions  []*serverQuestion
	answer     answer.Model
	prevAnswer mode
	// sentRound is the modern form as it was when its round was sent, until
	// the send returns (answerRoundFailed shows it again on a failure).
	sentRound *answer.Model

	// auth is the connection's OAuth authorization as its steps told it
	// (auth.go).
	auth authview.Model
}

// stoppableTick is tea.Tick that gives up when the program ends: tea.Tick
// waits on its timer whatever happens, which would leave goroutines behind
// for up to the longest timeout.
func (m *Model) stoppableTick(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd {
	stop := m.stop
	return func() tea.Msg {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case now := <-t.C:
			return fn(now)
		case <-stop:
			return nil
		}
	}
}

// exit ends the program.
func (m *Model) exit() tea.Cmd {
	m.Stop()
	return tea.Quit
}

// Stop releases the model's pending timers. The program's owner calls it
// once the program has ended however it ended (a quit does it already; a
// panic or a kill does not).
func (m *Model) Stop() { m.stopOnce.Do(func() { close(m.stop) }) }

type connState uint8

const (
	connConnecting connState = iota
	connUp
	connLost
)

// statusLine is a transient message. It expires at until, which the one
// clock checks: a newer message moves until, so an older expiry never clears
// it.
type statusLine struct {
	text  string
	level statusLevel
	until time.Time
	// about, when set, is a request whose news the message is ("sent #3 —
	// press c", "#3: cancellation requested"): it goes as soon as that
	// request reaches its fate, which the row then tells.
	about wire.ID
}

type statusLevel uint8

const (
	levelInfo statusLevel = iota
	levelWarn
	levelError
)

// Messages.
type (
	// eventsMsg carries a batch of events drained from the channel: the
	// live connection's, or the source's with what it said besides.
	eventsMsg struct {
		gen    int
		items  []source.Item
		closed bool
	}
	connectedMsg struct {
		gen  int
		info event.ConnInfo
		err  error
	}
	tickMsg struct {
		gen int
	}
	sendFailedMsg struct {
		gen int
		id  wire.ID
		err error
	}
	cancelDoneMsg struct {
		gen    int
		id     wire.ID
		signal event.CancelSignal
		err    error
		// quiet: one of several cancels (X, quitting), whose status line
		// already says what happens; only a failure speaks.
		quiet bool
	}
	quitReadyMsg  struct{}
	exportDoneMsg struct {
		path string
		err  error
	}
	redialMsg struct {
		conn Client
		err  error
	}
)

// ShutdownMsg asks the UI to cancel everything in flight with Reason and
// quit, as Ctrl+C does. The program's owner sends it when a signal arrives
// (Bubble Tea's own InterruptMsg ends the program before the model sees it).
type ShutdownMsg struct{ Reason string }

// maxBatch bounds the events applied per Update so that a flood of progress
// never starves key presses: the screen is redrawn once per batch, which is
// how progress is coalesced per frame while every event is still counted.
const maxBatch = 2048

// New returns the root model. The connection is dialled in Init.
func New(opts Options) (*Model, error) {
	if opts.Dial == nil && opts.Attach == nil && opts.Replay == nil {
		return nil, errors.New("ui: Options.Dial is required")
	}
	if opts.Attach != nil && opts.Source == nil {
		return nil, errors.New("ui: Options.Attach needs Options.Source")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.FrameInterval <= 0 {
		opts.FrameInterval = 100 * time.Millisecond
	}
	switch {
	case opts.Redact == nil && opts.RedactBytes == nil:
		opts.Redact = func(s string) string { return s }
	case opts.Redact == nil:
		redactBytes := opts.RedactBytes
		opts.Redact = func(s string) string { return string(redactBytes([]byte(s))) }
	case opts.RedactBytes == nil:
		opts.RedactBytes = redactBytesWith(opts.Redact)
	}
	m := &Model{
		opts:    opts,
		tracker: session.NewTracker(opts.Tracker),
		keys:    keymap.Default(),
		help:    help.New(),
		dark:    opts.Dark,
		width:   80,
		height:  24,
	}
	m.stop = make(chan struct{})
	m.tick = m.stoppableTick
	m.wait = waitEvents
	m.waitItems = waitItems
	m.exec = tea.Exec
	m.setStyles(opts.Dark)
	m.list.follow = true
	m.logv = logview.New()
	m.stderrv = logview.NewStderr()
	m.composer = composer.New(opts.LogLevel)
	if a := opts.Attach; a != nil {
		m.attachv = attach.New(attach.Proxy{Name: a.Proxy.Name, Command: a.Proxy.Command, Transport: opts.Transport, Acts: a.Act != nil, InProcess: a.InProcess})
	}
	return m, nil
}

func (m *Model) setStyles(dark bool) {
	m.dark = dark
	m.styles = look.NewStyles(dark)
	m.help.Styles = m.styles.Help
}

// Tracker exposes the session (read-only) for tests and the exit summary.
func (m *Model) Tracker() *session.Tracker { return m.tracker }

// Conn returns the current connection, so the caller can close it after
// the program ends.
func (m *Model) Conn() Client { return m.conn }

// Init dials, connects and starts listening for events.
func (m *Model) Init() tea.Cmd {
	if m.attaching() {
		return m.initAttach()
	}
	if m.replaying() {
		return m.initReplay()
	}
	conn, err := m.opts.Dial()
	if err != nil {
		m.state = connLost
		m.connErr = err
		return tea.RequestBackgroundColor
	}
	m.conn = conn
	var asked tea.Cmd
	if m.opts.Questions != nil {
		asked = waitQuestion(m.opts.Questions, m.stop)
	}
	return tea.Batch(tea.RequestBackgroundColor, m.startConn(), asked)
}

// startConn returns the commands that connect m.conn and pump its events.
func (m *Model) startConn() tea.Cmd {
	m.connGen++
	m.connectedSeen = false
	m.state = connConnecting
	m.connErr = nil
	return tea.Batch(connectCmd(m.conn, m.connGen), m.pump(m.connGen))
}

// pump waits for the next batch of events: Options.Source's when it is
// set, else the connection's.
func (m *Model) pump(gen int) tea.Cmd {
	if m.opts.Source != nil {
		return m.waitItems(m.opts.Source.Items(), gen)
	}
	return m.wait(m.conn.Events(), gen)
}

func connectCmd(c Client, gen int) tea.Cmd {
	return func() tea.Msg {
		info, err := c.Connect(context.Background())
		return connectedMsg{gen: gen, info: info, err: err}
	}
}

// waitEvents blocks for the next event, then drains what else is ready
// (up to maxBatch) so that one Update applies a whole burst.
func waitEvents(ch <-chan event.Event, gen int) tea.Cmd {
	return waitEventsBatch(ch, gen, maxBatch)
}

// waitEventsBatch is waitEvents with a given batch bound (the flood
// benchmark compares batch sizes).
//
// Bubble Tea calls View after every message, so the cost of a frame is paid
// per batch. The consumer drains faster than a client can decode, so a
// flood arrives as many tiny bursts; measured, that held the UI to about
// 35 000 progress notifications a second. So once a burst shows (a second
// event is already waiting), the pump keeps collecting for up to
// coalesceWindow — far below a frame — before handing the batch over. An
// isolated event (a response, a cancel acknowledgement) is delivered at once.
func waitEventsBatch(ch <-chan event.Event, gen, maxBatch int) tea.Cmd {
	return waitBatch(ch, gen, maxBatch, source.Bare)
}

// waitItems is waitEvents for a source's items.
func waitItems(ch <-chan source.Item, gen int) tea.Cmd {
	return waitBatch(ch, gen, maxBatch, func(it source.Item) source.Item { return it })
}

// waitBatch is the pump of either channel: a live connection's carries
// bare events, made Items as they are drained (source.Bare), so that the
// busiest path has no goroutine and no channel hop of its own.
func waitBatch[T any](ch <-chan T, gen, maxBatch int, item func(T) source.Item) tea.Cmd {
	return func() tea.Msg {
		v, ok := <-ch
		if !ok {
			return eventsMsg{gen: gen, closed: true}
		}
		items := make([]source.Item, 1, 64)
		items[0] = item(v)
		var deadline <-chan time.Time
		for len(items) < maxBatch {
			select {
			case v, ok := <-ch:
				if !ok {
					return eventsMsg{gen: gen, items: items, closed: true}
				}
				items = append(items, item(v))
				continue
			default:
			}
			if len(items) == 1 {
				return eventsMsg{gen: gen, items: items}
			}
			if deadline == nil {
				t := time.NewTimer(coalesceWindow)
				defer t.Stop()
				deadline = t.C
			}
			select {
			case v, ok := <-ch:
				if !ok {
					return eventsMsg{gen: gen, items: items, closed: true}
				}
				items = append(items, item(v))
			case <-deadline:
				return eventsMsg{gen: gen, items: items}
			}
		}
		return eventsMsg{gen: gen, items: items}
	}
}

// coalesceWindow is how long a burst of events is gathered into one batch.
const coalesceWindow = 5 * time.Millisecond

// Update routes every message to one handler, lays out what the views
// read (layout), and schedules the clock.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	selected, shown := m.list.selected, m.shownDetail()
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.help.SetWidth(msg.Width)
	case tea.BackgroundColorMsg:
		m.setStyles(msg.IsDark())
	case eventsMsg:
		cmd = m.handleEvents(msg)
	case actFailedMsg:
		m.setStatus(levelError, "could not ask the proxy: "+m.line(msg.err.Error()))
	case connectedMsg:
		cmd = m.handleConnected(msg)
	case tickMsg:
		cmd = m.handleTick(msg)
	case replayTickMsg:
		cmd = m.handleReplayTick(msg)
	case sendFailedMsg:
		m.handleSendFailed(msg)
	case cancelDoneMsg:
		m.handleCancelDone(msg)
	case exportDoneMsg:
		if msg.err != nil {
			m.setStatus(levelError, "export failed: "+msg.err.Error())
		} else {
			m.setStatus(levelInfo, "trace written to "+msg.path)
		}
	case redialMsg:
		cmd = m.handleRedial(msg)
	case questionMsg:
		cmd = m.handleQuestion(msg)
	case viewerDoneMsg:
		m.handleViewerDone(msg)
	case quitReadyMsg:
		return m, m.exit()
	case tea.InterruptMsg:
		cmd = m.interrupt()
	case ShutdownMsg:
		cmd = m.quit(msg.Reason, session.CauseInterrupted)
	case tea.KeyPressMsg:
		cmd = m.handleKey(msg)
	case tea.PasteMsg:
		cmd = m.handlePaste(msg)
	case tea.MouseWheelMsg:
		cmd = m.handleWheel(msg)
	default:
		if m.mode == keymap.ModeComposer {
			cmd = m.updateComposer(msg)
		} else if m.mode == keymap.ModeAnswer {
			var act screen.Action
			m.answer, act = m.answer.Update(m.env(), msg)
			cmd = m.doAnswer(act)
		} else if m.prompt.kind == promptReason {
			var c tea.Cmd
			m.prompt.input, c = m.prompt.input.Update(msg)
			cmd = c
		} else if m.attachv.Prompting() {
			var act screen.Action
			m.attachv, act = m.attachv.Update(m.env(), m.attachInput(), msg)
			cmd = m.attachAction(act)
		}
	}
	m.layout()
	m.statusFollowsSelection(selected, shown)
	m.syncKeys()
	return m, tea.Batch(cmd, m.schedule())
}

// now is the UI's clock: in a replay, the moment shown.
func (m *Model) now() time.Time {
	if m.replaying() {
		return m.replayNow()
	}
	return m.opts.Now()
}

func (m *Model) handleEvents(msg eventsMsg) tea.Cmd {
	if msg.gen != m.connGen {
		return nil // an old connection's events
	}
	// listed: the composer's next pages of resources and prompts.
	var listed []tea.Cmd
	for i := range msg.items {
		if m.attaching() {
			m.applyItem(&msg.items[i])
			continue
		}
		ev := &msg.items[i].Event
		m.redactEvent(ev)
		changes := m.applied(*ev, m.tracker.Apply(*ev))
		m.settledStatus(changes)
		if cmd := m.autoAnswer(changes); cmd != nil {
			listed = append(listed, cmd)
		}
		switch ev.Kind {
		case event.Connected:
			m.connectedSeen = true
		case event.Auth:
			m.auth.Record(ev)
		case event.TransportClosed:
			if !m.quitting {
				m.state = connLost
				m.connErr = ev.Err
			}
		case event.RequestFailed:
			// Over HTTP nothing closes when the server goes away; a request
			// that could not even reach it is how it shows. What else is in
			// flight shares its fate: the tracker ends it now, as for a
			// closed transport, so that no request stays running on a
			// connection the UI calls lost (or on the next one, after R).
			// (Not an answer to the server's own request that failed: its
			// form says so, and the user may try again, incoming.go.)
			if errors.Is(ev.Err, client.ErrUnreachable) && !ev.Internal && !m.quitting && m.state == connUp {
				m.state = connLost
				m.connErr = ev.Err
				lost := event.Event{Kind: event.TransportClosed, Time: ev.Time, Err: ev.Err}
				m.settledStatus(m.applied(lost, m.tracker.Apply(lost)))
			}
		case event.Received:
			var act screen.Action
			m.composer, act = m.composer.Received(m.env(), ev)
			if cmd := m.composerDid(act); cmd != nil {
				listed = append(listed, cmd)
			}
		}
	}
	var start tea.Cmd
	if len(msg.items) > 0 {
		if tw := m.opts.Trace; tw != nil {
			// A batch is over: what it traced goes to the file, so that a
			// session killed from outside still leaves its trace.
			_ = tw.Flush()
		}
		m.afterChange()
		if m.connectedSeen && m.startPending {
			start = m.start()
		}
	}
	if msg.closed {
		if m.attaching() {
			m.attachEnded()
		}
		return tea.Batch(append(listed, start)...)
	}
	return tea.Batch(append(listed, start, m.pump(msg.gen))...)
}

// redactBytesWith makes a byte redactor of a string one. The bytes are
// viewed as a string without a copy: an event's bytes are immutable once
// the client emitted them (and a redactor keeps nothing it is given), and a
// copy per message would cost a flood of progress a seventh of its speed.
func redactBytesWith(redact func(string) string) func([]byte) []byte {
	return func(b []byte) []byte {
		if len(b) == 0 {
			return b
		}
		in := unsafe.String(unsafe.SliceData(b), len(b))
		if out := redact(in); unsafe.StringData(out) != unsafe.StringData(in) || len(out) != len(in) {
			return []byte(out)
		}
		return b
	}
}

// redactEvent replaces the secrets in an event's bytes before the session
// keeps them (issue 14: a secret the server echoed with its own JSON
// escaping reached the protocol log, the detail view and exports). The
// envelope is decoded again from the redacted bytes, so that nothing the
// session keeps still holds the secret.
func (m *Model) redactEvent(ev *event.Event) {
	if m.opts.RedactBytes == nil || len(ev.Raw) == 0 {
		return
	}
	red := m.opts.RedactBytes(ev.Raw)
	if len(red) == len(ev.Raw) && (len(red) == 0 || &red[0] == &ev.Raw[0]) {
		return
	}
	ev.Raw = red
	if ev.Kind == event.Sent || ev.Kind == event.Received {
		if msg, err := wire.Decode(red); err == nil {
			ev.Msg = msg
		}
	}
}

func (m *Model) handleConnected(msg connectedMsg) tea.Cmd {
	if msg.gen != m.connGen {
		return nil
	}
	if msg.err != nil {
		m.state = connLost
		m.connErr = msg.err
		return nil // the banner says why
	}
	m.state = connUp
	m.everConnected = true
	if m.status.text == reconnecting {
		m.status = statusLine{}
	}
	if !m.connectedSeen {
		m.startPending = true
		return nil
	}
	return m.start()
}

// start sends the first requests of a connection.
func (m *Model) start() tea.Cmd {
	m.startPending = false
	m.composer = m.composer.NewConnection()
	var cmds []tea.Cmd
	// Ask for the tools right away so the composer is ready; it is a real
	// request and shows in the list like any other.
	cmds = append(cmds, m.send(wire.MethodToolsList, nil, session.RequestOptions{}))
	// A legacy server logs at the connection's level: ask for it at once,
	// before the --call requests (the composer may change it later).
	m.legacyLogLevel = ""
	var set tea.Cmd
	if info, ok := m.tracker.Conn(); ok && info.Era != event.EraModern {
		_, set = m.withLogLevel(wire.MethodToolsCall, nil, m.composer.LogLevel())
	}
	for _, c := range m.opts.Calls {
		params, _ := m.withLogLevel(c.Method, c.Params, m.composer.LogLevel())
		cmds = append(cmds, m.send(c.Method, params, session.RequestOptions{}))
	}
	m.opts.Calls = nil
	return inOrder(set, tea.Batch(cmds...))
}

// send records a new request in the tracker and returns the command that
// puts it on the wire.
func (m *Model) send(method string, params json.RawMessage, opts session.RequestOptions) tea.Cmd {
	r := m.tracker.Begin(method, params, opts, m.now())
	if m.list.filter.hidesNew() {
		// What is sent is never sent out of sight.
		m.list.filter = filterAll
	}
	if tw := m.opts.Trace; tw != nil {
		_ = tw.State(r.Created, r, r.State, r.State)
	}
	if method == wire.MethodToolsList {
		m.composer = m.composer.ToolsAsked(r.ID)
	}
	m.afterChange()
	conn, gen := m.conn, m.connGen
	req := client.Request{ID: r.ID, Method: method, Params: params, ProgressToken: r.ProgressToken, LateWindow: r.LateWindow}
	return func() tea.Msg {
		if err := conn.Send(context.Background(), req); err != nil {
			return sendFailedMsg{gen: gen, id: req.ID, err: err}
		}
		return nil
	}
}

func (m *Model) handleSendFailed(msg sendFailedMsg) {
	failed := event.Event{Kind: event.RequestFailed, Time: m.now(), RequestID: msg.id, Err: msg.err}
	m.applied(failed, m.tracker.Apply(failed))
	m.setStatus(levelError, fmt.Sprintf("#%s could not be sent: %v", msg.id, msg.err))
	m.answerRoundFailed(msg.id, msg.err)
}

// cancel records the intent and returns the command that sends the signal.
func (m *Model) cancel(id wire.ID, reason string, cause session.CancelCause) tea.Cmd {
	if r, ok := m.tracker.Get(id); ok {
		// A conversation found by an earlier round's ID (C's prompt may
		// have stayed open while a new round began): what is in flight
		// now is the current round, under its own ID.
		id = r.ID
	}
	cmd, done, declines := m.cancelWaiting(id, reason, cause)
	if done {
		return cmd
	}
	ch, err := m.tracker.RequestCancel(id, reason, cause, m.now())
	if err != nil {
		m.setStatus(levelWarn, fmt.Sprintf("#%s: nothing to cancel — %s", id, look.RefusalText(err, m.now())))
		return declineCmd(declines)
	}
	m.changed([]session.Change{ch})
	m.afterChange()
	if r, ok := m.tracker.Get(id); ok && r.IsTask() {
		// A task is cancelled with tasks/cancel, never the transport's
		// signal (which would reach nothing: its request was answered).
		m.setStatus(levelInfo, fmt.Sprintf("#%s: cancellation requested — tasks/cancel sent for task %s", id, m.line(look.ClipRunes(r.Task.ID, 40))))
		m.status.about = id
		return tea.Batch(append(m.due(m.now()), declineCmd(declines))...)
	}
	return declineAfter(cancelCmd(m.conn, m.connGen, id, reason, false), declines)
}

func cancelCmd(conn Client, gen int, id wire.ID, reason string, quiet bool) tea.Cmd {
	return func() tea.Msg {
		sig, err := conn.Cancel(id, reason)
		return cancelDoneMsg{gen: gen, id: id, signal: sig, err: err, quiet: quiet}
	}
}

func (m *Model) handleCancelDone(msg cancelDoneMsg) {
	if msg.gen != m.connGen {
		return
	}
	switch {
	case errors.Is(msg.err, client.ErrNotInFlight):
		if !msg.quiet {
			m.setStatus(levelInfo, fmt.Sprintf("#%s was already answered when the cancel went out", msg.id))
		}
	case msg.err != nil:
		// The client reported the failure itself (a CancelSent with its
		// error, on every transport), so the row says the server may never
		// have learnt of the cancel; this is the status line's word of it.
		m.setStatus(levelError, fmt.Sprintf("cancel #%s failed: %v", msg.id, msg.err))
	case !msg.quiet:
		// Who cancelled: a timeout is not the user asking.
		what := "cancellation requested"
		if r, ok := m.tracker.Get(msg.id); ok && r.Cancel != nil && r.Cancel.Cause == session.CauseTimeout {
			what = "timeout reached"
			if r.Cancel.Limit == session.LimitMax {
				what = "maximum timeout reached"
			}
		}
		m.setStatus(levelInfo, fmt.Sprintf("#%s: %s — %s", msg.id, what, look.SignalText(msg.signal)))
		m.status.about = msg.id
		// On modern HTTP the closed stream may have settled the request
		// before this acknowledgement came back.
		m.dropSettledStatus()
	}
}

// handleTick runs the deadline scheduler: send what the tracker has due,
// then let schedule pick the next tick.
func (m *Model) handleTick(msg tickMsg) tea.Cmd {
	if msg.gen != m.tickGen {
		return nil // superseded
	}
	m.tickAt = time.Time{}
	now := m.now()
	cmds := m.due(now)
	if !m.status.until.IsZero() && !now.Before(m.status.until) {
		m.status = statusLine{}
	}
	m.afterChange()
	return tea.Batch(cmds...)
}

// schedule keeps exactly one tick pending, at the nearest of: the next
// tracker deadline, the next frame while timers are visible, and the
// status line's expiry.
func (m *Model) schedule() tea.Cmd {
	now := m.now()
	var want time.Time
	consider := func(t time.Time) {
		if !t.IsZero() && (want.IsZero() || t.Before(want)) {
			want = t
		}
	}
	if d, ok := m.tracker.NextDeadline(); ok {
		consider(d)
	}
	if m.tracker.Counts().InFlight+m.tracker.Counts().Cancelling > 0 || m.state == connConnecting || m.attachTicking() {
		consider(now.Add(m.opts.FrameInterval))
	}
	consider(m.status.until)
	if want.IsZero() {
		return nil
	}
	if !m.tickAt.IsZero() && !want.Before(m.tickAt) {
		return nil // the pending tick comes soon enough
	}
	m.tickGen++
	m.tickAt = want
	gen := m.tickGen
	d := want.Sub(now)
	if d < time.Millisecond {
		d = time.Millisecond
	}
	return m.tick(d, func(time.Time) tea.Msg { return tickMsg{gen: gen} })
}

func (m *Model) setStatus(level statusLevel, text string) {
	m.status = statusLine{text: m.opts.Redact(text), level: level, until: m.now().Add(6 * time.Second)}
}

// line makes server (or user) text safe for one terminal line: secrets
// redacted first, then control sequences rendered inert.
func (m *Model) line(s string) string { return termsafe.Line(m.opts.Redact(s)) }

// block is line for multi-line text.
func (m *Model) block(s string) string { return termsafe.Block(m.opts.Redact(s)) }

// afterChange keeps the selection on the newest request while following.
func (m *Model) afterChange() {
	if m.list.follow && m.tracker.Len() > 0 && !m.followsServerRow() {
		m.list.selected = m.tracker.At(m.tracker.Len() - 1).ID
		m.list.srv = nil
	}
}

// applied records ev and what applying it changed in the trace, if the
// session is traced, and returns the changes.
func (m *Model) applied(ev event.Event, changes []session.Change) []session.Change {
	if tw := m.opts.Trace; tw != nil {
		_ = tw.Judged(ev, session.Verdict(ev.Kind, changes))
		_ = tw.Changes(m.tracker, changes)
	}
	return changes
}

// changed records what the tracker changed outside an event (a cancel
// asked for, an expired timeout) in the trace, if the session is traced.
func (m *Model) changed(changes []session.Change) {
	if tw := m.opts.Trace; tw != nil {
		_ = tw.Changes(m.tracker, changes)
	}
}

// settledStatus clears a status message about a request whose fate one
// of changes (what the tracker just changed) decided.
func (m *Model) settledStatus(changes []session.Change) {
	if m.status.about.IsZero() {
		return
	}
	for _, ch := range changes {
		if ch.Kind == session.ChangeState && ch.ID == m.status.about && ch.To.IsFinal() {
			m.status = statusLine{}
			return
		}
	}
}

// dropSettledStatus clears a status message about a request that has
// reached its fate already, for a message that may come after it (the
// acknowledgement of a cancel a closed stream settled first).
func (m *Model) dropSettledStatus() {
	if m.status.about.IsZero() {
		return
	}
	if r, ok := m.tracker.Get(m.status.about); !ok || r.State.IsFinal() {
		m.status = statusLine{}
	}
}

// reconnecting is the status line while R redials.
const reconnecting = "reconnecting…"

// selectedRequest is the request keys act on: the one the detail view
// shows, else the list's selection.
func (m *Model) selectedRequest() (*session.Request, bool) {
	if m.selectedIncoming() != nil {
		return nil, false // one of the server's own requests (incoming.go)
	}
	id := m.list.selected
	if m.mode == keymap.ModeDetail && !m.detail.ID().IsZero() {
		id = m.detail.ID()
	}
	if id.IsZero() {
		return nil, false
	}
	return m.tracker.Get(id)
}

// syncKeys enables the keys that act in the current state.
func (m *Model) syncKeys() {
	m.keys.SetState(m.keyState(m.mode))
	if m.mode == keymap.ModeHelp {
		// Help lists only the keys that act on the screen you came from.
		keys := m.keys
		keys.SetState(m.keyState(m.prev))
		var intro []string
		if m.attaching() {
			intro = m.attachv.HelpIntro(m.env())
		}
		m.helpv = m.helpv.Show(keys, intro)
	}
}

// env is what the screens read: the tracker, the time of this update or
// frame, the styles, the keys and the sanitisers.
func (m *Model) env() screen.Env {
	return screen.Env{Tracker: m.tracker, Now: m.now(), Styles: m.styles, Keys: &m.keys, Chop: m.pager.chop, Line: m.line, Block: m.block}
}

// keyState is what the key map needs to know on screen mode.
func (m *Model) keyState(mode keymap.Mode) keymap.State {
	r, ok := m.selectedRequest()
	c := m.tracker.Counts()
	closed, _ := m.tracker.TransportClosed()
	st := keymap.State{
		Mode:         mode,
		HasSelection: ok,
		AnyActive:    c.InFlight > 0,
		Connected:    m.state == connUp && !closed,
		Lost:         m.state == connLost,
		HasStderr:    m.opts.Transport == "stdio",
		Filtering:    mode == keymap.ModeLog && m.logv.Filtering(),
		EntryOpen:    mode == keymap.ModeLog && m.logv.EntryOpen(),
		Chopped:      m.pager.chop,
		HasRequests:  m.tracker.Len() > 0,
		HasAuth:      m.auth.Steps() > 0,
	}
	if mode == keymap.ModeLog {
		// Not logv.Selected: with a filter it reads the whole log, and
		// this runs on every Update. A filter that matches nothing makes
		// y say there is nothing to copy.
		st.HasEntry = m.logv.EntryOpen() || m.tracker.Log().Len() > 0
	}
	if ok {
		st.SelectedActive = r.IsActive() && r.State != session.StateCancelRequested
		st.SelectedCancelling = r.State == session.StateCancelRequested
		_, limit := r.Remaining(m.now())
		st.SelectedTimed = st.SelectedActive && limit != session.LimitNone
		st.SelectedAsks = m.asks(r)
	}
	if m.selectedIncoming() != nil {
		st.SelectedIncoming, st.SelectedAsks = true, m.incomingAsks()
	}
	if m.attaching() {
		st = m.attachv.KeyState(st)
	}
	if m.replaying() {
		st = replayKeyState(st)
	}
	if m.prompt.kind != promptNone {
		st.Mode = keymap.ModePrompt
	}
	return st
}

func (m *Model) handlePaste(msg tea.PasteMsg) tea.Cmd {
	switch {
	case m.mode == keymap.ModeComposer:
		return m.updateComposer(msg)
	case m.mode == keymap.ModeAnswer:
		var act screen.Action
		m.answer, act = m.answer.Update(m.env(), msg)
		return m.doAnswer(act)
	case m.prompt.kind == promptReason:
		var cmd tea.Cmd
		m.prompt.input, cmd = m.prompt.input.Update(msg)
		return cmd
	case m.attachv.Prompting():
		var act screen.Action
		m.attachv, act = m.attachv.Update(m.env(), m.attachInput(), msg)
		return m.attachAction(act)
	case m.mode == keymap.ModeLog:
		var act screen.Action
		m.logv, act = m.logv.Update(m.env(), msg)
		return m.logAction(msg, act)
	}
	return nil
}

// handleKey dispatches a key press by screen.
func (m *Model) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	if m.attaching() {
		if cmd, handled := m.attachKey(msg); handled {
			return cmd
		}
	}
	if m.replaying() {
		if cmd, handled := m.replayKey(msg); handled {
			return cmd
		}
	}
	if key.Matches(msg, m.keys.Interrupt) {
		return m.interrupt()
	}
	if m.prompt.kind != promptNone {
		return m.handlePromptKey(msg)
	}
	if cmd, ok := m.answerIntercept(msg); ok {
		return cmd
	}
	switch m.mode {
	case keymap.ModeComposer:
		return m.updateComposer(msg)
	case keymap.ModeAnswer:
		var act screen.Action
		m.answer, act = m.answer.Update(m.env(), msg)
		return m.doAnswer(act)
	case keymap.ModeHelp:
		var act screen.Action
		m.helpv, act = m.helpv.Update(m.env(), msg)
		switch act.(type) {
		case screen.Close:
			m.mode = m.prev
		case screen.Unused:
			return m.handleGlobalKey(msg)
		}
		return nil
	case keymap.ModeLog:
		var act screen.Action
		m.logv, act = m.logv.Update(m.env(), msg)
		return m.logAction(msg, act)
	case keymap.ModeStderr:
		var act screen.Action
		m.stderrv, act = m.stderrv.Update(m.env(), msg)
		return m.logAction(msg, act)
	case keymap.ModeDetail:
		return m.handleDetailKey(msg)
	case keymap.ModeAuth:
		var act screen.Action
		if m.auth, act = m.auth.Update(m.env(), msg); act == nil {
			return nil
		}
	case keymap.ModeList:
		if m.handleListKey(msg) {
			return nil
		}
	}
	return m.handleGlobalKey(msg)
}

// handleGlobalKey handles the keys that mean the same on every screen.
func (m *Model) handleGlobalKey(msg tea.KeyPressMsg) tea.Cmd {
	k := &m.keys
	if m.isActionKey(msg) {
		// Status text is about the present: an action replaces what the
		// line said about the last one, whether or not it can act now.
		m.status = statusLine{}
	}
	switch {
	case key.Matches(msg, k.Quit):
		return m.askQuit()
	case key.Matches(msg, k.Help):
		m.prev, m.mode = m.mode, keymap.ModeHelp
	case key.Matches(msg, k.Back):
		m.mode = keymap.ModeList
	case key.Matches(msg, k.Cancel):
		if r, ok := m.selectedRequest(); ok {
			return m.cancel(r.ID, "user requested cancellation", session.CauseUser)
		}
	case key.Matches(msg, k.CancelReason):
		if r, ok := m.selectedRequest(); ok {
			m.openReasonPrompt(r.ID)
		}
	case key.Matches(msg, k.CancelAll):
		n := m.tracker.Counts().InFlight
		m.prompt = prompt{kind: promptCancelAll, text: look.CancelAllQuestion(n)}
	case key.Matches(msg, k.StopWatching):
		m.stopWatching()
	case key.Matches(msg, k.Longer), key.Matches(msg, k.Shorter):
		return m.adjustTimeout(key.Matches(msg, k.Longer))
	case key.Matches(msg, k.New):
		m.mode = keymap.ModeComposer
		var act screen.Action
		m.composer, act = m.composer.Open(m.env())
		return m.composerDid(act)
	case key.Matches(msg, k.Reissue):
		return m.reissue()
	case key.Matches(msg, k.Edit):
		return m.edit()
	case key.Matches(msg, k.Log):
		m.mode = keymap.ModeLog
	case key.Matches(msg, k.Stderr):
		m.mode = keymap.ModeStderr
	case key.Matches(msg, k.Auth):
		m.mode = keymap.ModeAuth
	case key.Matches(msg, k.Export):
		return m.export()
	case key.Matches(msg, k.Reconnect):
		return m.reconnect()
	case key.Matches(msg, k.Copy):
		return m.copyPayload(m.payloadOf(m.mode))
	case key.Matches(msg, k.Pager), key.Matches(msg, k.Editor):
		p, ok := m.payloadOf(m.mode)
		return m.openPayload(p, ok, key.Matches(msg, k.Editor))
	case (pressed(msg, k.Cancel) || pressed(msg, k.CancelReason)) && (m.mode == keymap.ModeList || m.mode == keymap.ModeDetail):
		// Say why c or C did nothing rather than ignore it.
		m.whyNoCancel()
	case pressed(msg, k.CancelAll) && (m.mode == keymap.ModeList || m.mode == keymap.ModeLog):
		m.setStatus(levelInfo, "nothing in flight to cancel")
	case pressed(msg, k.StopWatching) && (m.mode == keymap.ModeList || m.mode == keymap.ModeDetail):
		m.stopWatching() // says why it cannot
	case (pressed(msg, k.Longer) || pressed(msg, k.Shorter)) && (m.mode == keymap.ModeList || m.mode == keymap.ModeDetail):
		// Say why the timeout cannot move rather than ignore the key.
		if r, ok := m.selectedRequest(); ok {
			switch {
			case r.State == session.StateListening:
				m.setStatus(levelInfo, fmt.Sprintf("#%s: an acknowledged subscription has no timeout", r.ID))
			case r.State == session.StateCancelRequested:
				m.setStatus(levelInfo, fmt.Sprintf("#%s: cancellation already requested; its timeout no longer runs", r.ID))
			default:
				m.setStatus(levelInfo, fmt.Sprintf("#%s is %s: its timeout no longer runs", r.ID, look.StateName(r.State)))
			}
		}
	case (pressed(msg, k.New) || pressed(msg, k.Reissue) || pressed(msg, k.Edit)) && (m.mode == keymap.ModeList || m.mode == keymap.ModeDetail):
		switch m.state {
		case connConnecting:
			m.setStatus(levelInfo, "still connecting: requests can be sent once connected")
		case connLost:
			m.setStatus(levelWarn, "not connected: press R to reconnect first")
		}
	}
	return nil
}

// pressed reports whether msg is one of b's keys, enabled or not: for
// saying why a key that does nothing now does nothing.
func pressed(msg tea.KeyPressMsg, b key.Binding) bool {
	for _, k := range b.Keys() {
		if msg.String() == k {
			return true
		}
	}
	return false
}

func (m *Model) adjustTimeout(longer bool) tea.Cmd {
	r, ok := m.selectedRequest()
	if !ok {
		return nil
	}
	delta := 10 * time.Second
	if !longer {
		delta = -delta
	}
	clamped, err := m.tracker.AdjustTimeout(r.ID, delta, m.now())
	if err != nil {
		m.setStatus(levelWarn, fmt.Sprintf("#%s: %s", r.ID, look.RefusalText(err, m.now())))
		return nil
	}
	rem, limit := r.Remaining(m.now())
	text := fmt.Sprintf("#%s: timeout now %s (%s nearer, %s left)", r.ID, look.Dur(r.Timeout.Timeout), limit, look.Dur(rem))
	switch clamped {
	case session.ClampedMax:
		text = fmt.Sprintf("#%s: timeout is at the %s maximum (%s left)", r.ID, look.Dur(r.Timeout.Max), look.Dur(rem))
	case session.ClampedFloor:
		text = fmt.Sprintf("#%s: timeout at its floor: %s left is the least", r.ID, look.Dur(session.MinTimeout))
	}
	m.setStatus(levelInfo, text)
	m.status.about = r.ID
	return nil
}

// reissue sends the selected request again with a new ID.
func (m *Model) reissue() tea.Cmd {
	r, params, ok := m.selectedToSendAgain()
	if !ok {
		return nil
	}
	reset := r.Timeout.ResetOnProgress
	// The timeout it began with, not one shortened with - since: a
	// re-issue is the same request again (issue 10: after six presses of
	// - the re-issue timed out at once).
	cmd := m.send(r.Method, params, session.RequestOptions{Timeout: r.Timeout.Asked, MaxTimeout: r.Timeout.Max, ResetOnProgress: &reset, LateWindow: r.LateWindow})
	m.list.follow = true
	m.afterChange()
	m.mode = keymap.ModeList
	m.setStatus(levelInfo, fmt.Sprintf("re-issued #%s as #%s", r.ID, m.list.selected))
	m.status.about = m.list.selected
	return cmd
}

// paramsForReissue takes the params of a request as stored (either the
// params given to Begin or the whole request as sent) without the _meta
// keys the client adds itself.
func paramsForReissue(raw []byte) json.RawMessage {
	var params json.RawMessage = raw
	if msg, err := wire.Decode(raw); err == nil && msg.Kind == wire.KindRequest {
		params = msg.Params
	}
	out := withoutRoundState(withoutProtocolMeta(params))
	if string(out) == "{}" {
		return nil
	}
	return out
}

// withoutRoundState drops a later round's inputResponses and requestState
// (multi round-trip requests): they answer one server's question in one
// conversation and must not go out with another request. A re-issue of a
// conversation starts it again. Found in review.
func withoutRoundState(obj json.RawMessage) json.RawMessage {
	if !bytes.Contains(obj, []byte(`"inputResponses"`)) && !bytes.Contains(obj, []byte(`"requestState"`)) {
		return obj
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil {
		return obj
	}
	delete(m, "inputResponses")
	delete(m, "requestState")
	out, err := json.Marshal(m)
	if err != nil {
		return obj
	}
	return out
}

// protocolMeta are the _meta keys the protocol layer adds to every request
// or result: boilerplate when a person reads a payload or re-sends it.
var protocolMeta = []string{wire.MetaProtocolVersion, wire.MetaClientCapabilities, wire.MetaClientInfo, wire.MetaProgressToken, wire.MetaServerInfo}

// withoutProtocolMeta returns a JSON object without the protocol's _meta
// keys (and without _meta when nothing else is left in it); anything that
// is not an object is returned as it is.
func withoutProtocolMeta(obj json.RawMessage) json.RawMessage {
	if !bytes.Contains(obj, []byte(`"_meta"`)) {
		return obj
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(obj, &fields) != nil {
		return obj
	}
	var meta map[string]json.RawMessage
	if json.Unmarshal(fields["_meta"], &meta) != nil {
		return obj
	}
	for _, k := range protocolMeta {
		delete(meta, k)
	}
	if len(meta) == 0 {
		delete(fields, "_meta")
	} else {
		fields["_meta"], _ = json.Marshal(meta)
	}
	out, err := json.Marshal(fields)
	if err != nil {
		return obj
	}
	return out
}

func (m *Model) openReasonPrompt(id wire.ID) {
	in := look.NewTextInput()
	in.Prompt = "reason: "
	in.Placeholder = "user requested cancellation"
	in.CharLimit = 200
	in.Focus()
	p := prompt{kind: promptReason, id: id, input: in, text: fmt.Sprintf("Cancel #%s with a reason", id)}
	if info, _ := m.tracker.Conn(); info.Transport == event.TransportHTTP && info.Era == event.EraModern {
		// The cancel is the closing of the stream: no message carries the
		// reason, so the user must not think the server will read it.
		p.note = "kept here only: modern HTTP cancels by closing the stream, which carries no reason"
	}
	m.prompt = p
}

func (m *Model) handlePromptKey(msg tea.KeyPressMsg) tea.Cmd {
	p := &m.prompt
	switch p.kind {
	case promptReason:
		switch msg.String() {
		case "esc":
			m.prompt = prompt{}
			return nil
		case "enter":
			reason := strings.TrimSpace(p.input.Value())
			if reason == "" {
				reason = "user requested cancellation"
			}
			id := p.id
			m.prompt = prompt{}
			return m.cancel(id, reason, session.CauseUser)
		}
		var cmd tea.Cmd
		p.input, cmd = p.input.Update(msg)
		return cmd
	case promptQuit, promptCancelAll:
		switch msg.String() {
		case "y", "Y", "enter":
			kind := p.kind
			m.prompt = prompt{}
			if kind == promptQuit {
				return m.quit("client shutting down", session.CauseShutdown)
			}
			return m.cancelAll("user cancelled all requests", session.CauseUser)
		case "n", "N", "esc", "q":
			m.prompt = prompt{}
		}
	}
	return nil
}

// cancelAll cancels every request in flight.
func (m *Model) cancelAll(reason string, cause session.CancelCause) tea.Cmd {
	var cmds []tea.Cmd
	n, asked := 0, len(m.questions)
	for _, id := range m.activeIDs() {
		cmd, ok := m.cancelQuiet(id, reason, cause)
		if ok {
			n++
		}
		if cmd != nil {
			cmds = append(cmds, cmd)
		}
	}
	qs := m.takeAllQuestions()
	m.setStatus(levelInfo, cancelAllStatus(n, asked))
	return declineAfterAll(cmds, qs)
}

// cancelQuiet cancels id as X does, as c would: a conversation waiting
// for the user is dropped (nothing is on the wire), a legacy server's
// questions open on the request are declined after its cancel.
func (m *Model) cancelQuiet(id wire.ID, reason string, cause session.CancelCause) (tea.Cmd, bool) {
	r, _ := m.tracker.Get(id)
	waiting := r != nil && r.State == session.StateWaitingInput
	ch, err := m.tracker.RequestCancel(id, reason, cause, m.now())
	if err != nil {
		return nil, false
	}
	m.changed([]session.Change{ch})
	if waiting {
		if m.answer.ID() == id {
			m.closeAnswer()
		}
		return nil, true
	}
	qs := m.takeQuestions(id)
	if r, ok := m.tracker.Get(id); ok && r.IsTask() {
		return tea.Batch(append(m.due(m.now()), declineCmd(qs))...), true
	}
	return declineAfter(cancelCmd(m.conn, m.connGen, id, reason, true), qs), true
}

// activeIDs lists requests still in flight (not already cancelling).
func (m *Model) activeIDs() []wire.ID {
	var ids []wire.ID
	for i := m.tracker.Len() - 1; i >= 0; i-- {
		r := m.tracker.At(i)
		if r.IsActive() && r.State != session.StateCancelRequested && !isTaskRequest(r) {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

func (m *Model) askQuit() tea.Cmd {
	n := len(m.activeIDs())
	if n == 0 || m.state != connUp {
		return m.quit("", session.CauseShutdown)
	}
	m.prompt = prompt{kind: promptQuit, text: fmt.Sprintf("%d %s in flight. Cancel %s and quit?", n, look.CountNoun(n, "request", "requests"), look.CountNoun(n, "it", "them"))}
	return nil
}

// Interrupted reports whether the program ended because of Ctrl+C or a
// signal (what was in flight was cancelled as "interrupted"), rather than
// because the user quit: the command's exit code says so, as call's does.
func (m *Model) Interrupted() bool { return m.interrupted }

// interrupt is Ctrl+C: cancel everything in flight with reason
// "interrupted", then quit without asking.
func (m *Model) interrupt() tea.Cmd {
	return m.quit("interrupted", session.CauseInterrupted)
}

// quit cancels what is in flight (properly, with the right signal) and
// then ends the program. The cancels get a bounded time to go out.
// quitCancelWait bounds how long quitting waits for its cancels to go out.
const quitCancelWait = 3 * time.Second

func (m *Model) quit(reason string, cause session.CancelCause) tea.Cmd {
	if m.quitting || m.attaching() || m.replaying() {
		return m.exit() // a view on a proxy detaches: the host's requests are not its own
	}
	m.quitting = true
	m.interrupted = cause == session.CauseInterrupted
	var ids []wire.ID
	var taskCancels []client.Request
	if m.state == connUp {
		for _, id := range m.activeIDs() {
			if ch, err := m.tracker.RequestCancel(id, reason, cause, m.now()); err == nil {
				m.changed([]session.Change{ch})
				if r, _ := m.tracker.Get(id); !r.IsTask() {
					ids = append(ids, id)
				}
			}
		}
		// Tasks get their tasks/cancel (the polls due now are not sent);
		// a timeout that expired just now is cancelled with the rest.
		d := m.tracker.Due(m.now())
		m.changed(d.Changes)
		for _, x := range d.Cancels {
			ids = append(ids, x.ID)
		}
		for _, r := range d.Requests {
			if r.Method == wire.MethodTasksCancel {
				taskCancels = append(taskCancels, client.Request{ID: r.ID, Method: r.Method, Params: r.ChildParams, LateWindow: r.LateWindow})
			}
		}
	}
	if len(ids)+len(taskCancels) == 0 {
		return m.exit()
	}
	conn := m.conn
	if len(taskCancels) > 0 {
		n := len(ids) + len(taskCancels)
		m.setStatus(levelInfo, fmt.Sprintf("cancelling %d %s before quitting…", n, look.CountNoun(n, "request", "requests")))
		return func() tea.Msg {
			ctx, cancel := context.WithTimeout(context.Background(), quitCancelWait)
			defer cancel()
			for _, r := range taskCancels {
				_ = conn.Send(ctx, r)
			}
			conn.CancelAll(ids, reason, quitCancelWait)
			return quitReadyMsg{}
		}
	}
	m.setStatus(levelInfo, fmt.Sprintf("cancelling %d %s before quitting…", len(ids), look.CountNoun(len(ids), "request", "requests")))
	return func() tea.Msg {
		conn.CancelAll(ids, reason, quitCancelWait)
		return quitReadyMsg{}
	}
}

// reconnect replaces a lost connection with a new one (a stdio server is
// restarted). History stays; the old connection is closed in the background.
func (m *Model) reconnect() tea.Cmd {
	old := m.conn
	dial := m.opts.Dial
	m.state = connConnecting
	m.setStatus(levelInfo, reconnecting)
	return func() tea.Msg {
		if old != nil {
			_ = old.Close()
		}
		conn, err := dial()
		return redialMsg{conn: conn, err: err}
	}
}

func (m *Model) handleRedial(msg redialMsg) tea.Cmd {
	if msg.err != nil {
		m.state = connLost
		m.connErr = msg.err
		m.setStatus(levelError, "reconnect failed: "+msg.err.Error())
		return nil
	}
	m.conn = msg.conn
	return m.startConn()
}

// export writes the protocol log as a trace file, off the Update path.
func (m *Model) export() tea.Cmd {
	if m.opts.Export == nil {
		m.setStatus(levelWarn, "export is not available")
		return nil
	}
	lg := m.tracker.Log()
	snap := Snapshot{Entries: make([]session.LogEntry, lg.Len()), Start: m.tracker.ConnectedAt(), Dropped: lg.Total() - int64(lg.Len())}
	for i := range snap.Entries {
		snap.Entries[i] = lg.At(i)
	}
	if len(snap.Entries) > 0 && (snap.Start.IsZero() || snap.Entries[0].Time.Before(snap.Start)) {
		snap.Start = snap.Entries[0].Time
	}
	name := fmt.Sprintf("inflight-trace-%s.jsonl", m.now().Format("20060102-150405"))
	dir := m.opts.ExportDir
	write := m.opts.Export
	m.setStatus(levelInfo, "writing "+name+"…")
	return func() tea.Msg {
		// Resolving the directory is I/O too, so it happens here, not in
		// Update; the status line then names the file in full.
		path := filepath.Join(dir, name)
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
		written, err := write(path, snap)
		if written == "" {
			written = path
		}
		return exportDoneMsg{path: written, err: err}
	}
}
