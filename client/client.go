package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"inflight/event"
	"inflight/oauth"
	"inflight/session"
	"inflight/wire"
)

// Config configures a Client. Exactly one target must be set: Command, Pipes
// or URL.
type Config struct {
	// Command and Args start a stdio server. Env adds KEY=VALUE variables to
	// inflight's own environment; Dir is the server's working directory.
	Command string
	Args    []string
	Env     []string
	Dir     string
	// Pipes connects to an already running stdio server (in-process tests
	// and benchmarks) instead of starting a command.
	Pipes *Pipes

	// URL is a Streamable HTTP MCP endpoint. Headers are added to every
	// HTTP request (Authorization and the like).
	URL     string
	Headers http.Header
	// HTTPClient replaces the default HTTP client (tests).
	HTTPClient *http.Client
	// Auth, when set, authorizes the HTTP requests with OAuth (package
	// oauth): a 401 with a bearer challenge runs the flow, and each step
	// is reported as event.Auth. Nil: a 401 or 403 is a refusal.
	Auth *oauth.Config
	// SSE says URL is the stream of the deprecated HTTP+SSE transport
	// (protocol 2024-11-05): a GET whose endpoint event names where
	// messages are POSTed. Legacy era only.
	SSE bool
	// NoSSEFallback turns off the HTTP+SSE detection of a Streamable HTTP
	// URL (a POST refused with a 4xx, then a GET that offers an HTTP+SSE
	// stream).
	NoSSEFallback bool
	// RecordHTTP reports every HTTP exchange whole, headers, bodies and
	// an event stream's events, as an event.Exchange once it is over (for
	// a trace or an HAR). Off, nothing is kept beyond what is read.
	RecordHTTP bool
	// RecordHTTPBodies keeps the responses' bodies and event streams in
	// those exchanges too (an HAR is being written); without it they are
	// counted, not kept (httptap.Transport.Bodies).
	RecordHTTPBodies bool

	// ProtocolVersion forces a version, and with it the era; "" detects.
	ProtocolVersion string
	// ClientName and ClientVersion identify inflight to the server.
	ClientName    string
	ClientVersion string
	// NoTasks leaves task support undeclared: no tasks capability in the
	// legacy initialize, no tasks extension in a modern tools/call's
	// clientCapabilities. By default both are declared, so a server may
	// answer a tools/call with a task (the session follows it).
	NoTasks bool

	// RoundTrips is how many plain requests Connect times once connected (a
	// ping in the legacy era, server/discover in the modern one), reported
	// as event.RoundTrip: the tracker judges what crossed a cancel by the
	// least of them. 0: none (the client's own tests see only the traffic
	// they script); inflight's commands ask for DefaultRoundTrips.
	RoundTrips int
	// ProbeTimeout bounds the stdio server/discover probe; a server silent
	// that long is taken as legacy. Default 3s.
	ProbeTimeout time.Duration
	// HandshakeTimeout bounds the whole connection set-up. Default 30s.
	HandshakeTimeout time.Duration
	// WriteTimeout bounds one write to a stdio server's stdin (Send also
	// stops at its ctx). A server that stops reading would otherwise block
	// Send and Cancel until Close; past the bound the write fails with
	// ErrWriteStalled and the connection is closed. Default 5s.
	WriteTimeout time.Duration
	// MaxMessageBytes bounds one message (stdio line, SSE event, JSON body).
	// Default 32 MiB.
	MaxMessageBytes int
	// ShutdownWait bounds each step of Close: the stdio shutdown (close
	// stdin, then SIGTERM, then SIGKILL), the wait for HTTP requests to
	// report how their streams ended, the legacy HTTP DELETE, the wait for
	// Send, Cancel and Connect calls in progress, and how long Close waits
	// for a consumer that stopped reading Events. Default 2s.
	ShutdownWait time.Duration
	// EventBuffer is the capacity of the event channel. Default 1024.
	EventBuffer int
	// ServerRequests answers requests the server sends to the client
	// (legacy era: roots/list, sampling/createMessage, elicitation/create).
	// When nil they are refused with a JSON-RPC error; ping is always
	// answered. ctx ends when the server cancels the request or the
	// connection ends, and the handler must return then: Close waits for
	// it (a handler that ignores ctx holds Close up).
	//
	// To decline, return what the spec calls declining: the ElicitResult
	// {"action":"decline"} for elicitation/create, the error -1 ("User
	// rejected sampling request") for sampling/createMessage (package
	// answer does both).
	ServerRequests func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, *wire.Error)
	// Answers declares the server's questions the caller answers: the
	// elicitation, sampling and roots capabilities, in the legacy
	// initialize and in every modern request's clientCapabilities (a
	// server must not ask what the client did not declare). By default
	// none is declared.
	Answers Answers
}

// Answers are the client capabilities for the server's questions.
type Answers struct {
	Elicitation, Sampling, Roots bool
	// ElicitationURL declares elicitation's URL mode as well as its form
	// mode: for a caller that shows the URL to a person, who opens it (or
	// not) themselves. inflight never opens one.
	ElicitationURL bool
}

// add puts the declared capabilities into caps.
func (a Answers) add(caps map[string]any) {
	switch {
	case a.Elicitation && a.ElicitationURL:
		caps["elicitation"] = map[string]any{"form": map[string]any{}, "url": map[string]any{}}
	case a.Elicitation:
		// Form mode only: a caller that cannot show a URL to a person
		// (inflight call) must not be sent one.
		caps["elicitation"] = map[string]any{"form": map[string]any{}}
	}
	if a.Sampling {
		caps["sampling"] = map[string]any{}
	}
	if a.Roots {
		caps["roots"] = map[string]any{}
	}
}

// Pipes are the three standard streams of a stdio server, seen from the
// client: we write Stdin and read Stdout and Stderr.
type Pipes struct {
	Stdin  io.WriteCloser
	Stdout io.ReadCloser
	Stderr io.ReadCloser // optional
}

func (c *Config) setDefaults() {
	if c.ClientName == "" {
		c.ClientName = "inflight"
	}
	if c.ClientVersion == "" {
		c.ClientVersion = "0.1.0"
	}
	c.RoundTrips = max(c.RoundTrips, 0)
	if c.ProbeTimeout <= 0 {
		c.ProbeTimeout = 3 * time.Second
	}
	if c.HandshakeTimeout <= 0 {
		c.HandshakeTimeout = 30 * time.Second
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = 5 * time.Second
	}
	if c.MaxMessageBytes <= 0 {
		c.MaxMessageBytes = 32 << 20
	}
	if c.ShutdownWait <= 0 {
		c.ShutdownWait = 2 * time.Second
	}
	if c.EventBuffer <= 0 {
		c.EventBuffer = 1024
	}
}

// Request is a request to send on behalf of the caller (the tracker chose
// its ID and progress token).
type Request struct {
	ID     wire.ID
	Method string
	// Params is the params object without protocol _meta; the client adds
	// the era's _meta keys. nil means no params.
	Params json.RawMessage
	// ProgressToken, when set, is put in _meta.progressToken.
	ProgressToken wire.ID
	// LateWindow is how long a legacy HTTP response stream is read after
	// its cancel (or after its response, when the server keeps it open)
	// before it is closed: the tracker's request's (session.Request's
	// LateWindow), so that the client stops reading when the tracker stops
	// watching. Zero is session.DefaultLateWindow.
	LateWindow time.Duration
}

// Errors callers may test for.
var (
	// ErrNotInFlight: Cancel was asked for a request that is not in flight
	// (never sent, already answered, or the client's own handshake).
	ErrNotInFlight = errors.New("request is not in flight")
	// ErrEchoed: the server sent the request back as it was written: it
	// echoes its input, and is no MCP server.
	ErrEchoed = errors.New("the server sent inflight's own request back: it echoes its input and is not an MCP server")
	// ErrUnreachable marks (errors.Is) the failure of an HTTP exchange that
	// got no response at all: the connection was refused, reset or timed
	// out, or TLS failed. Over HTTP there is no connection to lose, so this
	// is how a caller learns the server went away.
	ErrUnreachable = errors.New("server unreachable")
	// ErrClosed: the client is closed or its transport is gone.
	ErrClosed = errors.New("connection closed")
	// ErrNotConnected: Send before Connect finished.
	ErrNotConnected = errors.New("not connected")
	// ErrNotCancellable: Cancel was asked for a request the protocol
	// forbids cancelling: initialize (2025-11-25 cancellation, "The
	// initialize request MUST NOT be cancelled by clients").
	ErrNotCancellable = errors.New("request must not be cancelled")
)

// transport is what differs between stdio and Streamable HTTP.
type transport interface {
	// start begins I/O; incoming messages go to Client.receive.
	start(ctx context.Context) error
	// send writes one outgoing message. For requests over HTTP it returns
	// once the request is on its way; the reply arrives as events.
	send(ctx context.Context, out outgoing) error
	// cancel sends the cancel signal for a request in flight.
	cancel(id wire.ID, reason string) (event.CancelSignal, error)
	// close shuts the transport down and waits for its goroutines.
	close() error
}

// outgoing is one message on its way out.
type outgoing struct {
	id       wire.ID // zero for notifications and responses
	method   string  // "" for responses
	name     string  // params.name or params.uri, for Mcp-Name
	params   json.RawMessage
	raw      []byte
	internal bool
	// version is the protocol version this message is sent under (HTTP header).
	version string
	modern  bool
	// flight is the tracked request this message is (nil for the client's
	// own), so that ending a stream forgets that request and never a later
	// one that reuses its ID.
	flight *flight
	// writing, when set, is told the moment the transport starts writing
	// the message (the stdio write, the HTTP POST): a timed round trip
	// starts there, as a cancel's signal does, so that the two compare.
	writing func(time.Time)
	// status, when set, receives the HTTP status event of a one-way POST
	// instead of the event channel, for a caller that reports it after an
	// event of its own (the cancel is reported before its POST's 202).
	status func(event.Event)
}

// flight is a tracked request in flight at the wire level.
type flight struct {
	method string
	raw    []byte // the request as written, once Send has built it
	// cancelled is set by the first Cancel, at; cancelDone is closed once
	// that Cancel has sent its signal (signal, cancelErr), so that a second
	// Cancel can report what the first one did.
	cancelled  bool
	at         time.Time
	cancelDone chan struct{}
	signal     event.CancelSignal
	cancelErr  error
	// lateWindow is the request's late window (Request.LateWindow, else
	// session.DefaultLateWindow).
	lateWindow time.Duration
}

// callResult is what an internal call receives.
type callResult struct {
	msg wire.Message
	// at is when the answer was read.
	at  time.Time
	err error
}

// Client is one connection to one MCP server.
type Client struct {
	cfg    Config
	kind   event.TransportKind // fixed by New
	events chan event.Event
	quit   chan struct{} // closed during Close: from then on a full channel drops events
	dead   chan struct{} // closed when the transport is gone
	t      transport

	// lifeMu orders Connect's start of the transport against Close, so that
	// no goroutine is started once Close has begun waiting for them, and
	// counts the calls running on callers' goroutines (see enter).
	lifeMu  sync.Mutex
	started bool // Connect started the transport
	closing bool // Close has begun
	calls   int  // Send, Cancel and Connect calls in progress
	// callsIdle, made by Close when calls were in progress, is closed when
	// the last of them leaves. eventsLeft says Close gave up waiting and
	// left closing Events to that last call.
	callsIdle  chan struct{}
	eventsLeft bool

	mu        sync.Mutex
	info      event.ConnInfo
	connected bool
	waiters   map[wire.ID]chan callResult
	flights   map[wire.ID]*flight
	// serverCalls holds the server's requests being answered, by ID. Each
	// entry is its job's own: a withdrawn request's ID that the server uses
	// again names a new entry, which the first job's end must not remove.
	serverCalls map[wire.ID]*serverCall
	// The workers answering the server's requests (see handleServerRequest):
	// started with the first; answering counts the requests queued or being
	// answered (refusals aside).
	workersStarted bool
	serverJobs     chan serverJob
	answering      int
	toolHeaders    map[string][]paramHeader

	nextInternal atomic.Int64
	wg           sync.WaitGroup // goroutines the client itself starts
	closeOnce    sync.Once
	deadOnce     sync.Once
	quitOnce     sync.Once
	closeErr     error
	// closedEv is the event.TransportClosed markDead emitted, written
	// inside deadOnce and read by Close after its own markDead, which the
	// Once orders after it; closedSent says it reached the channel, so that
	// Close tries once more when it was dropped.
	closedEv   event.Event
	closedSent atomic.Bool

	// The outbox (see emit): events waiting for room in the channel, in
	// order, moved there by one pump goroutine (pumpWG) while pumping;
	// drained is closed when it empties.
	qmu     sync.Mutex
	outbox  []event.Event
	pumping bool
	drained chan struct{}
	pumpWG  sync.WaitGroup
	// deadErr is why the transport died (nil for Close), set under mu
	// before dead is closed.
	deadErr error
}

// New returns a client for the configured target. Nothing starts until
// Connect.
func New(cfg Config) (*Client, error) {
	cfg.setDefaults()
	c := &Client{
		cfg:         cfg,
		events:      make(chan event.Event, cfg.EventBuffer),
		quit:        make(chan struct{}),
		dead:        make(chan struct{}),
		waiters:     map[wire.ID]chan callResult{},
		flights:     map[wire.ID]*flight{},
		serverCalls: map[wire.ID]*serverCall{},
		toolHeaders: map[string][]paramHeader{},
	}
	targets := 0
	if cfg.Command != "" {
		targets++
	}
	if cfg.Pipes != nil {
		targets++
	}
	if cfg.URL != "" {
		targets++
	}
	if targets != 1 {
		return nil, errors.New("client: exactly one of Command, Pipes and URL must be set")
	}
	if cfg.SSE && cfg.URL == "" {
		return nil, errors.New("client: SSE needs a URL")
	}
	if cfg.SSE && wire.IsModernVersion(cfg.ProtocolVersion) {
		return nil, fmt.Errorf("client: protocol version %s has no HTTP+SSE binding (the deprecated transport is legacy only: %s)",
			cfg.ProtocolVersion, strings.Join(c.legacyVersions(), ", "))
	}
	if cfg.ProtocolVersion != "" && !wire.IsModernVersion(cfg.ProtocolVersion) && !c.speaksLegacy(cfg.ProtocolVersion) {
		hint := ""
		if cfg.ProtocolVersion == wire.Version20241105 {
			hint = "; 2024-11-05 is spoken over its own HTTP transport, HTTP+SSE, only"
		}
		return nil, fmt.Errorf("client: protocol version %q is not one inflight speaks (%s, %s)%s",
			cfg.ProtocolVersion, wire.VersionModern, strings.Join(c.legacyVersions(), ", "), hint)
	}
	if cfg.SSE {
		t, err := newSSETransport(c)
		if err != nil {
			return nil, err
		}
		c.t = t
		c.kind = event.TransportSSE
	} else if cfg.URL != "" {
		t, err := newHTTPTransport(c)
		if err != nil {
			return nil, err
		}
		c.t = t
		c.kind = event.TransportHTTP
	} else {
		c.t = newStdioTransport(c)
		c.kind = event.TransportStdio
	}
	c.info.Transport = c.kind
	return c, nil
}

// Events is the channel of everything that happens. It is closed by Close
// once every goroutine of the client has finished and every Send, Cancel
// and Connect in progress has returned (see Close).
func (c *Client) Events() <-chan event.Event { return c.events }

// Info returns the connection details known so far, as a deep copy.
func (c *Client) Info() event.ConnInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.info.Clone()
}

// era is the connection's era (event.EraUnknown until Connect has found it),
// without the copying Info does.
func (c *Client) era() event.Era {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.info.Era
}

// deadCause is why the transport died, when it has (matching ErrClosed
// too), else fallback.
func (c *Client) deadCause(fallback error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if isClosed(c.dead) && c.deadErr != nil {
		return closedBy{c.deadErr}
	}
	return fallback
}

// closedBy is the transport's death as an error: its cause's text, and
// errors.Is ErrClosed.
type closedBy struct{ err error }

func (e closedBy) Error() string   { return e.err.Error() }
func (e closedBy) Unwrap() []error { return []error{e.err, ErrClosed} }

// Done is closed when the transport is gone.
func (c *Client) Done() <-chan struct{} { return c.dead }

// emit delivers an event without ever waiting for the consumer: when the
// channel is full the event joins the outbox, which one pump goroutine
// empties into the channel in order. It is what every path uses that a
// consumer may be waiting on, or that holds something the consumer needs:
// Send, Cancel, Connect and Close run on the consumer's goroutine (a
// headless run reads Events and calls Cancel from the same loop), and
// markDead runs inside a Once that Cancel may be waiting for. Had any of
// them waited for room in a channel only their caller empties, the client
// would hang for good (issue 14, item 1: a legacy server flooding pings at
// a client whose cancel found the channel full). Nothing is dropped until
// Close gives up on the consumer (see Close).
//
// Only goroutines Close waits for may emit: the client's own (wg) and
// callers inside enter/leave. Events is closed after them all.
func (c *Client) emit(ev event.Event) { c.deliver(ev, false) }

// emitWait is emit for what a server can flood (messages read, malformed
// lines, stderr): it waits until there is room, which is the backpressure
// that keeps a flood's memory bounded, until Close gives up on the
// consumer. Only the client's own readers may call it, and only while they
// hold nothing another path needs. It reports whether the event was
// delivered (or queued before the consumer was given up on).
func (c *Client) emitWait(ev event.Event) bool { return c.deliver(ev, true) }

func (c *Client) deliver(ev event.Event, wait bool) bool {
	c.qmu.Lock()
	if len(c.outbox) == 0 {
		// The first, non-blocking attempt matters: once quit is closed a
		// select with both cases ready would pick at random and drop
		// events even though the channel had room for them.
		select {
		case c.events <- ev:
			c.qmu.Unlock()
			c.delivered(ev)
			return true
		default:
		}
		if wait {
			// Nothing queued, so nothing can be overtaken: wait on the
			// channel itself, as fast as a blocking send.
			c.qmu.Unlock()
			select {
			case c.events <- ev:
				c.delivered(ev)
				return true
			case <-c.quit:
				return false
			}
		}
	}
	if isClosed(c.quit) {
		c.qmu.Unlock()
		return false
	}
	c.outbox = append(c.outbox, ev)
	if c.drained == nil {
		c.drained = make(chan struct{})
	}
	drained := c.drained
	if !c.pumping {
		c.pumping = true
		c.pumpWG.Add(1)
		go c.pump()
	}
	c.qmu.Unlock()
	if !wait {
		return true
	}
	select {
	case <-drained:
		return true
	case <-c.quit:
		return false
	}
}

// pump moves the outbox into the channel, oldest first, until it is empty
// or Close gives up on the consumer (then what is left is dropped). An
// event leaves the outbox only once it is in the channel, so that nothing
// emitted later can overtake it.
func (c *Client) pump() {
	defer c.pumpWG.Done()
	for {
		c.qmu.Lock()
		if len(c.outbox) == 0 {
			c.stopPumpLocked()
			c.qmu.Unlock()
			return
		}
		ev := c.outbox[0]
		c.qmu.Unlock()
		ok := false
		select {
		case c.events <- ev:
			ok = true
		default:
			select {
			case c.events <- ev:
				ok = true
			case <-c.quit:
			}
		}
		c.qmu.Lock()
		if !ok {
			c.outbox = nil
			c.stopPumpLocked()
			c.qmu.Unlock()
			return
		}
		c.outbox[0] = event.Event{}
		c.outbox = c.outbox[1:]
		c.qmu.Unlock()
		c.delivered(ev)
	}
}

func (c *Client) stopPumpLocked() {
	c.outbox = nil
	c.pumping = false
	if c.drained != nil {
		close(c.drained)
		c.drained = nil
	}
}

// delivered notes that an event reached the channel.
func (c *Client) delivered(ev event.Event) {
	if ev.Kind == event.TransportClosed {
		c.closedSent.Store(true)
	}
}

// outboxDrained returns a channel closed once the outbox is empty (nil if
// it is already).
func (c *Client) outboxDrained() chan struct{} {
	c.qmu.Lock()
	defer c.qmu.Unlock()
	return c.drained
}

// stopEmitting makes emit drop events instead of waiting for room.
// quit is closed under qmu, which deliver holds from its look at quit to
// the start of a pump: so no pump starts once quit is closed, and Close's
// wait for the pump after stopEmitting cannot miss one (a pump that
// outlived it would send on the closed channel).
func (c *Client) stopEmitting() {
	c.quitOnce.Do(func() {
		c.qmu.Lock()
		close(c.quit)
		c.qmu.Unlock()
	})
}

// markDead records that the transport is gone: every waiter fails, every
// flight ends, and one event.TransportClosed is emitted.
func (c *Client) markDead(err error) {
	c.deadOnce.Do(func() {
		c.mu.Lock()
		waiters := c.waiters
		c.waiters = map[wire.ID]chan callResult{}
		c.flights = map[wire.ID]*flight{}
		for _, sc := range c.serverCalls {
			sc.cancel()
		}
		// Closed under mu: call and handleServerRequest check it under mu,
		// so none of them can register after the waiters were taken.
		c.deadErr = err
		close(c.dead)
		c.mu.Unlock()
		for _, w := range waiters {
			w <- callResult{err: fmt.Errorf("%w: %v", ErrClosed, errOr(err, "transport closed"))}
		}
		// Never waits (see emit): Cancel and Send end up here, on the
		// consumer's goroutine, and others wait for this Once.
		c.closedEv = event.Event{Kind: event.TransportClosed, Time: time.Now(), Err: err}
		c.emit(c.closedEv)
	})
}

func errOr(err error, s string) string {
	if err != nil {
		return err.Error()
	}
	return s
}

// Close shuts the connection down: for stdio it closes the server's stdin,
// waits, then sends SIGTERM and SIGKILL, each wait bounded; for HTTP it
// closes every stream (for a modern request still in flight that is its
// cancel, reported as event.CancelSent) and ends a legacy session with
// DELETE. Close waits for every goroutine of the client and for the Send,
// Cancel and Connect calls in progress, then closes the Events channel.
// From the moment Close begins, new calls fail with ErrClosed. It is
// idempotent.
//
// A consumer that keeps reading Events gets the final event.TransportClosed.
// It may miss other events: once ShutdownWait has passed the client stops
// waiting for room in the channel and drops what does not fit, so that a
// consumer that stopped reading cannot hang Close; the final
// event.TransportClosed alone is retried once the client's goroutines are
// done, waiting at most ShutdownWait for room.
//
// A call blocked in a write that ignores the closing of its pipe (only a
// caller-supplied Pipes.Stdin can) is waited for ShutdownWait; after that
// Close returns and Events is closed when that call returns.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		// From here Connect starts nothing, and Send, Cancel and Connect
		// refuse; a transport never started has nothing to stop but is told
		// anyway (the HTTP one drops its context).
		c.lifeMu.Lock()
		c.closing = true
		var idle chan struct{}
		if c.calls > 0 {
			idle = make(chan struct{})
			c.callsIdle = idle
		}
		c.lifeMu.Unlock()
		giveUp := time.AfterFunc(c.cfg.ShutdownWait, c.stopEmitting)
		// Closing the transport first is what ends the calls in progress:
		// a write blocked on the server's stdin fails once stdin is
		// closed, an HTTP exchange once the transport's context ends, and
		// a handshake waiting for an answer once markDead fails it.
		c.closeErr = c.t.close()
		c.markDead(nil)
		c.wg.Wait()
		if idle != nil {
			wait := time.NewTimer(c.cfg.ShutdownWait)
			select {
			case <-idle:
			case <-wait.C:
			}
			wait.Stop()
		}
		// What the outbox still holds goes out while the consumer reads,
		// until ShutdownWait has passed.
		if drained := c.outboxDrained(); drained != nil {
			select {
			case <-drained:
			case <-c.quit:
			}
		}
		giveUp.Stop()
		if !c.closedSent.Load() {
			// The consumer fell behind while the transport closed (or it is
			// the caller, and reads nothing until Close returns), and the
			// outbox was dropped. Nothing else emits now: make room by
			// dropping the oldest event still buffered, if need be, so that
			// the last event is the one that says the connection is over.
			c.stopEmitting()
			c.pumpWG.Wait()
			if !c.closedSent.Load() {
				select {
				case c.events <- c.closedEv:
				default:
					select {
					case <-c.events:
					default:
					}
					select {
					case c.events <- c.closedEv:
					default:
					}
				}
			}
		}
		c.stopEmitting()
		c.pumpWG.Wait()
		c.lifeMu.Lock()
		if c.calls > 0 {
			c.eventsLeft = true // see leave
		} else {
			close(c.events)
		}
		c.lifeMu.Unlock()
	})
	return c.closeErr
}

// enter registers a call on the caller's goroutine (Send, Cancel, Connect):
// such a call may emit events and start goroutines, so Close waits for it
// before it closes Events. Once Close has begun it refuses with ErrClosed.
// Every successful enter is paired with a leave.
func (c *Client) enter() error {
	c.lifeMu.Lock()
	defer c.lifeMu.Unlock()
	if c.closing {
		return ErrClosed
	}
	c.calls++
	return nil
}

// leave ends a call registered by enter. The last call to leave after Close
// began tells Close so, and closes Events itself if Close could not wait
// for it.
func (c *Client) leave() {
	c.lifeMu.Lock()
	defer c.lifeMu.Unlock()
	c.calls--
	if c.calls > 0 || !c.closing {
		return
	}
	if c.callsIdle != nil {
		close(c.callsIdle)
		c.callsIdle = nil
	}
	if c.eventsLeft {
		c.eventsLeft = false
		close(c.events)
	}
}

// isInternalID says whether an ID is one the client chose for its own
// housekeeping; the tracker only issues integer IDs.
func isInternalID(id wire.ID) bool {
	return strings.HasPrefix(id.Raw(), `"inflight-`)
}

func (c *Client) newInternalID() wire.ID {
	return wire.StringID("inflight-" + strconv.FormatInt(c.nextInternal.Add(1), 10))
}

// receive handles one message read from the server; only the client's
// readers call it, and it waits for room for what it reports (emitWait), so
// that a flood is slowed to what the consumer takes. owner is the request
// whose HTTP response stream carried it (zero on stdio and GET streams). It
// reports whether the message answered owner.
func (c *Client) receive(line []byte, truncated int, at time.Time, owner wire.ID) (answered bool) {
	return c.receiveAt(line, truncated, at, owner, 0)
}

// receiveAt is receive for a message that ends streamEnd bytes into the
// server's output (stdio; 0: unknown), which its events carry.
func (c *Client) receiveAt(line []byte, truncated int, at time.Time, owner wire.ID, streamEnd int64) (answered bool) {
	// One copy per message: the event's Raw, which the message decoded
	// from it aliases, where Decode's own copy of the params was a second
	// allocation per line on a flood. DecodeLine validates the line once
	// and reads a progress notification's params in the same walk: the
	// flood's profile had json.Valid twice per line (36 % of the reader)
	// and a second walk over the params.
	raw := bytes.Clone(line)
	msg, progress, err := wire.DecodeLine(raw)
	if err != nil {
		c.emitWait(event.Event{Kind: event.Malformed, Time: at, StreamEnd: streamEnd, RequestID: owner, Raw: keepRaw(line), Truncated: truncated, Err: err})
		return false
	}
	switch msg.Kind {
	case wire.KindResult, wire.KindError:
		id := msg.ID
		if id == wire.NullID && !owner.IsZero() {
			// An error without an ID on a request's own HTTP stream answers
			// that request (servers do this when they reject the POST).
			id = owner
		}
		c.mu.Lock()
		w, isWaiter := c.waiters[id]
		if isWaiter {
			delete(c.waiters, id)
		}
		// Answered is no longer in flight, on every transport: a Cancel
		// from now on must send nothing, even while an HTTP stream stays
		// open after its response (the stream's bookkeeping is the
		// transport's).
		f := c.flights[id]
		if f != nil {
			delete(c.flights, id)
		}
		// Only modern Streamable HTTP mirrors annotations into headers, so
		// only there is a tools/list result worth reading, and that
		// happens outside the lock: it unmarshals and walks every schema.
		learn := f != nil && f.method == wire.MethodToolsList && msg.Kind == wire.KindResult &&
			c.kind == event.TransportHTTP && c.info.Era == event.EraModern
		c.mu.Unlock()
		var warnings []string
		if learn {
			warnings = c.learnToolHeaders(msg.Result)
		}
		internal := isWaiter || isInternalID(id)
		c.emitWait(event.Event{Kind: event.Received, Time: at, StreamEnd: streamEnd, RequestID: id, Owner: owner, Raw: raw, Msg: msg, Internal: internal})
		for _, w := range warnings {
			c.emitWait(event.Event{Kind: event.Note, Time: at, RequestID: id, Text: w})
		}
		if isWaiter {
			w <- callResult{msg: msg, at: at}
		}
		return !owner.IsZero() && id == owner
	case wire.KindRequest:
		if c.echoed(msg, raw) {
			// Our own request came back: the "server" echoes its input
			// (cat, a misconfigured wrapper). Answering it would feed the
			// echo inflight's own error as if the server had said it.
			c.emitWait(event.Event{Kind: event.Received, Time: at, StreamEnd: streamEnd, RequestID: msg.ID, Raw: raw, Msg: msg, Internal: isInternalID(msg.ID)})
			c.failCall(msg.ID, ErrEchoed, true)
			return false
		}
		if c.era() == event.EraModern {
			// 2026-07-28: servers do not send requests ("The server MUST
			// NOT write JSON-RPC requests to stdout") and clients do not
			// send responses, on every transport. So nothing is answered;
			// the request is the server's violation, for the tracker to
			// record (it is not the client's housekeeping).
			c.emitWait(event.Event{Kind: event.Received, Time: at, StreamEnd: streamEnd, RequestID: msg.ID, Raw: raw, Msg: msg})
			return false
		}
		c.emitWait(event.Event{Kind: event.Received, Time: at, StreamEnd: streamEnd, RequestID: msg.ID, Owner: owner, Raw: raw, Msg: msg, Internal: true})
		c.handleServerRequest(msg, raw, at)
	case wire.KindNotification:
		internal := false
		if msg.Method == wire.NotifyCancelled {
			if cp, err := wire.DecodeCancelled(msg.Params); err == nil {
				c.mu.Lock()
				sc, ok := c.serverCalls[cp.RequestID]
				delete(c.serverCalls, cp.RequestID)
				c.mu.Unlock()
				if ok {
					// The server cancelled one of its own requests to us.
					sc.cancel()
					internal = true
				} else if c.serverEndedListen(cp.RequestID) {
					// The server ended one of our subscriptions/listen
					// streams: on its own stream that is as final as a
					// response, so the stream's end is no failure.
					answered = !owner.IsZero() && cp.RequestID == owner
				}
			}
		}
		c.emitWait(event.Event{Kind: event.Received, Time: at, StreamEnd: streamEnd, RequestID: owner, Owner: owner, Raw: raw, Msg: msg, Internal: internal, Progress: progress})
	}
	return answered
}

// serverEndedListen handles a server's notifications/cancelled naming one
// of our requests. The subscriptions page allows it for exactly one thing,
// ending a subscriptions/listen; for such a listen the client forgets the
// flight (the server will send nothing more, so a later Cancel has nothing
// to cancel) and reports true. A cancel naming anything else changes
// nothing here: the tracker records it as a violation.
func (c *Client) serverEndedListen(id wire.ID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.flights[id]
	if f == nil || f.method != wire.MethodSubscriptionsListen {
		return false
	}
	delete(c.flights, id)
	return true
}

// emitSent reports an outgoing request. The event gets its own copy of the
// bytes: the transport keeps reading out.raw (an HTTP redirect replays the
// body), and the consumer owns what it receives.
func (c *Client) emitSent(out outgoing) {
	msg, _ := wire.Decode(out.raw)
	c.emit(event.Event{Kind: event.Sent, Time: time.Now(), RequestID: out.id, Raw: bytes.Clone(out.raw), Msg: msg, Internal: out.internal})
}

// emitOwnSent reports a message the client wrote on its own behalf (a
// cancel, notifications/initialized, an answer to the server's request),
// at the time it went out. raw is the client's own and never changes, so
// the event may keep it. id is the request the message concerns.
func (c *Client) emitOwnSent(id wire.ID, raw []byte, at time.Time) {
	msg, _ := wire.Decode(raw)
	if id.IsZero() {
		id = msg.ID
	}
	c.emit(event.Event{Kind: event.Sent, Time: at, RequestID: id, Raw: raw, Msg: msg, Internal: true})
}

// keepRaw copies at most event.MaxRawKept bytes of a message for an event.
func keepRaw(raw []byte) []byte {
	if len(raw) > event.MaxRawKept {
		raw = raw[:event.MaxRawKept]
	}
	return bytes.Clone(raw)
}

// echoed reports whether a request the server sent is one of ours sent
// back: the ID of one of the client's own calls still waiting (strings no
// server picks), or a tracked request's bytes exactly. A legacy server's
// own requests number from 1 as ours do, so an ID alone proves nothing.
func (c *Client) echoed(msg wire.Message, raw []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.waiters[msg.ID]; ok && isInternalID(msg.ID) {
		return true
	}
	f := c.flights[msg.ID]
	return f != nil && f.method == msg.Method && bytes.Equal(bytes.TrimSpace(raw), f.raw)
}

// Bounds on the requests a legacy server has waiting for inflight's answer
// (issue 14, item 5: one goroutine per request, with no limit, took 740 MB
// for 300 000 pings on stdio, and opened a connection per answer on HTTP).
const (
	// serverWorkers answer the server's requests, taking them in the order
	// they came: a small pool for what is answered at once (pings,
	// refusals); a request for the ServerRequests handler, which may wait
	// for a person, is handed to a goroutine of its own (serverWorker).
	serverWorkers = 4
	// maxServerAnswering is how many of them may wait to be answered;
	// past it a request is refused (an error, cheap to write) and reported
	// as event.ServerRequestRefused.
	maxServerAnswering = 256
	// maxServerQueued bounds answers and refusals waiting for a worker
	// together; past it the reader waits (holding nothing), as it waits for
	// room in the event channel.
	maxServerQueued = 1024
)

// serverJob is one server request waiting for a worker.
type serverJob struct {
	msg    wire.Message // params dropped for a refusal
	refuse bool
	ctx    context.Context // for a handler's request; cancelled by the server
	// call is the job's entry in serverCalls (nil for a ping or a
	// refusal): the entry under its ID is still this job's only while it
	// is this pointer.
	call *serverCall
}

// serverCall is one server request registered in serverCalls.
type serverCall struct {
	cancel context.CancelFunc // ends the handler's ctx
}

// ownsCall reports whether job's request is still the one registered
// under its ID (not withdrawn, and not replaced by a later request under
// the same ID). Called with c.mu held.
func (c *Client) ownsCall(job serverJob) bool {
	return job.call != nil && c.serverCalls[job.msg.ID] == job.call
}

// handleServerRequest queues a request a legacy server sent us for the
// workers. The answer is never written by the reader that read the
// request: a server that does not read its stdin would otherwise stall the
// write, and with it all reading.
func (c *Client) handleServerRequest(msg wire.Message, raw []byte, at time.Time) {
	c.mu.Lock()
	if isClosed(c.dead) {
		// markDead has cancelled every server call already; a new one would
		// outlive it and answer on a dead transport.
		c.mu.Unlock()
		return
	}
	if !c.workersStarted {
		// The caller is one of the client's readers, counted in wg, so this
		// Add cannot race with Close's Wait.
		c.workersStarted = true
		c.serverJobs = make(chan serverJob, maxServerQueued)
		c.wg.Add(serverWorkers)
		for i := 0; i < serverWorkers; i++ {
			go c.serverWorker(c.serverJobs)
		}
	}
	if _, open := c.serverCalls[msg.ID]; open {
		// The server reused the ID of its own request still waiting for
		// inflight's answer. Any answer under that ID would be read as the
		// first one's, so this one gets none: the first keeps its answer
		// (the tracker flags the reuse, server_request_reused_id).
		c.mu.Unlock()
		c.emitWait(event.Event{Kind: event.Note, Time: at, RequestID: msg.ID, Internal: true,
			Text: fmt.Sprintf("the server sent %s under ID %s, which its request still waiting for an answer has: not answered, so that the two are not mixed", msg.Method, msg.ID)})
		return
	}
	job := serverJob{msg: msg, refuse: c.answering >= maxServerAnswering}
	if !job.refuse {
		c.answering++
		if msg.Method != wire.MethodPing {
			// Every open request is registered, answered by a handler or
			// refused, so that a reused ID is seen whatever answers it;
			// the ctx is the handler's and the server's cancel ends it.
			ctx := context.WithValue(context.WithValue(context.Background(), serverRequestIDKey{}, msg.ID), answerRetryKey{}, &answerRetry{})
			ctx = context.WithValue(ctx, serverRequestAtKey{}, at)
			var cancel context.CancelFunc
			job.ctx, cancel = context.WithCancel(ctx)
			job.call = &serverCall{cancel: cancel}
			c.serverCalls[msg.ID] = job.call
		}
	}
	jobs := c.serverJobs
	c.mu.Unlock()
	if job.refuse {
		job.msg.Params = nil
		c.emitWait(event.Event{Kind: event.ServerRequestRefused, Time: at, RequestID: msg.ID, Raw: keepRaw(raw), Msg: msg, Internal: true,
			Text: fmt.Sprintf("the server has more than %d of its requests waiting for inflight's answer; %s %s refused", maxServerAnswering, msg.Method, msg.ID)})
	}
	select {
	case jobs <- job:
	case <-c.dead:
		c.jobDone(job)
	}
}

// serverRequestIDKey keys the server's ID for its request in a
// ServerRequests handler's ctx.
type serverRequestIDKey struct{}

// ServerRequestID is the server's JSON-RPC ID of the request a
// Config.ServerRequests handler answers, read from the handler's ctx: a
// handler that hands the question on (the TUI) names it with this, as the
// tracker does (session.ServerRequest.ID).
func ServerRequestID(ctx context.Context) (wire.ID, bool) {
	id, ok := ctx.Value(serverRequestIDKey{}).(wire.ID)
	return id, ok
}

// serverRequestAtKey keys when the request was read in a ServerRequests
// handler's ctx.
type serverRequestAtKey struct{}

// ServerRequestAt is when the request a Config.ServerRequests handler
// answers was read: the Time of its event.Received, which the tracker
// keeps as session.ServerRequest.At. With the ID it names one request
// even when the server used the ID again after withdrawing the first.
func ServerRequestAt(ctx context.Context) (time.Time, bool) {
	at, ok := ctx.Value(serverRequestAtKey{}).(time.Time)
	return at, ok
}

// jobDone ends a job's accounting.
func (c *Client) jobDone(job serverJob) {
	if job.refuse {
		return
	}
	c.mu.Lock()
	c.answering--
	if c.ownsCall(job) {
		// Only its own entry: after a withdrawal the server may have used
		// the ID again for a request still being answered.
		delete(c.serverCalls, job.msg.ID)
	}
	c.mu.Unlock()
	if job.call != nil {
		job.call.cancel()
	}
}

// serverWorker answers queued server requests until the transport is gone.
func (c *Client) serverWorker(jobs <-chan serverJob) {
	defer c.wg.Done()
	for {
		select {
		case <-c.dead:
			return
		case job := <-jobs:
			if job.waitsOnHandler(c.cfg.ServerRequests != nil) {
				// A handler may wait for a person (the TUI's answer form):
				// it gets a goroutine of its own, so that four questions
				// open at once never hold the pool and a ping behind them
				// (at most maxServerAnswering such goroutines: each is
				// counted in answering until it ends).
				c.wg.Add(1)
				go func() {
					defer c.wg.Done()
					c.serve(job)
				}()
				continue
			}
			c.serve(job)
		}
	}
}

// waitsOnHandler reports whether answering job calls the ServerRequests
// handler (which may wait for the user), rather than answering at once.
func (job serverJob) waitsOnHandler(hasHandler bool) bool {
	return hasHandler && !job.refuse && job.msg.Method != wire.MethodPing
}

func (c *Client) serve(job serverJob) {
	defer c.jobDone(job)
	msg := job.msg
	switch {
	case job.refuse:
		c.respond(wire.ErrorResponse(msg.ID, wire.CodeInternalError,
			fmt.Sprintf("inflight refused %s: more than %d of the server's requests are waiting for an answer", msg.Method, maxServerAnswering)))
	case msg.Method == wire.MethodPing:
		c.respond(wire.ResultResponse(msg.ID, json.RawMessage(`{}`)))
	case c.cfg.ServerRequests == nil:
		c.respond(wire.ErrorResponse(msg.ID, wire.CodeMethodNotFound,
			fmt.Sprintf("inflight does not handle %s: it is a debugging client with no %s support configured", msg.Method, msg.Method)))
	default:
		if job.ctx.Err() != nil {
			return // cancelled by the server while it waited
		}
		result, rpcErr := c.cfg.ServerRequests(job.ctx, msg.Method, msg.Params)
		for {
			c.mu.Lock()
			stillWanted := c.ownsCall(job)
			c.mu.Unlock()
			if !stillWanted || job.ctx.Err() != nil {
				// The server cancelled it: it must not get a response.
				return
			}
			raw := wire.ResultResponse(msg.ID, result)
			if rpcErr != nil {
				raw = wire.ErrorResponse(msg.ID, rpcErr.Code, rpcErr.Message)
			}
			err := c.respond(raw)
			retry := answerRetryOf(job.ctx)
			if err == nil || retry == nil || c.isClosing() {
				return // sent, or nobody to try again, or the client is closing
			}
			// The answer never reached the server: the handler that asked
			// for another try gives it (the TUI's form, open again), on
			// this goroutine of the request's own.
			var again bool
			if result, rpcErr, again = retry(err); !again {
				return
			}
		}
	}
}

// respond sends a response to a server request. A response that could
// not be sent is reported as an internal RequestFailed under the server's
// ID (the tracker's server request waits again, session/serverreq.go).
func (c *Client) respond(raw []byte) error {
	info := c.Info()
	out := outgoing{raw: raw, internal: true, version: info.ProtocolVersion, modern: info.Era == event.EraModern}
	c.emitOwnSent(wire.ID{}, raw, time.Now())
	err := c.t.send(context.Background(), out)
	var status *HTTPStatusError
	if err != nil && !(c.isClosing() && !errors.As(err, &status)) {
		// (Once Close began, a POST cut while its 202 was read is the
		// close's doing, not an answer the server lacks: it had it, and
		// had answered the call, which is why the call closed. Said as a
		// failure, the question went back to waiting, then lost. A
		// server's refusal of the answer is said all the same.)
		msg, _ := wire.Decode(raw)
		c.emit(event.Event{Kind: event.RequestFailed, Time: time.Now(), RequestID: msg.ID, Internal: true, Err: err,
			Text: "answering the server's request " + msg.ID.String() + " failed: " + err.Error()})
	}
	return err
}

// isClosing reports whether Close has begun.
func (c *Client) isClosing() bool {
	c.lifeMu.Lock()
	defer c.lifeMu.Unlock()
	return c.closing
}

// answerRetryKey keys, in a ServerRequests handler's ctx, where the
// handler may leave what to do when its answer cannot be sent.
type answerRetryKey struct{}

// answerRetry holds a handler's OnAnswerFailed.
type answerRetry struct {
	mu sync.Mutex
	fn func(error) (json.RawMessage, *wire.Error, bool)
}

// OnAnswerFailed registers, for the ServerRequests handler whose ctx this
// is, what the client calls when the answer the handler returned could not
// be sent (an HTTP POST that failed: the server unreachable): fn gets the
// error and returns another answer to send with again true, or again false
// to give up. It runs on the handler's goroutine once the handler
// returned, and may wait (for the user), until the server withdraws the
// request (ctx). Without it a failed answer is only reported.
func OnAnswerFailed(ctx context.Context, fn func(err error) (result json.RawMessage, rpcErr *wire.Error, again bool)) {
	if h, ok := ctx.Value(answerRetryKey{}).(*answerRetry); ok {
		h.mu.Lock()
		h.fn = fn
		h.mu.Unlock()
	}
}

func answerRetryOf(ctx context.Context) func(error) (json.RawMessage, *wire.Error, bool) {
	h, ok := ctx.Value(answerRetryKey{}).(*answerRetry)
	if !ok {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.fn
}

// call sends an internal request and waits for its response.
func (c *Client) call(ctx context.Context, method string, params json.RawMessage, version string, modern bool) (wire.Message, error) {
	msg, _, err := c.timedCall(ctx, method, params, version, modern)
	return msg, err
}

// timedCall is call that also says how long the answer took: from just
// before the request was written to the moment its answer was read.
func (c *Client) timedCall(ctx context.Context, method string, params json.RawMessage, version string, modern bool) (wire.Message, time.Duration, error) {
	id := c.newInternalID()
	if modern {
		var err error
		params, err = c.modernParams(params, method, version, wire.ID{})
		if err != nil {
			return wire.Message{}, 0, err
		}
	}
	raw := wire.Request(id, method, params)
	ch := make(chan callResult, 1)
	c.mu.Lock()
	if isClosed(c.dead) {
		c.mu.Unlock()
		return wire.Message{}, 0, ErrClosed
	}
	c.waiters[id] = ch
	c.mu.Unlock()
	// The round trip starts when the write does, measured where a cancel's
	// signal time is (right before the write): under load, or the race
	// detector, what comes before it (reporting the Sent event, decoding)
	// took longer than a server's whole reaction to a cancel.
	// An atomic: the HTTP transport writes from its own goroutine, and the
	// answer may come on another stream.
	var started atomic.Int64
	out := outgoing{id: id, method: method, params: params, raw: raw, internal: true, version: version, modern: modern,
		writing: func(at time.Time) { started.Store(at.UnixNano()) }}
	before := time.Now()
	if err := c.t.send(ctx, out); err != nil {
		c.dropWaiter(id)
		return wire.Message{}, 0, err
	}
	select {
	case r := <-ch:
		start := before
		if ns := started.Load(); ns != 0 {
			start = time.Unix(0, ns)
		}
		return r.msg, r.at.Sub(start), r.err
	case <-ctx.Done():
		what := "no answer"
		if ht, ok := c.t.(*httpTransport); ok {
			if w := ht.waitingFor(id); w != "" {
				what = w
			}
		}
		c.dropWaiter(id)
		return wire.Message{}, 0, &waitError{what: what, err: ctx.Err()}
	}
}

// waitError is an internal call that ended with its context: what it was
// still waiting for, and the context's error (errors.Is matches it).
type waitError struct {
	what string
	err  error
}

func (e *waitError) Error() string { return e.what + " (" + e.err.Error() + ")" }
func (e *waitError) Unwrap() error { return e.err }

// within words an internal call's timeout for the connection's set-up:
// "no response headers from the server within 30s (context deadline
// exceeded)". Anything else is returned as it is.
func (c *Client) within(err error) error {
	var we *waitError
	if !errors.As(err, &we) {
		return err
	}
	if errors.Is(we.err, context.DeadlineExceeded) {
		return fmt.Errorf("%s within the %s allowed for connecting (%w)", we.what, c.cfg.HandshakeTimeout, we.err)
	}
	return fmt.Errorf("%s when connecting was cancelled (%w)", we.what, we.err)
}

func (c *Client) dropWaiter(id wire.ID) {
	c.mu.Lock()
	delete(c.waiters, id)
	c.mu.Unlock()
}

// failCall ends a request whose reply could not be read. Internal calls get
// the error; tracked requests get an event.RequestFailed.
func (c *Client) failCall(id wire.ID, err error, lost bool) {
	c.mu.Lock()
	w, isWaiter := c.waiters[id]
	delete(c.waiters, id)
	delete(c.flights, id)
	c.mu.Unlock()
	if isWaiter {
		w <- callResult{err: err}
		return
	}
	c.emit(event.Event{Kind: event.RequestFailed, Time: time.Now(), RequestID: id, Err: err, LostConnection: lost})
}

// unreachable is a network error that also matches ErrUnreachable; its
// text is the network error's own.
type unreachable struct{ err error }

func (u unreachable) Error() string   { return u.err.Error() }
func (u unreachable) Unwrap() []error { return []error{u.err, ErrUnreachable} }

// markUnreachable marks err, an http.Client.Do failure, as ErrUnreachable
// unless it is a refused redirect or the exchange's own cancellation. Not
// only a failed dial: a server that died is as often first met as an EOF
// or a reset on a kept-alive connection, and net/http already retries the
// keep-alive race it can (a request nothing of which was written).
func markUnreachable(ctx context.Context, err error) error {
	var re *redirectError
	if ctx.Err() != nil || errors.As(err, &re) {
		return err
	}
	return unreachable{err}
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// modernParams adds the per-request _meta of the modern era.
func (c *Client) modernParams(params json.RawMessage, method, version string, token wire.ID) (json.RawMessage, error) {
	caps := map[string]any{}
	if taskMethod(method) && !c.cfg.NoTasks {
		// The tasks extension, per request: where a task may come back,
		// and on the task's own requests, which a server MUST refuse
		// (-32021) to a client that does not declare it.
		caps["extensions"] = map[string]any{wire.ExtensionTasks: map[string]any{}}
	}
	c.cfg.Answers.add(caps)
	meta := map[string]any{
		wire.MetaProtocolVersion:    version,
		wire.MetaClientCapabilities: caps,
		wire.MetaClientInfo:         map[string]string{"name": c.cfg.ClientName, "version": c.cfg.ClientVersion},
	}
	if !token.IsZero() {
		meta[wire.MetaProgressToken] = json.RawMessage(token.Raw())
	}
	return wire.SetMeta(params, meta)
}

// Send sends a tracked request. It returns once the request is on its way;
// everything after that (the response, progress, failures) arrives as
// events. A request must not reuse an ID in flight.
func (c *Client) Send(ctx context.Context, r Request) error {
	if err := c.enter(); err != nil {
		return fmt.Errorf("send %s: %w", r.Method, err)
	}
	defer c.leave()
	c.mu.Lock()
	info, connected := c.info, c.connected
	if !connected {
		c.mu.Unlock()
		return ErrNotConnected
	}
	if isClosed(c.dead) {
		c.mu.Unlock()
		return ErrClosed
	}
	if _, dup := c.flights[r.ID]; dup {
		c.mu.Unlock()
		return fmt.Errorf("send %s: ID %s is already in flight", r.Method, r.ID)
	}
	// Reserve the ID now, under the same lock as the check, so two Sends
	// of one ID cannot both pass it.
	f := &flight{method: r.Method, lateWindow: r.LateWindow}
	if f.lateWindow <= 0 {
		f.lateWindow = session.DefaultLateWindow
	}
	c.flights[r.ID] = f
	c.mu.Unlock()
	unreserve := func() {
		c.mu.Lock()
		if c.flights[r.ID] == f {
			delete(c.flights, r.ID)
		}
		c.mu.Unlock()
	}
	if c.kind == event.TransportStdio || c.kind == event.TransportSSE {
		// One shared stream: a cancelled request stays in flight until its
		// answer comes, or for good.
		c.purgeCancelled(time.Now())
	}

	params := r.Params
	var err error
	if info.Era == event.EraModern {
		params, err = c.modernParams(params, r.Method, info.ProtocolVersion, r.ProgressToken)
	} else if !r.ProgressToken.IsZero() {
		params, err = wire.SetMeta(params, map[string]any{wire.MetaProgressToken: json.RawMessage(r.ProgressToken.Raw())})
	}
	if err != nil {
		unreserve()
		return fmt.Errorf("send %s: %w", r.Method, err)
	}
	raw := wire.Request(r.ID, r.Method, params)
	c.mu.Lock()
	f.raw = raw // for telling an echo from a server's own request
	c.mu.Unlock()
	out := outgoing{
		id: r.ID, method: r.Method, name: wire.Target(r.Method, params), params: params, raw: raw,
		version: info.ProtocolVersion, modern: info.Era == event.EraModern, flight: f,
	}
	if err := c.t.send(ctx, out); err != nil {
		unreserve()
		return fmt.Errorf("send %s %s: %w", r.Method, r.ID, err)
	}
	return nil
}

// Cancel cancels a request in flight with the signal its transport and era
// require, and reports which it sent:
//   - stdio: notifications/cancelled {requestId, reason};
//   - modern Streamable HTTP: the request's SSE stream is closed, nothing is sent;
//   - legacy Streamable HTTP: notifications/cancelled is POSTed with the
//     session, and the stream is read for the request's LateWindow before
//     it is closed.
//
// Cancel never sends anything for a request that is not in flight (it
// returns ErrNotInFlight, also once the response has been read), never
// cancels the client's own handshake nor an initialize request (it returns
// ErrNotCancellable), and is idempotent: cancelling again sends nothing and
// returns what the first Cancel returned, waiting for it if it is still
// sending.
func (c *Client) Cancel(id wire.ID, reason string) (event.CancelSignal, error) {
	if err := c.enter(); err != nil {
		return event.SignalNone, fmt.Errorf("cancel request %s: %w", id, err)
	}
	defer c.leave()
	c.mu.Lock()
	f, ok := c.flights[id]
	if !ok {
		c.mu.Unlock()
		return event.SignalNone, fmt.Errorf("cancel request %s: %w", id, ErrNotInFlight)
	}
	if f.method == wire.MethodInitialize {
		c.mu.Unlock()
		return event.SignalNone, fmt.Errorf("cancel request %s: %w: initialize must never be cancelled (it can only be abandoned by closing the connection)", id, ErrNotCancellable)
	}
	if f.cancelled {
		done := f.cancelDone
		c.mu.Unlock()
		// The first Cancel's send is bounded (WriteTimeout, the HTTP
		// transport's context), so this wait is too.
		<-done
		c.mu.Lock()
		sig, err := f.signal, f.cancelErr
		c.mu.Unlock()
		return sig, err
	}
	f.cancelled = true
	f.at = time.Now()
	f.cancelDone = make(chan struct{})
	c.mu.Unlock()
	sig, err := c.t.cancel(id, reason)
	if err != nil {
		err = fmt.Errorf("cancel request %s: %w", id, err)
	}
	c.mu.Lock()
	f.signal, f.cancelErr = sig, err
	close(f.cancelDone)
	c.mu.Unlock()
	return sig, err
}

// inFlight reports whether a tracked request is in flight (sent, not
// answered, not failed).
func (c *Client) inFlight(id wire.ID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.flights[id]
	return ok
}

// endFlight forgets a request once its HTTP stream is over, unless the ID
// now belongs to a newer request (an ID may be reused once answered, while
// the old stream still reads its late window).
func (c *Client) endFlight(id wire.ID, f *flight) {
	c.mu.Lock()
	if f != nil && c.flights[id] == f {
		delete(c.flights, id)
	}
	c.mu.Unlock()
}

// purgeCancelled forgets stdio requests cancelled long ago that will never
// be answered, so a long session does not accumulate them. Send calls it.
func (c *Client) purgeCancelled(now time.Time) {
	c.mu.Lock()
	for id, f := range c.flights {
		if f.cancelled && now.Sub(f.at) > 10*f.lateWindow {
			delete(c.flights, id)
		}
	}
	c.mu.Unlock()
}

// taskMethod reports the methods that carry the tasks extension in a
// modern request's clientCapabilities: tools/call and the task's own.
func taskMethod(m string) bool {
	switch m {
	case wire.MethodToolsCall, wire.MethodTasksGet, wire.MethodTasksCancel, wire.MethodTasksUpdate:
		return true
	}
	return false
}
