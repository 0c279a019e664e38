package session

import "time"

// This file is the one definition of "crossed" and "late" that the TUI,
// `call` and `check` share.
//
// A message that arrives after a cancel either crossed it in flight (the
// server sent it before the cancel reached it) or came after the server
// could have seen the cancel (it ignored it, or reacted too slowly). Which
// one it was cannot be observed, only bounded by time. A reaction cannot
// reach inflight sooner than a full round trip through the server after the
// cancel left, so a message read sooner than that allows no other reading:
// it crossed the cancel. Anything read later may be a reaction, and is late.
//
// How much sooner: a server reacts about as fast as it answers a ping.
// Measured on go-sdk and mcp-go stdio servers (internal/testkit/sdkpeer), the
// answer to a cancelled request arrives about one round trip after the
// cancel, and mcp-go's now and then beats the quickest of 20 pings on the
// same connection by a microsecond or so. So the crossing window is half
// the quickest measured round trip (+ Config.Grace): what arrives in it
// cannot be a reaction.
//
// Time alone misjudges what waited in a pipe, though: under a flood the
// server's stdout holds hundreds of lines written before the cancel and
// read after it. So position comes first (crossedCancel): on stdio every
// message says where it ends in the server's output, and the cancel how
// much the server had written when it left (read, or waiting in the pipe);
// whatever ends within that was sent before the cancel. Over HTTP there is
// no such count, and a stream's buffered events are judged by time.
//
// The round trip is measured, not guessed: the client times its own plain
// requests (a ping after connecting in the legacy era, server/discover in
// the modern one; event.RoundTrip), and every timely answer to a tracked
// request is a sample too. The least of the recent samples is used, because
// the least is the closest to the pure transport delay: the server's own
// work only makes a sample longer. The era probe at connect is never a
// sample (over stdio it includes the server's start-up: 4–13 ms for Go
// servers, ~360 ms for node ones, against a loopback round trip of well
// under 1 ms, which once let a server that answered a cancel 1 ms late
// pass as "crossed").

// rttSamples is how many recent round-trip samples the estimate is the
// least of, so it follows a connection whose delay changes.
const rttSamples = 16

// RoundTrip is the round trip the tracker judges crossings by.
type RoundTrip struct {
	// D is the least recent sample; 0 when none was measured.
	D time.Duration
	// Source names the request that gave D ("ping", "server/discover",
	// "tools/list", …); "" when none was measured.
	Source string
	// Samples counts the samples D is the least of.
	Samples int
}

// Measured reports whether any round trip was measured.
func (rt RoundTrip) Measured() bool { return rt.Samples > 0 }

type rttSample struct {
	d      time.Duration
	source string
}

// roundTrips keeps the last rttSamples samples.
type roundTrips struct {
	buf  [rttSamples]rttSample
	n    int // samples kept
	next int // slot of the next sample
	best RoundTrip
	// stale: the connection these samples measured has closed; the next
	// sample starts afresh.
	stale bool
}

func (rs *roundTrips) add(d time.Duration, source string) {
	if d <= 0 {
		return
	}
	if rs.stale {
		*rs = roundTrips{}
	}
	rs.buf[rs.next] = rttSample{d, source}
	rs.next = (rs.next + 1) % rttSamples
	if rs.n < rttSamples {
		rs.n++
	}
	// Recompute the least: the sample that was least may just have been
	// overwritten. Sixteen comparisons per sample, and samples are answers,
	// not progress, so this is off the hot path.
	best := RoundTrip{Samples: rs.n}
	for i := 0; i < rs.n; i++ {
		if s := rs.buf[i]; best.D == 0 || s.d < best.D {
			best.D, best.Source = s.d, s.source
		}
	}
	rs.best = best
}

// RoundTrip is the round trip crossings are judged by.
func (t *Tracker) RoundTrip() RoundTrip { return t.rtts.best }

// CrossingWindow is how long after a cancel's signal left a message may
// arrive and still have crossed it: half the measured round trip plus the
// configured grace. With no round trip measured it is the grace alone, so
// that "crossed" is claimed only when the timing allows no other reading.
func (t *Tracker) CrossingWindow() time.Duration {
	return t.rtts.best.D/2 + t.cfg.Grace
}

// crossedCancel reports whether something about r, read at `at` and
// ending at streamEnd in the server's stdout (0: unknown), may have crossed
// r's cancel in flight. It is the only place that decides.
//
// Position first: a message that ends within what the server had written
// when the cancel left was sent before it, whenever it is read — under a
// flood the stdout pipe holds hundreds of such lines, read long after the
// cancel, and by time alone a well-behaved server that stopped at once
// would look like one that went on. Time second: within the crossing
// window of the signal, a reaction is impossible.
func (t *Tracker) crossedCancel(r *Request, at time.Time, streamEnd int64) bool {
	c := r.Cancel
	if c == nil {
		// Given up without a cancel (the connection was lost, a local
		// failure): the server was never told, so nothing it sends can be
		// a reaction to being told.
		return false
	}
	if c.SignalStreamEnd > 0 && streamEnd > 0 && streamEnd <= c.SignalStreamEnd {
		return true
	}
	from := c.SignalAt
	if from.IsZero() {
		if r.State == StateCancelRequested && c.Failed == "" {
			// The signal has not even left: the server cannot have seen it.
			return true
		}
		from = c.At
	}
	return at.Sub(from) < t.CrossingWindow()
}
