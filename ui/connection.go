package ui

import (
	"context"
	"errors"
	"time"

	tea "charm.land/bubbletea/v2"

	"inflight/client"
	"inflight/event"
	"inflight/source"
	"inflight/wire"
)

// connection is the UI's link to the server: the client, the generation
// that tags every reply and event of it (those of an older connection, after
// R, are ignored), what the header and the banner say of it, and whether
// its first requests still wait for its handshake. Its methods change only
// its own state; what touches the wire they return as commands.
type connection struct {
	client Client
	gen    int // events and replies of older connections are ignored
	state  connState
	err    error // why it was lost (nil: up, or lost without a reason)

	// everConnected distinguishes "could not connect" from "connection lost".
	everConnected bool
	// connectedSeen: the tracker applied this connection's event.Connected
	// (the tracker's own "connected" outlives a connection, so after R it
	// would let the first requests go out too early).
	connectedSeen bool
	// startPending: Connect returned, but the tracker has not yet applied
	// the event.Connected it emitted (events come in batches, on their own
	// command), so the first requests wait for it. Sending them earlier
	// would let what the server sent during the handshake be applied after
	// they began, and be judged against them.
	startPending bool
	// legacyLogLevel is the level last asked for with logging/setLevel on
	// this connection (legacy era; "" none yet).
	legacyLogLevel string

	// source, when set, is where the events come from instead of the
	// client (Options.Source).
	source source.Source
	// wait and waitItems are the event pump, of a live connection's events
	// and of the source's items. Tests replace them so that no command
	// blocks.
	wait      func(ch <-chan event.Event, gen int) tea.Cmd
	waitItems func(ch <-chan source.Item, gen int) tea.Cmd
}

type connState uint8

const (
	connConnecting connState = iota
	connUp
	connLost
)

// The connection's messages, each tagged with the generation of the
// connection it is about.
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
	// redialMsg is R's new client (no generation yet: begin gives it one).
	redialMsg struct {
		conn Client
		err  error
	}
	// quitReadyMsg says the cancels sent before quitting went out (or
	// their time is up).
	quitReadyMsg struct{}
)

// newConnection returns a connection not dialled yet, whose events come
// from src when it is set.
func newConnection(src source.Source) connection {
	return connection{source: src, wait: waitEvents, waitItems: waitItems}
}

// current reports whether gen is this connection's, not an older one's.
func (c *connection) current(gen int) bool { return gen == c.gen }

// begin makes cl the connection, under a new generation, and returns the
// commands that connect it and pump its events.
func (c *connection) begin(cl Client) tea.Cmd {
	c.client = cl
	c.gen++
	c.connectedSeen = false
	c.state = connConnecting
	c.err = nil
	return tea.Batch(connectCmd(cl, c.gen), c.pump())
}

// pump waits for the next batch of events: the source's when it is set,
// else the client's.
func (c *connection) pump() tea.Cmd {
	if c.source != nil {
		return c.waitItems(c.source.Items(), c.gen)
	}
	return c.wait(c.client.Events(), c.gen)
}

// lose marks the connection lost, for err.
func (c *connection) lose(err error) {
	c.state = connLost
	c.err = err
}

// connected takes Connect's reply. It reports whether the connection is
// up now, and whether its first requests may go out at once: they wait
// (startPending) until the tracker has applied the handshake's event.
func (c *connection) connected(msg connectedMsg) (up, startNow bool) {
	if !c.current(msg.gen) {
		return false, false
	}
	if msg.err != nil {
		c.lose(msg.err)
		return false, false // the banner says why
	}
	c.state = connUp
	c.everConnected = true
	if !c.connectedSeen {
		c.startPending = true
		return true, false
	}
	return true, true
}

// observe notes what an event the tracker applied says of the connection:
// its handshake arrived, or its transport closed (unless the program is
// quitting, which closes it). It reports lost when ev lost the connection
// without closing anything: over HTTP nothing closes when the server goes
// away, and a request that could not even reach it is how it shows (not
// the client's own housekeeping: an answer to the server's own request that
// failed is told by its form, and the user may try again, incoming.go).
// Then the tracker must end what else is in flight as for a closed
// transport.
func (c *connection) observe(ev *event.Event, quitting bool) (lost bool) {
	switch ev.Kind {
	case event.Connected:
		c.connectedSeen = true
	case event.TransportClosed:
		if !quitting {
			c.lose(ev.Err)
		}
	case event.RequestFailed:
		if errors.Is(ev.Err, client.ErrUnreachable) && !ev.Internal && !quitting && c.state == connUp {
			c.lose(ev.Err)
			return true
		}
	}
	return false
}

// startDue reports whether the first requests waited for the handshake's
// event, which the tracker has now applied.
func (c *connection) startDue() bool { return c.connectedSeen && c.startPending }

// started notes that the connection's first requests are going out: none
// waits any more, and no log level has been asked of it yet.
func (c *connection) started() {
	c.startPending = false
	c.legacyLogLevel = ""
}

// redial returns the command that replaces the connection with a new one
// of dial (a stdio server is restarted); the old one is closed in the
// background. The new one comes back as a redialMsg.
func (c *connection) redial(dial Dialer) tea.Cmd {
	old := c.client
	c.state = connConnecting
	return func() tea.Msg {
		if old != nil {
			_ = old.Close()
		}
		conn, err := dial()
		return redialMsg{conn: conn, err: err}
	}
}

// redialed takes redial's result: a new connection to begin, or the
// reason it is lost.
func (c *connection) redialed(msg redialMsg) tea.Cmd {
	if msg.err != nil {
		c.lose(msg.err)
		return nil
	}
	return c.begin(msg.conn)
}

// send returns the command that puts req on the wire; a failure comes
// back as a sendFailedMsg.
func (c *connection) send(req client.Request) tea.Cmd {
	conn, gen := c.client, c.gen
	return func() tea.Msg {
		if err := conn.Send(context.Background(), req); err != nil {
			return sendFailedMsg{gen: gen, id: req.ID, err: err}
		}
		return nil
	}
}

// cancel returns the command that sends id's cancellation signal, which
// the client chooses; what it sent comes back as a cancelDoneMsg.
func (c *connection) cancel(id wire.ID, reason string, quiet bool) tea.Cmd {
	conn, gen := c.client, c.gen
	return func() tea.Msg {
		sig, err := conn.Cancel(id, reason)
		return cancelDoneMsg{gen: gen, id: id, signal: sig, err: err, quiet: quiet}
	}
}

// quitCancelWait bounds how long quitting waits for its cancels to go out.
const quitCancelWait = 3 * time.Second

// cancelBeforeQuit returns the command that sends taskCancels (tasks/cancel
// requests) and the cancels of ids, within quitCancelWait, then says the
// program may end (quitReadyMsg).
func (c *connection) cancelBeforeQuit(ids []wire.ID, taskCancels []client.Request, reason string) tea.Cmd {
	conn := c.client
	return func() tea.Msg {
		if len(taskCancels) > 0 {
			ctx, cancel := context.WithTimeout(context.Background(), quitCancelWait)
			defer cancel()
			for _, r := range taskCancels {
				_ = conn.Send(ctx, r)
			}
		}
		conn.CancelAll(ids, reason, quitCancelWait)
		return quitReadyMsg{}
	}
}

func connectCmd(c Client, gen int) tea.Cmd {
	return func() tea.Msg {
		info, err := c.Connect(context.Background())
		return connectedMsg{gen: gen, info: info, err: err}
	}
}

// maxBatch bounds the events applied per Update so that a flood of progress
// never starves key presses: the screen is redrawn once per batch, which is
// how progress is coalesced per frame while every event is still counted.
const maxBatch = 2048

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
