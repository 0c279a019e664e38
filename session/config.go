package session

import "time"

// Defaults used by DefaultConfig and for zero Config fields.
const (
	DefaultTimeout       = 60 * time.Second
	DefaultMaxTimeout    = 10 * time.Minute
	DefaultLateWindow    = 5 * time.Second
	DefaultHistoryLimit  = 10000
	DefaultMaxFollowed   = 10000
	DefaultRawStoreBytes = 32 << 20
	DefaultLogEntries    = 10000
	DefaultLogEntryBytes = 16 << 10
	DefaultStderrLines   = 2000
	DefaultViolations    = 1000
	// DefaultPollInterval is how often a task is polled when the server
	// suggests no interval; DefaultPollTimeout is the timeout of each poll
	// (a tasks/get that does not answer is an ordinary request).
	DefaultPollInterval = time.Second
	DefaultPollTimeout  = 30 * time.Second
	// MinPollInterval is the shortest wait between a task's polls,
	// whatever its server suggests: a server asking for 1µs would
	// otherwise have thousands of tasks/get a second, and a whole core.
	MinPollInterval = 100 * time.Millisecond

	// MinTimeout is the shortest timeout AdjustTimeout leaves a request: a
	// request shortened below it would be cancelled before the user could
	// see the new countdown.
	MinTimeout = time.Second
)

// Config is the tracker's policy and its memory bounds. Zero (or negative)
// fields take the defaults above, so Config{} is a usable configuration.
type Config struct {
	// DefaultTimeout is how long a request may go without an answer (or,
	// with ResetOnProgress, without progress) before it is cancelled.
	DefaultTimeout time.Duration
	// ResetOnProgress restarts the timeout on every progress notification,
	// which the spec allows because progress shows work is happening. nil
	// means true; it is a pointer so that a zero Config keeps the default.
	ResetOnProgress *bool
	// MaxTimeout is the limit nothing pushes back, as the spec asks every
	// client to enforce regardless of progress.
	MaxTimeout time.Duration
	// LateWindow is how long after a cancel the tracker waits for a reply
	// before it takes the cancel as settled (stdio, where no stream closure
	// tells it). A reply arriving later is still recorded as late.
	LateWindow time.Duration
	// Grace widens the crossing window (Tracker.CrossingWindow) beyond
	// what the measured round trip allows: a message that arrives within
	// the window of a cancel's signal crossed it and is not flagged late.
	// 0 (the default) trusts the measurement alone; a network whose delay
	// varies may want more.
	Grace time.Duration
	// HistoryLimit bounds the requests kept. Only final requests are
	// evicted, oldest first.
	HistoryLimit int
	// MaxFollowed bounds the host requests a proxy's tracker follows while
	// they are open (Observe): past it the oldest open ones are no longer
	// followed (Counts.Unfollowed). A host may leave any number unanswered;
	// what the tracker remembers of them is bounded, what passes is not.
	MaxFollowed int
	// RawStoreBytes bounds the exact request and response bytes kept for the
	// detail view, evicted oldest first.
	RawStoreBytes int
	// LogEntries bounds the protocol log (a ring: the newest are kept).
	LogEntries int
	// LogEntryBytes bounds the raw bytes kept with one log entry.
	LogEntryBytes int
	// StderrLines bounds the server stderr lines kept.
	StderrLines int
	// Violations bounds the protocol violations kept (the newest); counts
	// per code are kept for all of them.
	Violations int
	// PollInterval is how often a task is polled when its server suggests
	// no interval (a suggestion is honoured down to MinPollInterval, never
	// polled faster);
	// PollTimeout the timeout of each tasks/get.
	PollInterval time.Duration
	PollTimeout  time.Duration
	// NoTaskListen: do not ask a modern server for a task's
	// notifications/tasks with subscriptions/listen (polling only).
	NoTaskListen bool
	// Converse holds a request answered input_required (modern multi
	// round-trip requests) as waiting_input for the caller to answer
	// (Tracker.Answer) or end (EndConversation). Off, such a request ends
	// input_required at once, for a caller that cannot answer.
	Converse bool
	// MaxRounds caps the rounds of one conversation: a server still asking
	// for input after that many ends the request ("gave up after N
	// rounds"), flagged. Default DefaultMaxRounds.
	MaxRounds int
}

// DefaultConfig returns the documented defaults with every field set, for
// callers that want to show or adjust them.
func DefaultConfig() Config {
	reset := true
	return Config{
		DefaultTimeout:  DefaultTimeout,
		ResetOnProgress: &reset,
		MaxTimeout:      DefaultMaxTimeout,
		LateWindow:      DefaultLateWindow,
		HistoryLimit:    DefaultHistoryLimit,
		MaxFollowed:     DefaultMaxFollowed,
		RawStoreBytes:   DefaultRawStoreBytes,
		LogEntries:      DefaultLogEntries,
		LogEntryBytes:   DefaultLogEntryBytes,
		StderrLines:     DefaultStderrLines,
		Violations:      DefaultViolations,
		PollInterval:    DefaultPollInterval,
		PollTimeout:     DefaultPollTimeout,
		MaxRounds:       DefaultMaxRounds,
	}
}

// withDefaults fills zero and negative fields from DefaultConfig.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.DefaultTimeout <= 0 {
		c.DefaultTimeout = d.DefaultTimeout
	}
	if c.MaxRounds <= 0 {
		c.MaxRounds = d.MaxRounds
	}
	if c.ResetOnProgress == nil {
		c.ResetOnProgress = d.ResetOnProgress
	} else {
		// Copy so that a caller changing its bool later does not change
		// the policy under the tracker's feet.
		v := *c.ResetOnProgress
		c.ResetOnProgress = &v
	}
	if c.MaxTimeout <= 0 {
		c.MaxTimeout = d.MaxTimeout
	}
	if c.LateWindow <= 0 {
		c.LateWindow = d.LateWindow
	}
	if c.HistoryLimit <= 0 {
		c.HistoryLimit = d.HistoryLimit
	}
	if c.MaxFollowed <= 0 {
		c.MaxFollowed = d.MaxFollowed
	}
	if c.RawStoreBytes <= 0 {
		c.RawStoreBytes = d.RawStoreBytes
	}
	if c.LogEntries <= 0 {
		c.LogEntries = d.LogEntries
	}
	if c.LogEntryBytes <= 0 {
		c.LogEntryBytes = d.LogEntryBytes
	}
	if c.StderrLines <= 0 {
		c.StderrLines = d.StderrLines
	}
	if c.Violations <= 0 {
		c.Violations = d.Violations
	}
	if c.PollInterval <= 0 {
		c.PollInterval = d.PollInterval
	}
	if c.PollTimeout <= 0 {
		c.PollTimeout = d.PollTimeout
	}
	return c
}

// RequestOptions override the tracker's timeout policy for one request.
// Zero fields keep the Config's values.
type RequestOptions struct {
	// Timeout replaces Config.DefaultTimeout.
	Timeout time.Duration
	// MaxTimeout replaces Config.MaxTimeout.
	MaxTimeout time.Duration
	// ResetOnProgress replaces Config.ResetOnProgress when not nil.
	ResetOnProgress *bool
	// LateWindow replaces Config.LateWindow for this request: how long
	// after its cancel the tracker waits before settling it.
	LateWindow time.Duration
}
