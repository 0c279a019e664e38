package source

import (
	"errors"
	"math"
	"time"

	"inflight/event"
	"inflight/trace"
	"inflight/wire"
)

// The decoding lives here rather than in trace: a record holds more than
// the event it was written from (the proxy's verdicts, the notes that
// stand for its tracker's calls, who sent what), and what those mean to a
// reader is this package's vocabulary (Info), which trace — the format,
// written by every command — has no use for.

// byProxy is who a proxy's trace names as the sender of what the proxy
// itself sent (proxy/recorder.go).
const byProxy = "inflight"

// At is the time a record's "ms" stands for in a trace that started at
// start.
func At(start time.Time, rec *trace.Record) time.Time {
	return start.Add(time.Duration(math.Round(rec.MS*1000)) * time.Microsecond)
}

// Decoder turns a trace's records back into Items.
type Decoder struct {
	// Start is when the trace started: a record's "ms" counts from it.
	Start time.Time
	// Relayed: the trace is of traffic a proxy relayed between a host and
	// a server (an attach socket's stream, a proxy's --trace), not of
	// inflight's own. Its "out" is the host's, a stream inflight closed
	// is the host's closing, and its notes stand for its tracker's calls.
	Relayed bool
}

// Decode rebuilds what a record says: the event it was written from (as
// the proxy's recorder or inflight's own client made it), what it says
// besides, or both. ok is false for a record that says nothing a reader
// applies (a check's finding; on a relayed trace, the HTTP exchanges the
// proxy's recorder does not follow either).
func (d Decoder) Decode(rec *trace.Record) (it Item, ok bool) {
	at := At(d.Start, rec)
	id := idOf(rec)
	switch rec.Event {
	case trace.EventState:
		st := TrackerState{At: at, ID: id, State: rec.State, From: rec.From, Method: rec.Method, Target: rec.Target, Reason: rec.Reason}
		if rec.Parent != nil {
			st.Parent = *rec.Parent
		}
		return Item{Info: st}, true
	case trace.EventViolation:
		return Item{Info: TrackerViolation{At: at, ID: id, Code: rec.Code}}, true
	}
	if d.Relayed {
		if it, ok := relayed(rec, at, id); ok {
			return it, true
		}
	}
	ev, ok := d.eventOf(rec, at)
	if !ok {
		return Item{}, false
	}
	return Item{Event: ev, Verdict: rec.Verdict, ByProxy: d.Relayed && rec.By == byProxy}, true
}

// relayed decodes the records that mean something of their own in a
// proxy's trace; ok false: the record is an event like any other.
func relayed(rec *trace.Record, at time.Time, id wire.ID) (Item, bool) {
	switch rec.Event {
	case trace.EventStreamClosed:
		switch {
		case rec.By == byProxy:
			// inflight's own modern cancel (a key, a cancel rule): the proxy
			// closed the upstream request and observed the closure as any
			// client's (proxy/recorder.go injected). Not the host's doing.
			return Item{Event: event.Event{Kind: event.StreamClosed, Time: at, RequestID: id, ByClient: rec.ByClient}, ByProxy: true}, true
		case rec.ByClient:
			// The host closed its request's HTTP stream (proxy/http.go).
			return Item{Info: HostClosedStream{At: at, ID: id, SessionID: rec.SessionID}}, true
		}
	case trace.EventInjected:
		ev := event.Event{Kind: event.Note, Time: at, RequestID: id, Text: "injected " + rec.Injected + ": " + rec.Text}
		return Item{Event: ev, Info: Injected{At: at, ID: id, Action: rec.Injected, Phase: rec.Code, Text: rec.Text}}, true
	case trace.EventReply:
		return Item{Info: Reply{At: at, ID: id, Action: rec.Injected, Outcome: rec.Code, Text: rec.Text}}, true
	case trace.EventNote:
		note := event.Event{Kind: event.Note, Time: at, Text: rec.Text}
		switch rec.Text {
		case trace.NoteHostClosed:
			return Item{Event: note, Info: HostGone{At: at}}, true
		case trace.NoteHostResumed:
			return Item{Event: note, Info: HostResumed{At: at, SessionID: rec.SessionID}}, true
		case trace.NoteHostReopened:
			return Item{Event: note, Info: HostReopened{At: at, SessionID: rec.SessionID}}, true
		case trace.NoteHostEndedSession:
			return Item{Event: note, Info: HostEndedSession{At: at, SessionID: rec.SessionID}}, true
		case trace.NoteUpstreamEnded:
			note.RequestID = id
			return Item{Event: note, Info: UpstreamEnded{At: at, ID: id, SessionID: rec.SessionID}}, true
		case trace.NoteLateWindowOver, trace.NoteResumeWaitOver:
			// The view's clock for the host's cancels is the proxy's: a
			// late window ends when the proxy's ended.
			return Item{Info: WindowOver{At: at}}, true
		}
	}
	return Item{}, false
}

// eventOf rebuilds the event a record was written from (trace.FromEvent's
// inverse, as far as a record keeps it); ok is false for a record that
// records none.
func (d Decoder) eventOf(rec *trace.Record, at time.Time) (event.Event, bool) {
	if len(rec.Msg) > 0 {
		raw := []byte(rec.Msg)
		switch rec.Dir {
		case trace.DirOut:
			ev := event.Event{Kind: event.Sent, Time: at, Raw: raw, Truncated: rec.Truncated, Internal: d.internal(rec), StreamEnd: int64(rec.End),
				SessionID: rec.SessionID}
			if msg, err := wire.DecodeOwned(raw); err == nil {
				ev.Msg = msg
			}
			if ev.Msg.Kind != wire.KindNotification {
				ev.RequestID = ev.Msg.ID
			} else if id := idOf(rec); !id.IsZero() {
				ev.RequestID = id
			}
			return ev, true
		case trace.DirIn:
			ev := event.Event{Kind: event.Received, Time: at, Raw: raw, StreamEnd: int64(rec.End), SessionID: rec.SessionID}
			if !d.Relayed {
				// The answers to the client's own housekeeping (the era
				// probe, pings) are marked as the client marked them: a
				// tracker that took them for answers to requests of the
				// user's would flag each as an unknown ID.
				ev.Internal = rec.Internal
			}
			msg, p, err := wire.DecodeLine(raw)
			if err != nil {
				ev.Kind, ev.Err = event.Malformed, err
				return ev, true
			}
			ev.Msg, ev.Progress = msg, p
			if msg.Kind != wire.KindNotification {
				ev.RequestID = msg.ID
			}
			onStream(&ev, rec)
			return ev, true
		}
		return event.Event{}, false
	}
	switch rec.Event {
	case trace.EventStderr:
		return event.Event{Kind: event.Stderr, Time: at, Text: rec.Text, Truncated: rec.Truncated}, true
	case trace.EventMalformed:
		// Its ID is the request whose stream carried it, as the client
		// reported it.
		return event.Event{Kind: event.Malformed, Time: at, RequestID: idOf(rec), Raw: []byte(rec.Raw), Truncated: rec.Truncated,
			Err: errorOf(rec.Error, "not a JSON-RPC message")}, true
	case trace.EventNote:
		return event.Event{Kind: event.Note, Time: at, Text: rec.Text}, true
	case trace.EventConnected:
		info := event.ConnInfo{Transport: transportOf(rec.Transport), Era: eraOf(rec.Era), ProtocolVersion: rec.ProtocolVersion, ServerName: rec.Server}
		return event.Event{Kind: event.Connected, Time: at, Info: &info}, true
	case trace.EventTransportClosed:
		return event.Event{Kind: event.TransportClosed, Time: at, Err: errorOf(rec.Error, "")}, true
	case trace.EventCancelSent:
		return event.Event{Kind: event.CancelSent, Time: at, RequestID: idOf(rec), Signal: signalOf(rec.Signal), Reason: rec.Reason, Err: errorOf(rec.Error, ""),
			StreamEnd: int64(rec.End)}, true
	case trace.EventCancelLeaving:
		return event.Event{Kind: event.CancelLeaving, Time: at, RequestID: idOf(rec), Signal: signalOf(rec.Signal), StreamEnd: int64(rec.End)}, true
	case trace.EventRoundTrip:
		rtt := time.Duration(math.Round(rec.RTT*1000)) * time.Microsecond
		return event.Event{Kind: event.RoundTrip, Time: at, RTT: rtt, Text: rec.Text}, rtt > 0
	}
	if d.Relayed {
		// A proxy's tracker follows none of the HTTP exchanges' own events.
		return event.Event{}, false
	}
	return ownEventOf(rec, at)
}

// onStream puts back which request's HTTP response stream carried a
// message the server sent: Owner, and for a notification RequestID too,
// as the client reports them. A trace without "owner" (stdio, HTTP+SSE,
// the GET stream, or written before traces said it) leaves both as the
// message says.
func onStream(ev *event.Event, rec *trace.Record) {
	if rec.Owner == nil || rec.Owner.IsZero() {
		return
	}
	ev.Owner = *rec.Owner
	if ev.Msg.Kind == wire.KindNotification {
		ev.RequestID = ev.Owner
	}
}

// ownEventOf rebuilds the HTTP events of inflight's own trace.
func ownEventOf(rec *trace.Record, at time.Time) (event.Event, bool) {
	ev := event.Event{Time: at, RequestID: idOf(rec), Status: rec.Status, ContentType: rec.ContentType, Text: rec.Text,
		Internal: rec.Internal, SessionID: rec.SessionID, Err: errorOf(rec.Error, "")}
	switch rec.Event {
	case trace.EventStreamOpened:
		ev.Kind, ev.Resumed = event.StreamOpened, rec.Resumed
	case trace.EventStreamClosed:
		ev.Kind, ev.ByClient = event.StreamClosed, rec.ByClient
	case trace.EventHTTPStatus:
		ev.Kind = event.HTTPStatus
	case trace.EventRequestFailed:
		ev.Kind, ev.LostConnection = event.RequestFailed, rec.Lost
	default:
		return event.Event{}, false
	}
	return ev, true
}

// internal is an "out" message's Internal mark. In relayed traffic what
// inflight sent itself is not the host's, which a view follows as the
// host's requests (and the host's own mark is no concern of inflight's:
// a host that is inflight marks its probe); in inflight's own trace the
// line says it.
func (d Decoder) internal(rec *trace.Record) bool {
	if d.Relayed {
		return rec.By == byProxy
	}
	return rec.Internal
}

func idOf(rec *trace.Record) wire.ID {
	if rec.ID == nil {
		return wire.ID{}
	}
	return *rec.ID
}

func errorOf(s, otherwise string) error {
	switch {
	case s != "":
		return errors.New(s)
	case otherwise != "":
		return errors.New(otherwise)
	}
	return nil
}

// signalOf is the cancel signal a line names; a line that names none
// (written before cancel_sent lines named every signal) is a notification.
func signalOf(s string) event.CancelSignal {
	for _, sig := range []event.CancelSignal{event.SignalNone, event.SignalStreamClosed, event.SignalTaskCancel} {
		if sig.String() == s {
			return sig
		}
	}
	return event.SignalNotification
}

func transportOf(s string) event.TransportKind {
	for _, t := range []event.TransportKind{event.TransportStdio, event.TransportHTTP, event.TransportSSE} {
		if t.String() == s {
			return t
		}
	}
	return event.TransportStdio
}

func eraOf(s string) event.Era {
	for _, e := range []event.Era{event.EraModern, event.EraLegacy} {
		if e.String() == s {
			return e
		}
	}
	return event.EraUnknown
}
