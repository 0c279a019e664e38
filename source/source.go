// Package source is where events come from besides a live client: a
// proxy's attach socket (Attach) and a trace file (File, played back
// against a clock by a Player). Each delivers the same thing the live
// client does — event.Events with their times, in order — so that the
// tracker applies them and the screens draw the tracker whatever their
// origin; what a stream says besides events (a proxy's own judgements, the
// host's conduct it saw, its answers to a view's commands) comes with them
// as typed Info values, never as trace records.
//
// Decoding trace records back into events lives here and nowhere else:
// the TUI consumes Items.
package source

import (
	"time"

	"inflight/event"
	"inflight/wire"
)

// Source is what the TUI's event pump reads: items in order on one
// channel, closed when the source ends, and why it ended.
//
// The live client fits without a goroutine of its own: its channel carries
// bare events, which the pump turns into Items with Bare as it drains them
// (a goroutine re-wrapping every event would cost the busiest path a
// channel hop per event, and outlive a connection nobody reads).
type Source interface {
	// Items delivers the source's items in order; it is closed when the
	// source ends.
	Items() <-chan Item
	// Err says why the source ended, once Items is closed: nil when it
	// ended as it should (the proxy closed its stream, the file ended).
	Err() error
}

// Item is one thing a source delivers.
type Item struct {
	// Event is what happened, with its time (Event.Time). Its Kind is zero
	// when the item is only information (Info says what, and when).
	Event event.Event
	// Verdict is, on a message of a trace, the recording tracker's
	// judgement of it ("late", "crossed", "" for none; a proxy's, on an
	// attach socket), for a view that judges again to compare with.
	Verdict string
	// ByProxy: in someone else's traffic, the proxy sent this itself (a
	// rule's or a key's cancel upstream, the error it answered the host
	// with), not the host.
	ByProxy bool
	// Info is what the stream said besides the event (nil for none).
	Info Info
}

// Bare is a live client's event as an Item.
func Bare(ev event.Event) Item { return Item{Event: ev} }

// HasEvent reports whether the item carries an event.
func (it *Item) HasEvent() bool { return it.Event.Kind != 0 }

// Info is what a stream says besides events: one of the types below, each
// with its time.
type Info interface {
	info()
	at() time.Time
}

// TrackerState is the recording tracker's state of a request (a "state"
// line; a proxy's, on an attach socket): a view with a tracker of its own
// checks that it agrees.
type TrackerState struct {
	At    time.Time
	ID    wire.ID
	State string
	// From is the state it left ("" on the line that began it); Method
	// and Target say what the request was, Reason why it was cancelled
	// (on a move to cancel_requested), and Parent the task request it
	// serves (a task's own tasks/get, tasks/result or tasks/cancel): a
	// replay begins and cancels the requests of inflight's own trace
	// from these lines, as the run's caller did.
	From, Method, Target, Reason string
	Parent                       wire.ID
}

// TrackerViolation is a protocol violation the recording tracker flagged
// (a "violation" line), to compare with the view's own flags.
type TrackerViolation struct {
	At   time.Time
	ID   wire.ID
	Code string
}

// HostClosedStream: the host closed its request's HTTP response stream
// before it ended (Tracker.HostClosedStreamIn).
type HostClosedStream struct {
	At        time.Time
	ID        wire.ID
	SessionID string
}

// HostGone: the host closed its end (the proxy's stdin; Tracker.HostGone).
// The item's event is the proxy's note saying so.
type HostGone struct{ At time.Time }

// HostReopened: the host opened a stream without Last-Event-ID
// (Tracker.HostReopenedIn); HostEndedSession: it ended its HTTP session
// (Tracker.HostEndedSession); UpstreamEnded: the server's stream of the
// host's request ID ended before its answer (Tracker.UpstreamStreamEndedIn).
// The item's event is the proxy's note.
type (
	HostReopened struct {
		At        time.Time
		SessionID string
	}
	HostEndedSession struct {
		At        time.Time
		SessionID string
	}
	UpstreamEnded struct {
		At        time.Time
		ID        wire.ID
		SessionID string
	}
)

// HostResumed: the host resumed a stream with Last-Event-ID
// (Tracker.HostResumedIn). The item's event is the proxy's note.
type HostResumed struct {
	At        time.Time
	SessionID string
}

// WindowOver: a wait the proxy's tracker kept ended — the late window of a
// host's cancel, or the wait for a host to resume a stream it closed. A
// view's tracker expires at the same time (Tracker.Expire(At)).
type WindowOver struct{ At time.Time }

// Injected: the proxy acted on a host's request on purpose (a rule, or a
// view's command). The item's event is a note saying so, on the request.
type Injected struct {
	At time.Time
	ID wire.ID
	// Action is the act as the proxy names it ("hold", "delay 30s").
	Action string
	// Phase is where the act is ("matched", "holding", "released", …).
	Phase string
	// Text says what was done, and by what.
	Text string
}

// Reply is the proxy's answer to this view's command (only this view gets
// it): Outcome "done" or "refused", Text what was done or why not.
type Reply struct {
	At      time.Time
	ID      wire.ID
	Action  string
	Outcome string
	Text    string
}

func (TrackerState) info()     {}
func (TrackerViolation) info() {}
func (HostClosedStream) info() {}
func (HostGone) info()         {}
func (HostResumed) info()      {}
func (HostReopened) info()     {}
func (HostEndedSession) info() {}
func (UpstreamEnded) info()    {}
func (WindowOver) info()       {}
func (Injected) info()         {}
func (Reply) info()            {}
