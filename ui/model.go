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
	"time"
	"unsafe"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"inflight/client"
	"inflight/event"
	"inflight/keymap"
	"inflight/otlp"
	"inflight/session"
	"inflight/source"
	"inflight/termsafe"
	"inflight/trace"
	"inflight/ui/attach"
	"inflight/ui/composer"
	"inflight/ui/list"
	"inflight/ui/logview"
	"inflight/ui/look"
	"inflight/ui/prompt"
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
	// Spans, when set, sends the session as OpenTelemetry spans (--otlp),
	// from the same events and changes as Trace. The caller closes it.
	Spans *otlp.Sink
	// Notices, when set, delivers sentences for the status line from
	// outside the UI (the OTLP export's one warning).
	Notices <-chan string
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

// Model is the root model: it routes keys and messages to the screens,
// owns the tracker, the connection and the clock, and carries out the
// actions the screens return.
type Model struct {
	opts    Options
	tracker *session.Tracker
	// conn is the link to the server (connection.go).
	conn connection

	keys  keymap.KeyMap
	theme theme
	size  size
	focus focus
	// screens are the screens' own models (screens.go).
	screens screens
	pager   pager

	// status is the transient message line (status.go).
	status statusLine
	// clock is the one timer (clock.go).
	clock *clock
	// ending is how the program is ending, once it is.
	ending ending
	// feed is how a proxy's stream feeds the tracker (Options.Attach).
	feed proxyFeed

	// The server's questions: the legacy ones waiting for the user
	// (questions.go), and the answer form (answering.go).
	questions questionQueue
	answering answering
}

// exportDoneMsg is the end of an export: the file written, or why not.
type exportDoneMsg struct {
	path string
	err  error
}

// noticeMsg is a sentence for the status line from Options.Notices.
type noticeMsg string

// waitNotice waits for the next of notices (nil: none come).
func waitNotice(notices <-chan string, stop <-chan struct{}) tea.Cmd {
	if notices == nil {
		return nil
	}
	return func() tea.Msg {
		select {
		case text := <-notices:
			return noticeMsg(text)
		case <-stop:
			return nil
		}
	}
}

// ShutdownMsg asks the UI to cancel everything in flight with Reason and
// quit, as Ctrl+C does. The program's owner sends it when a signal arrives
// (Bubble Tea's own InterruptMsg ends the program before the model sees it).
type ShutdownMsg struct{ Reason string }

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
		size:    size{width: 80, height: 24},
	}
	m.conn = newConnection(opts.Source)
	m.clock = newClock()
	m.pager.exec = tea.Exec
	m.theme.set(opts.Dark)
	m.screens.list = list.New()
	m.screens.logv = logview.New()
	m.screens.stderrv = logview.NewStderr()
	m.screens.composer = composer.New(opts.LogLevel)
	if a := opts.Attach; a != nil {
		m.screens.attachv = attach.New(attach.Proxy{Name: a.Proxy.Name, Command: a.Proxy.Command, Transport: opts.Transport, Acts: a.Act != nil, InProcess: a.InProcess})
		m.feed = newProxyFeed(a.Proxy.HistoryCut, func(ev *event.Event) { redactEvent(opts.RedactBytes, ev) }, m.opts.line)
	}
	return m, nil
}

// Tracker exposes the session (read-only) for tests and the exit summary.
func (m *Model) Tracker() *session.Tracker { return m.tracker }

// Conn returns the current connection, so the caller can close it after
// the program ends.
func (m *Model) Conn() Client { return m.conn.client }

// Stop releases the model's pending timers. The program's owner calls it
// once the program has ended however it ended (a quit does it already; a
// panic or a kill does not).
func (m *Model) Stop() { m.clock.stop() }

// Init dials, connects and starts listening for events.
func (m *Model) Init() tea.Cmd {
	if m.opts.attaching() {
		return m.initAttach()
	}
	if m.opts.replaying() {
		return m.initReplay()
	}
	conn, err := m.opts.Dial()
	if err != nil {
		m.conn.lose(err)
		return tea.RequestBackgroundColor
	}
	var asked tea.Cmd
	if m.opts.Questions != nil {
		asked = waitQuestion(m.opts.Questions, m.clock.done())
	}
	return tea.Batch(tea.RequestBackgroundColor, m.conn.begin(conn), asked, waitNotice(m.opts.Notices, m.clock.done()))
}

// Update routes every message to one handler, lays out what the views
// read (layout), and schedules the clock.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	selected, shown := m.screens.list.Selected(), m.screens.shownDetail(m.focus)
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.size.width, m.size.height = msg.Width, msg.Height
	case tea.BackgroundColorMsg:
		m.theme.set(msg.IsDark())
	case eventsMsg:
		cmd = m.handleEvents(msg)
	case actFailedMsg:
		m.setStatus(levelError, "could not ask the proxy: "+m.opts.line(msg.err.Error()))
	case connectedMsg:
		cmd = m.handleConnected(msg)
	case tickMsg:
		cmd = m.handleTick(msg)
	case replayTickMsg:
		cmd = m.handleReplayTick(msg)
	case sendFailedMsg:
		m.status.say(sendFailed(m.tracker, m.opts.records(), msg, m.opts.moment()), m.opts.Redact, m.opts.moment())
		m.focus.mode = m.answering.roundFailed(msg.id, msg.err, m.focus.mode)
	case cancelDoneMsg:
		if m.conn.current(msg.gen) {
			m.status.say(cancelDone(m.tracker, msg), m.opts.Redact, m.opts.moment())
			// On modern HTTP the closed stream may have settled the
			// request before this acknowledgement came back.
			m.status.dropSettled(m.tracker)
		}
	case exportDoneMsg:
		if msg.err != nil {
			m.setStatus(levelError, "export failed: "+msg.err.Error())
		} else {
			m.setStatus(levelInfo, "trace written to "+msg.path)
		}
	case redialMsg:
		if cmd = m.conn.redialed(msg); msg.err != nil {
			m.setStatus(levelError, "reconnect failed: "+msg.err.Error())
		}
	case questionMsg:
		cmd = m.handleQuestion(msg)
	case noticeMsg:
		// The export's warning holds for the rest of the run: it stays
		// on the status line under whatever else is said.
		m.status.stand(m.opts.Redact(string(msg)), m.opts.moment())
		cmd = waitNotice(m.opts.Notices, m.clock.done())
	case viewerDoneMsg:
		m.setStatus(viewerDoneStatus(msg, m.opts.line))
	case quitReadyMsg:
		return m, m.clock.end()
	case tea.InterruptMsg:
		cmd = m.quit("interrupted", session.CauseInterrupted)
	case ShutdownMsg:
		cmd = m.quit(msg.Reason, session.CauseInterrupted)
	case tea.KeyPressMsg:
		cmd = m.handleKey(msg)
	case tea.PasteMsg:
		cmd = m.handlePaste(msg)
	case tea.MouseWheelMsg:
		cmd = m.handleWheel(msg)
	default:
		if m.focus.mode == keymap.ModeComposer {
			cmd = m.updateComposer(msg)
		} else if m.focus.mode == keymap.ModeAnswer {
			var act screen.Action
			m.answering.form, act = m.answering.form.Update(m.env(), msg)
			cmd = m.doAnswer(act)
		} else if m.screens.prompt.TakesText() {
			cmd = m.updatePrompt(msg)
		} else if m.screens.attachv.Prompting() {
			var act screen.Action
			m.screens.attachv, act = m.screens.attachv.Update(m.env(), m.screens.attachInput(m.tracker, m.focus.mode, &m.feed), msg)
			cmd = m.attachAction(act)
		}
	}
	m.layout()
	m.status.followSelection(m.focus.mode, selected, shown, m.screens.list.Selected(), m.screens.shownDetail(m.focus))
	m.syncKeys()
	return m, tea.Batch(cmd, m.schedule())
}

// moment is the UI's clock: in a replay, the moment shown.
func (o Options) moment() time.Time {
	if o.replaying() {
		return o.replayNow()
	}
	return o.Now()
}

func (m *Model) handleEvents(msg eventsMsg) tea.Cmd {
	if !m.conn.current(msg.gen) {
		return nil // an old connection's events
	}
	// listed: the composer's next pages of resources and prompts.
	var listed []tea.Cmd
	for i := range msg.items {
		if m.opts.attaching() {
			m.screens.heedFeed(m.feed.apply(m.tracker, &msg.items[i]), &m.conn, &m.status, m.opts.Source.Err(), m.opts.Redact, m.opts.moment())
			continue
		}
		ev := &msg.items[i].Event
		redactEvent(m.opts.RedactBytes, ev)
		changes := traceApplied(m.opts.records(), m.tracker, *ev, m.tracker.Apply(*ev))
		m.status.settled(changes)
		if cmd := m.autoAnswer(changes); cmd != nil {
			listed = append(listed, cmd)
		}
		if m.conn.observe(ev, m.ending.quitting) {
			// A request could not reach the server (over HTTP, nothing
			// else says it went away). What else is in flight shares its
			// fate: the tracker ends it now, as for a closed transport, so
			// that no request stays running on a connection the UI calls
			// lost (or on the next one, after R).
			lost := event.Event{Kind: event.TransportClosed, Time: ev.Time, Err: ev.Err}
			m.status.settled(traceApplied(m.opts.records(), m.tracker, lost, m.tracker.Apply(lost)))
		}
		switch ev.Kind {
		case event.Auth:
			m.screens.auth.Record(ev)
		case event.Received:
			if !ev.Msg.IsResponse() || !m.screens.composer.Awaits(ev.RequestID) {
				break
			}
			var act screen.Action
			m.screens.composer, act = m.screens.composer.Received(m.env(), ev)
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
		m.screens.followNewest(m.tracker)
		if m.conn.startDue() {
			start = m.start()
		}
		if len(m.opts.Calls) > 0 && toolsListed(m.tracker) {
			listed = append(listed, sendCalls(m.tracker, &m.conn, m.screens.composer, &m.opts.Calls, m.send))
		}
	}
	if msg.closed {
		if m.opts.attaching() {
			m.screens.heedFeed(m.feed.end(), &m.conn, &m.status, m.opts.Source.Err(), m.opts.Redact, m.opts.moment())
		}
		return tea.Batch(append(listed, start)...)
	}
	return tea.Batch(append(listed, start, m.conn.pump())...)
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

// redactEvent replaces the secrets in an event's bytes with redactBytes
// (Options.RedactBytes) before the session keeps them: a secret the server
// echoed with its own JSON escaping would otherwise reach the protocol log,
// the detail view and exports. The envelope is decoded again from the
// redacted bytes, so that nothing the session keeps still holds the secret.
func redactEvent(redactBytes func([]byte) []byte, ev *event.Event) {
	if redactBytes == nil || len(ev.Raw) == 0 {
		return
	}
	red := redactBytes(ev.Raw)
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

// handleConnected takes Connect's reply: the connection is up (or the
// banner says why not), and its first requests go out once the tracker has
// applied its handshake.
func (m *Model) handleConnected(msg connectedMsg) tea.Cmd {
	up, startNow := m.conn.connected(msg)
	if up {
		m.status.clearIf(reconnecting)
	}
	if !startNow {
		return nil
	}
	return m.start()
}

// start sends the first requests of a connection.
func (m *Model) start() tea.Cmd {
	m.conn.started()
	m.screens.composer = m.screens.composer.NewConnection()
	var cmds []tea.Cmd
	// Ask for the tools right away so the composer is ready; it is a real
	// request and shows in the list like any other.
	cmds = append(cmds, m.send(wire.MethodToolsList, nil, session.RequestOptions{}))
	// A legacy server logs at the connection's level: ask for it at once,
	// before the --call requests (the composer may change it later).
	var set tea.Cmd
	if info, ok := m.tracker.Conn(); ok && info.Era != event.EraModern {
		_, level := m.conn.withLogLevel(m.tracker, wire.MethodToolsCall, nil, m.screens.composer.LogLevel())
		set = m.setLogLevel(level)
	}
	if !waitsForTools(m.tracker, m.opts.Calls) {
		cmds = append(cmds, sendCalls(m.tracker, &m.conn, m.screens.composer, &m.opts.Calls, m.send))
	}
	return inOrder(set, tea.Batch(cmds...))
}

// send records a new request in the tracker and returns the command that
// puts it on the wire.
func (m *Model) send(method string, params json.RawMessage, opts session.RequestOptions) tea.Cmd {
	r := m.tracker.Begin(method, params, opts, m.opts.moment())
	// What is sent is never sent out of sight.
	m.screens.list = m.screens.list.ShowNew()
	if tw := m.opts.Trace; tw != nil {
		_ = tw.State(r.Created, r, r.State, r.State)
	}
	if method == wire.MethodToolsList {
		m.screens.composer = m.screens.composer.ToolsAsked(r.ID)
	}
	m.screens.followNewest(m.tracker)
	return m.conn.send(client.Request{ID: r.ID, Method: method, Params: params, ProgressToken: r.ProgressToken, LateWindow: r.LateWindow})
}

// sendFailed applies a send that failed to the tracker (and the trace):
// the request failed, and the notice says why.
func sendFailed(t *session.Tracker, rec records, msg sendFailedMsg, now time.Time) notice {
	failed := event.Event{Kind: event.RequestFailed, Time: now, RequestID: msg.id, Err: msg.err}
	traceApplied(rec, t, failed, t.Apply(failed))
	return notice{level: levelError, text: fmt.Sprintf("#%s could not be sent: %v", msg.id, msg.err)}
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
	ch, err := m.tracker.RequestCancel(id, reason, cause, m.opts.moment())
	if err != nil {
		m.setStatus(levelWarn, fmt.Sprintf("#%s: nothing to cancel — %s", id, look.RefusalText(err, m.opts.moment())))
		return declineCmd(declines)
	}
	traceChanged(m.opts.records(), m.tracker, []session.Change{ch})
	m.screens.followNewest(m.tracker)
	if r, ok := m.tracker.Get(id); ok && r.IsTask() {
		// A task is cancelled with tasks/cancel, never the transport's
		// signal (which would reach nothing: its request was answered).
		m.setStatus(levelInfo, fmt.Sprintf("#%s: cancellation requested — tasks/cancel sent for task %s", id, m.opts.line(look.ClipRunes(r.Task.ID, 40))))
		m.status.about = id
		return tea.Batch(append(m.due(m.opts.moment()), declineCmd(declines))...)
	}
	return declineAfter(m.conn.cancel(id, reason, false), declines)
}

// cancelDone is what the status line says once a cancel's signal went
// out (or could not): who cancelled and with which signal, or why it
// failed; nothing for a quiet one that went.
func cancelDone(t *session.Tracker, msg cancelDoneMsg) notice {
	switch {
	case errors.Is(msg.err, client.ErrNotInFlight):
		if !msg.quiet {
			return notice{level: levelInfo, text: fmt.Sprintf("#%s was already answered when the cancel went out", msg.id)}
		}
	case msg.err != nil:
		// The client reported the failure itself (a CancelSent with its
		// error, on every transport), so the row says the server may never
		// have learnt of the cancel; this is the status line's word of it.
		return notice{level: levelError, text: fmt.Sprintf("cancel #%s failed: %v", msg.id, msg.err)}
	case !msg.quiet:
		// Who cancelled: a timeout is not the user asking.
		what := "cancellation requested"
		if r, ok := t.Get(msg.id); ok && r.Cancel != nil && r.Cancel.Cause == session.CauseTimeout {
			what = "timeout reached"
			if r.Cancel.Limit == session.LimitMax {
				what = "maximum timeout reached"
			}
		}
		return notice{level: levelInfo, text: fmt.Sprintf("#%s: %s — %s", msg.id, what, look.SignalText(msg.signal)), about: msg.id}
	}
	return notice{}
}

// handleTick runs the deadline scheduler: send what the tracker has due,
// then let schedule pick the next tick.
func (m *Model) handleTick(msg tickMsg) tea.Cmd {
	if !m.clock.fired(msg) {
		return nil // superseded
	}
	now := m.opts.moment()
	cmds := m.due(now)
	m.opts.Spans.Advance(now)
	m.status.expire(now)
	m.screens.followNewest(m.tracker)
	return tea.Batch(cmds...)
}

// schedule keeps the clock's one tick at the nearest of: the next tracker
// deadline, the next frame while timers are visible, and the status
// line's expiry.
func (m *Model) schedule() tea.Cmd {
	now := m.opts.moment()
	var deadline, frame time.Time
	if d, ok := m.tracker.NextDeadline(); ok {
		deadline = d
	}
	if m.tracker.Counts().InFlight+m.tracker.Counts().Cancelling > 0 || m.conn.state == connConnecting || m.feed.ticking() {
		frame = now.Add(m.opts.FrameInterval)
	}
	// A finished request's span ends when its linger is over, quiet or
	// not, so the collector has it (or its failure is said) in time.
	linger, _ := m.opts.Spans.Lingering()
	return m.clock.schedule(now, deadline, frame, m.status.until, linger)
}

// setStatus shows text, redacted, on the status line.
func (m *Model) setStatus(level statusLevel, text string) {
	m.status.set(level, m.opts.Redact(text), m.opts.moment())
}

// line makes server (or user) text safe for one terminal line: secrets
// redacted first, then control sequences rendered inert.
func (o Options) line(s string) string { return termsafe.Line(o.Redact(s)) }

// block is line for multi-line text.
func (o Options) block(s string) string { return termsafe.Block(o.Redact(s)) }

// followNewest keeps the list's selection on the newest request while
// following.
func (s *screens) followNewest(t *session.Tracker) {
	s.list = s.list.FollowNewest(t)
}

// records are where the session is recorded as it goes: the --trace
// file and the OTLP spans (either nil when not asked for).
type records struct {
	trace *trace.Writer
	spans *otlp.Sink
}

func (o Options) records() records { return records{o.Trace, o.Spans} }

// traceApplied records ev and what applying it changed in the trace and
// the spans, if the session is recorded, and returns the changes.
func traceApplied(rec records, t *session.Tracker, ev event.Event, changes []session.Change) []session.Change {
	if tw := rec.trace; tw != nil {
		_ = tw.Judged(ev, session.Verdict(ev.Kind, changes))
		_ = tw.Changes(t, changes)
	}
	rec.spans.Applied(t, &ev, changes)
	return changes
}

// traceChanged records what the tracker changed outside an event (a cancel
// asked for, an expired timeout) in the trace and the spans, if the
// session is recorded.
func traceChanged(rec records, t *session.Tracker, changes []session.Change) {
	if tw := rec.trace; tw != nil {
		_ = tw.Changes(t, changes)
	}
	if len(changes) > 0 {
		rec.spans.Applied(t, nil, changes)
	}
}

// selectedRequest is the request keys act on: the one the detail view
// shows, else the list's selection.
func (s *screens) selectedRequest(t *session.Tracker, mode keymap.Mode) (*session.Request, bool) {
	if s.selectedIncoming(mode) != nil {
		return nil, false // one of the server's own requests (incoming.go)
	}
	id := s.list.Selected()
	if mode == keymap.ModeDetail && !s.detail.ID().IsZero() {
		id = s.detail.ID()
	}
	if id.IsZero() {
		return nil, false
	}
	return t.Get(id)
}

// syncKeys enables the keys that act in the current state.
func (m *Model) syncKeys() {
	m.keys.SetState(m.keyState(m.focus.mode))
	if m.focus.mode == keymap.ModeHelp {
		// Help lists only the keys that act on the screen you came from.
		keys := m.keys
		keys.SetState(m.keyState(m.focus.prev))
		var intro []string
		if m.opts.attaching() {
			intro = m.screens.attachv.HelpIntro(m.env())
		}
		m.screens.helpv = m.screens.helpv.Show(keys, intro)
	}
}

// env is what the screens read: the tracker, the time of this update or
// frame, the styles, the keys and the sanitisers.
func (m *Model) env() screen.Env {
	return screen.Env{Tracker: m.tracker, Now: m.opts.moment(), Styles: m.theme.styles, Keys: &m.keys, Chop: m.pager.chop, Line: m.opts.line, Block: m.opts.block}
}

// keyState is what the key map needs to know on screen mode.
func (m *Model) keyState(mode keymap.Mode) keymap.State {
	r, ok := m.screens.selectedRequest(m.tracker, m.focus.mode)
	c := m.tracker.Counts()
	closed, _ := m.tracker.TransportClosed()
	st := keymap.State{
		Mode:         mode,
		Waterfall:    m.focus.waterfallOn,
		HasSelection: ok,
		AnyActive:    c.InFlight > 0,
		Connected:    m.conn.state == connUp && !closed,
		Lost:         m.conn.state == connLost,
		HasStderr:    m.opts.Transport == "stdio",
		Filtering:    mode == keymap.ModeLog && m.screens.logv.Filtering(),
		EntryOpen:    mode == keymap.ModeLog && m.screens.logv.EntryOpen(),
		Chopped:      m.pager.chop,
		HasRequests:  m.tracker.Len() > 0,
		HasAuth:      m.screens.auth.Steps() > 0,
	}
	if mode == keymap.ModeLog {
		// Not logv.Selected: with a filter it reads the whole log, and
		// this runs on every Update. A filter that matches nothing makes
		// y say there is nothing to copy.
		st.HasEntry = m.screens.logv.EntryOpen() || m.tracker.Log().Len() > 0
	}
	if ok {
		st.SelectedActive = r.IsActive() && r.State != session.StateCancelRequested
		st.SelectedCancelling = r.State == session.StateCancelRequested
		_, limit := r.Remaining(m.opts.moment())
		st.SelectedTimed = st.SelectedActive && limit != session.LimitNone
		st.SelectedAsks = m.questions.asks(m.tracker, r)
	}
	if m.screens.selectedIncoming(m.focus.mode) != nil {
		st.SelectedIncoming, st.SelectedAsks = true, m.questions.of(m.screens.selectedIncoming(m.focus.mode)) != nil
	}
	if m.opts.attaching() {
		st = m.screens.attachv.KeyState(st, ok && m.feed.held(r))
	}
	if m.opts.replaying() {
		st = replayKeyState(st)
	}
	if m.screens.prompt.Open() {
		st.Mode = keymap.ModePrompt
	}
	return st
}

func (m *Model) handlePaste(msg tea.PasteMsg) tea.Cmd {
	switch {
	case m.focus.mode == keymap.ModeComposer:
		return m.updateComposer(msg)
	case m.focus.mode == keymap.ModeAnswer:
		var act screen.Action
		m.answering.form, act = m.answering.form.Update(m.env(), msg)
		return m.doAnswer(act)
	case m.screens.prompt.TakesText():
		return m.updatePrompt(msg)
	case m.screens.attachv.Prompting():
		var act screen.Action
		m.screens.attachv, act = m.screens.attachv.Update(m.env(), m.screens.attachInput(m.tracker, m.focus.mode, &m.feed), msg)
		return m.attachAction(act)
	case m.focus.mode == keymap.ModeLog:
		var act screen.Action
		m.screens.logv, act = m.screens.logv.Update(m.env(), msg)
		return m.logAction(msg, act)
	}
	return nil
}

// handleKey dispatches a key press by screen.
func (m *Model) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	if m.opts.attaching() {
		if cmd, handled := m.attachKey(msg); handled {
			return cmd
		}
	}
	if m.opts.replaying() {
		if cmd, handled := m.replayKey(msg); handled {
			return cmd
		}
	}
	if key.Matches(msg, m.keys.Interrupt) {
		return m.quit("interrupted", session.CauseInterrupted)
	}
	if m.screens.prompt.Open() {
		return m.updatePrompt(msg)
	}
	if cmd, ok := m.answerIntercept(msg); ok {
		return cmd
	}
	switch m.focus.mode {
	case keymap.ModeComposer:
		return m.updateComposer(msg)
	case keymap.ModeAnswer:
		var act screen.Action
		m.answering.form, act = m.answering.form.Update(m.env(), msg)
		return m.doAnswer(act)
	case keymap.ModeHelp:
		var act screen.Action
		m.screens.helpv, act = m.screens.helpv.Update(m.env(), msg)
		switch act.(type) {
		case screen.Close:
			m.focus.mode = m.focus.prev
		case screen.Unused:
			return m.handleGlobalKey(msg)
		}
		return nil
	case keymap.ModeLog:
		var act screen.Action
		m.screens.logv, act = m.screens.logv.Update(m.env(), msg)
		return m.logAction(msg, act)
	case keymap.ModeStderr:
		var act screen.Action
		m.screens.stderrv, act = m.screens.stderrv.Update(m.env(), msg)
		return m.logAction(msg, act)
	case keymap.ModeDetail:
		return m.detailInput(msg)
	case keymap.ModeAuth:
		var act screen.Action
		if m.screens.auth, act = m.screens.auth.Update(m.env(), msg); act == nil {
			return nil
		}
	case keymap.ModeList:
		if m.focus.waterfallOn {
			return m.waterfallKey(msg)
		}
		if key.Matches(msg, m.keys.Waterfall) {
			m.screens.toggleWaterfall(&m.focus, m.env(), m.size.width, m.chrome().bodyHeight(m.size.height))
			return nil
		}
		var act screen.Action
		m.screens.list, act = m.screens.list.Update(m.env(), msg)
		return m.listAction(msg, act)
	}
	return m.handleGlobalKey(msg)
}

// handleGlobalKey handles the keys that mean the same on every screen.
func (m *Model) handleGlobalKey(msg tea.KeyPressMsg) tea.Cmd {
	k := &m.keys
	if isActionKey(&m.keys, msg) {
		// Status text is about the present: an action replaces what the
		// line said about the last one, whether or not it can act now.
		m.status.clear()
	}
	switch {
	case key.Matches(msg, k.Quit):
		return m.askQuit()
	case key.Matches(msg, k.Help):
		m.focus.prev, m.focus.mode = m.focus.mode, keymap.ModeHelp
	case key.Matches(msg, k.Back):
		m.focus.mode = keymap.ModeList
	case key.Matches(msg, k.Cancel):
		if r, ok := m.screens.selectedRequest(m.tracker, m.focus.mode); ok {
			return m.cancel(r.ID, "user requested cancellation", session.CauseUser)
		}
	case key.Matches(msg, k.CancelReason):
		if r, ok := m.screens.selectedRequest(m.tracker, m.focus.mode); ok {
			m.screens.prompt = prompt.AskReason(m.env(), r.ID)
		}
	case key.Matches(msg, k.CancelAll):
		n := m.tracker.Counts().InFlight
		m.screens.prompt = prompt.Ask(prompt.CancelAll, look.CancelAllQuestion(n))
	case key.Matches(msg, k.StopWatching):
		r, ok := m.screens.selectedRequest(m.tracker, m.focus.mode)
		m.status.say(stopWatching(m.tracker, m.opts.records(), r, ok, m.opts.moment()), m.opts.Redact, m.opts.moment())
		m.screens.followNewest(m.tracker)
	case key.Matches(msg, k.Longer), key.Matches(msg, k.Shorter):
		if r, ok := m.screens.selectedRequest(m.tracker, m.focus.mode); ok {
			m.status.say(adjustTimeout(m.tracker, r, key.Matches(msg, k.Longer), m.opts.moment()), m.opts.Redact, m.opts.moment())
		}
	case key.Matches(msg, k.New):
		m.focus.mode = keymap.ModeComposer
		var act screen.Action
		m.screens.composer, act = m.screens.composer.Open(m.env())
		return m.composerDid(act)
	case key.Matches(msg, k.Reissue):
		return m.reissue()
	case key.Matches(msg, k.Edit):
		return m.edit()
	case key.Matches(msg, k.Log):
		m.focus.mode = keymap.ModeLog
	case key.Matches(msg, k.Stderr):
		m.focus.mode = keymap.ModeStderr
	case key.Matches(msg, k.Auth):
		m.focus.mode = keymap.ModeAuth
	case key.Matches(msg, k.Export):
		cmd, level, text := export(m.opts, m.tracker, m.opts.moment())
		m.setStatus(level, text)
		return cmd
	case key.Matches(msg, k.Reconnect):
		m.setStatus(levelInfo, reconnecting)
		return m.conn.redial(m.opts.Dial)
	case key.Matches(msg, k.Copy), key.Matches(msg, k.Pager), key.Matches(msg, k.Editor):
		r, _ := m.screens.selectedRequest(m.tracker, m.focus.mode)
		p, ok := payloadOf(m.focus.mode, m.tracker, r, m.opts.redaction())
		cmd, n := usePayload(m.pager.exec, payloadKey(msg, k), p, ok)
		m.status.say(n, m.opts.Redact, m.opts.moment())
		return cmd
	case (pressed(msg, k.Cancel) || pressed(msg, k.CancelReason)) && (m.focus.mode == keymap.ModeList || m.focus.mode == keymap.ModeDetail):
		// Say why c or C did nothing rather than ignore it.
		r, ok := m.screens.selectedRequest(m.tracker, m.focus.mode)
		m.setStatus(whyNoCancel(r, ok, m.opts.moment()))
	case pressed(msg, k.CancelAll) && (m.focus.mode == keymap.ModeList || m.focus.mode == keymap.ModeLog):
		m.setStatus(levelInfo, "nothing in flight to cancel")
	case pressed(msg, k.StopWatching) && (m.focus.mode == keymap.ModeList || m.focus.mode == keymap.ModeDetail):
		r, ok := m.screens.selectedRequest(m.tracker, m.focus.mode)
		m.status.say(stopWatching(m.tracker, m.opts.records(), r, ok, m.opts.moment()), m.opts.Redact, m.opts.moment())
		m.screens.followNewest(m.tracker)
	case (pressed(msg, k.Longer) || pressed(msg, k.Shorter)) && (m.focus.mode == keymap.ModeList || m.focus.mode == keymap.ModeDetail):
		// Say why the timeout cannot move rather than ignore the key.
		if r, ok := m.screens.selectedRequest(m.tracker, m.focus.mode); ok {
			switch {
			case r.State == session.StateListening:
				m.setStatus(levelInfo, fmt.Sprintf("#%s: an acknowledged subscription has no timeout", r.ID))
			case r.State == session.StateCancelRequested:
				m.setStatus(levelInfo, fmt.Sprintf("#%s: cancellation already requested; its timeout no longer runs", r.ID))
			default:
				m.setStatus(levelInfo, fmt.Sprintf("#%s is %s: its timeout no longer runs", r.ID, look.StateName(r.State)))
			}
		}
	case (pressed(msg, k.New) || pressed(msg, k.Reissue) || pressed(msg, k.Edit)) && (m.focus.mode == keymap.ModeList || m.focus.mode == keymap.ModeDetail):
		switch m.conn.state {
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

// adjustTimeout is + (longer) or - on request r: the tracker moves its
// timeout by 10 s within its bounds, and the notice says where it stands.
func adjustTimeout(t *session.Tracker, r *session.Request, longer bool, now time.Time) notice {
	delta := 10 * time.Second
	if !longer {
		delta = -delta
	}
	clamped, err := t.AdjustTimeout(r.ID, delta, now)
	if err != nil {
		return notice{level: levelWarn, text: fmt.Sprintf("#%s: %s", r.ID, look.RefusalText(err, now))}
	}
	rem, limit := r.Remaining(now)
	text := fmt.Sprintf("#%s: timeout now %s (%s nearer, %s left)", r.ID, look.Dur(r.Timeout.Timeout), limit, look.Dur(rem))
	switch clamped {
	case session.ClampedMax:
		text = fmt.Sprintf("#%s: timeout is at the %s maximum (%s left)", r.ID, look.Dur(r.Timeout.Max), look.Dur(rem))
	case session.ClampedFloor:
		text = fmt.Sprintf("#%s: timeout at its floor: %s left is the least", r.ID, look.Dur(session.MinTimeout))
	}
	return notice{level: levelInfo, text: text, about: r.ID}
}

// reissue sends the selected request again with a new ID.
func (m *Model) reissue() tea.Cmd {
	r, ok := m.screens.selectedRequest(m.tracker, m.focus.mode)
	if !ok {
		return nil
	}
	params, n, ok := sendAgain(m.tracker, r)
	if !ok {
		m.status.say(n, m.opts.Redact, m.opts.moment())
		return nil
	}
	reset := r.Timeout.ResetOnProgress
	// The timeout it began with, not one shortened with - since: a
	// re-issue is the same request again (issue 10: after six presses of
	// - the re-issue timed out at once).
	cmd := m.send(r.Method, params, session.RequestOptions{Timeout: r.Timeout.Asked, MaxTimeout: r.Timeout.Max, ResetOnProgress: &reset, LateWindow: r.LateWindow})
	m.screens.list = m.screens.list.Follow()
	m.screens.followNewest(m.tracker)
	m.focus.mode = keymap.ModeList
	m.setStatus(levelInfo, fmt.Sprintf("re-issued #%s as #%s", r.ID, m.screens.list.Selected()))
	m.status.about = m.screens.list.Selected()
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

// updatePrompt gives msg to the open dialog and carries out what the
// user chose: cancel a request with a reason, quit, or cancel everything
// in flight (a dismissed dialog has closed, and asks nothing more).
func (m *Model) updatePrompt(msg tea.Msg) tea.Cmd {
	var act screen.Action
	m.screens.prompt, act = m.screens.prompt.Update(m.env(), msg)
	switch a := act.(type) {
	case screen.Run:
		return a.Cmd
	case prompt.Reason:
		return m.cancel(a.ID, a.Text, session.CauseUser)
	case prompt.Confirm:
		if a.Kind == prompt.Quit {
			return m.quit("client shutting down", session.CauseShutdown)
		}
		return m.cancelAll("user cancelled all requests", session.CauseUser)
	}
	return nil
}

// cancelAll cancels every request in flight.
func (m *Model) cancelAll(reason string, cause session.CancelCause) tea.Cmd {
	var cmds []tea.Cmd
	n, asked := 0, m.questions.len()
	for _, id := range activeIDs(m.tracker) {
		cmd, ok := m.cancelQuiet(id, reason, cause)
		if ok {
			n++
		}
		if cmd != nil {
			cmds = append(cmds, cmd)
		}
	}
	qs := m.questions.takeAll()
	m.focus.mode, _ = m.answering.closeOn(qs, m.focus.mode)
	m.setStatus(levelInfo, cancelAllStatus(n, asked))
	return declineAfterAll(cmds, qs)
}

// cancelQuiet cancels id as X does, as c would: a conversation waiting
// for the user is dropped (nothing is on the wire), a legacy server's
// questions open on the request are declined after its cancel.
func (m *Model) cancelQuiet(id wire.ID, reason string, cause session.CancelCause) (tea.Cmd, bool) {
	r, _ := m.tracker.Get(id)
	waiting := r != nil && r.State == session.StateWaitingInput
	ch, err := m.tracker.RequestCancel(id, reason, cause, m.opts.moment())
	if err != nil {
		return nil, false
	}
	traceChanged(m.opts.records(), m.tracker, []session.Change{ch})
	if waiting {
		if m.answering.form.ID() == id {
			m.focus.mode = m.answering.close(m.focus.mode)
		}
		return nil, true
	}
	qs := m.takeQuestions(id)
	if r, ok := m.tracker.Get(id); ok && r.IsTask() {
		return tea.Batch(append(m.due(m.opts.moment()), declineCmd(qs))...), true
	}
	return declineAfter(m.conn.cancel(id, reason, true), qs), true
}

// activeIDs lists requests still in flight (not already cancelling).
func activeIDs(t *session.Tracker) []wire.ID {
	var ids []wire.ID
	for i := t.Len() - 1; i >= 0; i-- {
		r := t.At(i)
		if r.IsActive() && r.State != session.StateCancelRequested && !isTaskRequest(r) {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

func (m *Model) askQuit() tea.Cmd {
	n := len(activeIDs(m.tracker))
	if n == 0 || m.conn.state != connUp {
		return m.quit("", session.CauseShutdown)
	}
	m.screens.prompt = prompt.AskQuit(n)
	return nil
}

// Interrupted reports whether the program ended because of Ctrl+C or a
// signal (what was in flight was cancelled as "interrupted"), rather than
// because the user quit: the command's exit code says so, as call's does.
func (m *Model) Interrupted() bool { return m.ending.interrupted }

// quit cancels what is in flight (properly, with the right signal) and
// then ends the program. The cancels get a bounded time to go out.
func (m *Model) quit(reason string, cause session.CancelCause) tea.Cmd {
	if m.ending.quitting || m.opts.attaching() || m.opts.replaying() {
		return m.clock.end() // a view on a proxy detaches: the host's requests are not its own
	}
	m.ending.quitting = true
	m.ending.interrupted = cause == session.CauseInterrupted
	var ids []wire.ID
	var taskCancels []client.Request
	if m.conn.state == connUp {
		for _, id := range activeIDs(m.tracker) {
			if ch, err := m.tracker.RequestCancel(id, reason, cause, m.opts.moment()); err == nil {
				traceChanged(m.opts.records(), m.tracker, []session.Change{ch})
				if r, _ := m.tracker.Get(id); !r.IsTask() {
					ids = append(ids, id)
				}
			}
		}
		// Tasks get their tasks/cancel (the polls due now are not sent);
		// a timeout that expired just now is cancelled with the rest.
		d := m.tracker.Due(m.opts.moment())
		traceChanged(m.opts.records(), m.tracker, d.Changes)
		for _, x := range d.Cancels {
			ids = append(ids, x.ID)
		}
		for _, r := range d.Requests {
			if r.Method == wire.MethodTasksCancel {
				taskCancels = append(taskCancels, client.Request{ID: r.ID, Method: r.Method, Params: r.ChildParams, LateWindow: r.LateWindow})
			}
		}
	}
	n := len(ids) + len(taskCancels)
	if n == 0 {
		return m.clock.end()
	}
	m.setStatus(levelInfo, fmt.Sprintf("cancelling %d %s before quitting…", n, look.CountNoun(n, "request", "requests")))
	return m.conn.cancelBeforeQuit(ids, taskCancels, reason)
}

// export writes the protocol log of t as a trace file, off the Update
// path, and says what it does for the status line.
func export(opts Options, t *session.Tracker, now time.Time) (tea.Cmd, statusLevel, string) {
	if opts.Export == nil {
		return nil, levelWarn, "export is not available"
	}
	lg := t.Log()
	snap := Snapshot{Entries: make([]session.LogEntry, lg.Len()), Start: t.ConnectedAt(), Dropped: lg.Total() - int64(lg.Len())}
	for i := range snap.Entries {
		snap.Entries[i] = lg.At(i)
	}
	if len(snap.Entries) > 0 && (snap.Start.IsZero() || snap.Entries[0].Time.Before(snap.Start)) {
		snap.Start = snap.Entries[0].Time
	}
	name := fmt.Sprintf("inflight-trace-%s.jsonl", now.Format("20060102-150405"))
	dir := opts.ExportDir
	write := opts.Export
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
	}, levelInfo, "writing " + name + "…"
}
