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

	// ProtocolVersion forces a version, and with it the era; "" detects.
	ProtocolVersion string
	// ClientName and ClientVersion identify inflight to the server.
	ClientName    string
	ClientVersion string

	// LateWindow is how long a legacy HTTP response stream is kept open after
	// notifications/cancelled to see what the server still sends. Default 5s.
	LateWindow time.Duration
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
	// ShutdownWait bounds each step of the stdio shutdown (close stdin, then
	// SIGTERM, then SIGKILL), the legacy HTTP DELETE, and how long Close
	// waits for a consumer that stopped reading Events. Default 2s.
	ShutdownWait time.Duration
	// EventBuffer is the capacity of the event channel. Default 1024.
	EventBuffer int
	// ServerRequests answers requests the server sends to the client
	// (legacy era: roots/list, sampling/createMessage, elicitation/create).
	// When nil they are refused with a JSON-RPC error; ping is always
	// answered.
	ServerRequests func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, *wire.Error)
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
	if c.LateWindow <= 0 {
		c.LateWindow = 5 * time.Second
	}
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
}

// Errors callers may test for.
var (
	// ErrNotInFlight: Cancel was asked for a request that is not in flight
	// (never sent, already answered, or the client's own handshake).
	ErrNotInFlight = errors.New("request is not in flight")
	// ErrClosed: the client is closed or its transport is gone.
	ErrClosed = errors.New("connection closed")
	// ErrNotConnected: Send before Connect finished.
	ErrNotConnected = errors.New("not connected")
)

// transport is what differs between stdio and Streamable HTTP.
type transport interface {
	// start begins I/O; incoming messages go to Client.receive.
	start(ctx context.Context) error
	// send writes one outgoing message. For requests over HTTP it returns
	// once the request is on its way; the reply arrives as events.
	send(ctx context.Context, out outgoing) error
	// cancel sends the cancel signal for a request in flight.
	cancel(id wire.ID, reason string) (CancelSignal, error)
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
}

// flight is a tracked request in flight at the wire level.
type flight struct {
	method    string
	cancelled bool
	signal    CancelSignal
	at        time.Time
}

// callResult is what an internal call receives.
type callResult struct {
	msg wire.Message
	err error
}

// Client is one connection to one MCP server.
type Client struct {
	cfg    Config
	kind   TransportKind // fixed by New
	events chan Event
	quit   chan struct{} // closed during Close: from then on a full channel drops events
	dead   chan struct{} // closed when the transport is gone
	t      transport

	// lifeMu orders Connect's start of the transport against Close, so that
	// no goroutine is started once Close has begun waiting for them.
	lifeMu  sync.Mutex
	started bool // Connect started the transport
	closing bool // Close has begun

	mu          sync.Mutex
	info        ConnInfo
	connected   bool
	waiters     map[wire.ID]chan callResult
	flights     map[wire.ID]*flight
	serverCalls map[wire.ID]context.CancelFunc
	toolHeaders map[string][]paramHeader
	deadErr     error

	nextInternal atomic.Int64
	wg           sync.WaitGroup // goroutines the client itself starts
	closeOnce    sync.Once
	deadOnce     sync.Once
	quitOnce     sync.Once
	closeErr     error
}

// New returns a client for the configured target. Nothing starts until
// Connect.
func New(cfg Config) (*Client, error) {
	cfg.setDefaults()
	c := &Client{
		cfg:         cfg,
		events:      make(chan Event, cfg.EventBuffer),
		quit:        make(chan struct{}),
		dead:        make(chan struct{}),
		waiters:     map[wire.ID]chan callResult{},
		flights:     map[wire.ID]*flight{},
		serverCalls: map[wire.ID]context.CancelFunc{},
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
	if cfg.ProtocolVersion != "" && !wire.IsModernVersion(cfg.ProtocolVersion) && !isLegacyVersion(cfg.ProtocolVersion) {
		return nil, fmt.Errorf("client: protocol version %q is not one inflight speaks (%s, %s)",
			cfg.ProtocolVersion, wire.VersionModern, strings.Join(wire.LegacyVersions, ", "))
	}
	if cfg.URL != "" {
		t, err := newHTTPTransport(c)
		if err != nil {
			return nil, err
		}
		c.t = t
		c.kind = TransportHTTP
	} else {
		c.t = newStdioTransport(c)
		c.kind = TransportStdio
	}
	c.info.Transport = c.kind
	return c, nil
}

// Events is the channel of everything that happens. It is closed by Close
// once every goroutine of the client has finished.
func (c *Client) Events() <-chan Event { return c.events }

// Info returns the connection details known so far, as a deep copy.
func (c *Client) Info() ConnInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.info.clone()
}

// clone copies the slices too, so a caller can never change (or race with)
// the client's own copy.
func (i ConnInfo) clone() ConnInfo {
	i.Capabilities = bytes.Clone(i.Capabilities)
	i.SupportedVersions = append([]string(nil), i.SupportedVersions...)
	return i
}

// Done is closed when the transport is gone.
func (c *Client) Done() <-chan struct{} { return c.dead }

// emit delivers an event, blocking while the channel is full (backpressure:
// responses and closures are never dropped) until Close gives up on the
// consumer. The first, non-blocking attempt matters: once quit is closed a
// select with both cases ready would pick at random and drop events even
// though the channel had room for them.
func (c *Client) emit(ev Event) {
	select {
	case c.events <- ev:
		return
	default:
	}
	select {
	case c.events <- ev:
	case <-c.quit:
	}
}

// stopEmitting makes emit drop events instead of waiting for room.
func (c *Client) stopEmitting() { c.quitOnce.Do(func() { close(c.quit) }) }

// markDead records that the transport is gone: every waiter fails, every
// flight ends, and one EventTransportClosed is emitted.
func (c *Client) markDead(err error) {
	c.deadOnce.Do(func() {
		c.mu.Lock()
		c.deadErr = err
		waiters := c.waiters
		c.waiters = map[wire.ID]chan callResult{}
		c.flights = map[wire.ID]*flight{}
		for _, cancel := range c.serverCalls {
			cancel()
		}
		c.mu.Unlock()
		for _, w := range waiters {
			w <- callResult{err: fmt.Errorf("%w: %v", ErrClosed, errOr(err, "transport closed"))}
		}
		close(c.dead)
		c.emit(Event{Kind: EventTransportClosed, Time: time.Now(), Err: err})
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
// closes every stream and ends a legacy session with DELETE. Close waits for
// every goroutine and then closes the Events channel. It is idempotent.
//
// A consumer that keeps reading Events gets every event up to the final
// EventTransportClosed. One that stopped reading cannot hang Close: after
// ShutdownWait the client stops waiting for room in the channel and drops
// what does not fit.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		// From here Connect starts nothing; a transport never started has
		// nothing to stop but is told anyway (the HTTP one drops its context).
		c.lifeMu.Lock()
		c.closing = true
		c.lifeMu.Unlock()
		giveUp := time.AfterFunc(c.cfg.ShutdownWait, c.stopEmitting)
		c.closeErr = c.t.close()
		c.markDead(nil)
		c.wg.Wait()
		giveUp.Stop()
		c.stopEmitting()
		close(c.events)
	})
	return c.closeErr
}

// isInternalID says whether an ID is one the client chose for its own
// housekeeping; the tracker only issues integer IDs.
func isInternalID(id wire.ID) bool {
	return strings.HasPrefix(id.Raw(), `"inflight-`)
}

func (c *Client) newInternalID() wire.ID {
	return wire.StringID("inflight-" + strconv.FormatInt(c.nextInternal.Add(1), 10))
}

// receive handles one message read from the server. owner is the request
// whose HTTP response stream carried it (zero on stdio and GET streams). It
// reports whether the message answered owner.
func (c *Client) receive(raw []byte, truncated int, at time.Time, owner wire.ID) (answered bool) {
	msg, err := wire.Decode(raw)
	if err != nil {
		c.emit(Event{Kind: EventMalformed, Time: at, RequestID: owner, Raw: keepRaw(raw), Truncated: truncated, Err: err})
		return false
	}
	raw = bytes.Clone(raw)
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
		f := c.flights[id]
		if f != nil && c.kind == TransportStdio {
			delete(c.flights, id)
		}
		var warnings []string
		if f != nil && f.method == wire.MethodToolsList && msg.Kind == wire.KindResult {
			warnings = c.learnToolHeaders(msg.Result)
		}
		c.mu.Unlock()
		internal := isWaiter || isInternalID(id)
		c.emit(Event{Kind: EventReceived, Time: at, RequestID: id, Raw: raw, Msg: msg, Internal: internal})
		if c.kind == TransportHTTP {
			// Only Streamable HTTP mirrors annotations into headers; on
			// stdio an invalid one changes nothing worth a warning.
			for _, w := range warnings {
				c.emit(Event{Kind: EventNote, Time: at, RequestID: id, Text: w})
			}
		}
		if isWaiter {
			w <- callResult{msg: msg}
		}
		return !owner.IsZero() && id == owner
	case wire.KindRequest:
		c.emit(Event{Kind: EventReceived, Time: at, RequestID: msg.ID, Raw: raw, Msg: msg, Internal: true})
		c.handleServerRequest(msg)
	case wire.KindNotification:
		internal := false
		if msg.Method == wire.NotifyCancelled {
			if cp, err := wire.DecodeCancelled(msg.Params); err == nil {
				c.mu.Lock()
				cancel, ok := c.serverCalls[cp.RequestID]
				delete(c.serverCalls, cp.RequestID)
				c.mu.Unlock()
				if ok {
					// The server cancelled one of its own requests to us.
					cancel()
					internal = true
				} else if c.serverEndedListen(cp.RequestID) {
					// The server ended one of our subscriptions/listen
					// streams: on its own stream that is as final as a
					// response, so the stream's end is no failure.
					answered = !owner.IsZero() && cp.RequestID == owner
				}
			}
		}
		c.emit(Event{Kind: EventReceived, Time: at, RequestID: owner, Raw: raw, Msg: msg, Internal: internal})
	}
	return answered
}

// serverEndedListen handles a server's notifications/cancelled naming one
// of our requests. The subscriptions page allows it for exactly one thing,
// ending a subscriptions/listen; for such a listen the client forgets the
// flight on stdio (the server will send nothing more, so a later Cancel has
// nothing to cancel) and reports true. A cancel naming anything else changes
// nothing here: the tracker records it as a violation.
func (c *Client) serverEndedListen(id wire.ID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.flights[id]
	if f == nil || f.method != wire.MethodSubscriptionsListen {
		return false
	}
	if c.kind == TransportStdio {
		delete(c.flights, id)
	}
	return true
}

// emitSent reports an outgoing request. The event gets its own copy of the
// bytes: the transport keeps reading out.raw (an HTTP redirect replays the
// body), and the consumer owns what it receives.
func (c *Client) emitSent(out outgoing) {
	msg, _ := wire.Decode(out.raw)
	c.emit(Event{Kind: EventSent, Time: time.Now(), RequestID: out.id, Raw: bytes.Clone(out.raw), Msg: msg, Internal: out.internal})
}

// keepRaw copies at most MaxRawKept bytes of a message for an event.
func keepRaw(raw []byte) []byte {
	if len(raw) > MaxRawKept {
		raw = raw[:MaxRawKept]
	}
	return bytes.Clone(raw)
}

// handleServerRequest answers a request the server sent us.
func (c *Client) handleServerRequest(msg wire.Message) {
	if msg.Method == wire.MethodPing {
		c.respond(wire.ResultResponse(msg.ID, json.RawMessage(`{}`)))
		return
	}
	if c.cfg.ServerRequests == nil {
		c.respond(wire.ErrorResponse(msg.ID, wire.CodeMethodNotFound,
			fmt.Sprintf("inflight does not handle %s: it is a debugging client with no %s support configured", msg.Method, msg.Method)))
		return
	}
	c.mu.Lock()
	if isClosed(c.dead) {
		// markDead has cancelled every server call already; a new one would
		// outlive it and answer on a dead transport.
		c.mu.Unlock()
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.serverCalls[msg.ID] = cancel
	c.mu.Unlock()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer cancel()
		result, rpcErr := c.cfg.ServerRequests(ctx, msg.Method, msg.Params)
		c.mu.Lock()
		_, stillWanted := c.serverCalls[msg.ID]
		delete(c.serverCalls, msg.ID)
		c.mu.Unlock()
		if !stillWanted || ctx.Err() != nil {
			// The server cancelled it: it must not get a response.
			return
		}
		if rpcErr != nil {
			c.respond(wire.ErrorResponse(msg.ID, rpcErr.Code, rpcErr.Message))
			return
		}
		c.respond(wire.ResultResponse(msg.ID, result))
	}()
}

// respond sends a response to a server request.
func (c *Client) respond(raw []byte) {
	msg, _ := wire.Decode(raw)
	info := c.Info()
	out := outgoing{raw: raw, internal: true, version: info.ProtocolVersion, modern: info.Era == EraModern}
	c.emit(Event{Kind: EventSent, Time: time.Now(), RequestID: msg.ID, Raw: raw, Msg: msg, Internal: true})
	if err := c.t.send(context.Background(), out); err != nil {
		c.emit(Event{Kind: EventNote, Time: time.Now(), Text: "answering the server's request failed: " + err.Error()})
	}
}

// call sends an internal request and waits for its response.
func (c *Client) call(ctx context.Context, method string, params json.RawMessage, version string, modern bool) (wire.Message, error) {
	id := c.newInternalID()
	if modern {
		var err error
		params, err = c.modernParams(params, version, wire.ID{})
		if err != nil {
			return wire.Message{}, err
		}
	}
	raw := wire.Request(id, method, params)
	ch := make(chan callResult, 1)
	c.mu.Lock()
	if c.deadErr != nil || isClosed(c.dead) {
		c.mu.Unlock()
		return wire.Message{}, ErrClosed
	}
	c.waiters[id] = ch
	c.mu.Unlock()
	out := outgoing{id: id, method: method, params: params, raw: raw, internal: true, version: version, modern: modern}
	if err := c.t.send(ctx, out); err != nil {
		c.dropWaiter(id)
		return wire.Message{}, err
	}
	select {
	case r := <-ch:
		return r.msg, r.err
	case <-ctx.Done():
		c.dropWaiter(id)
		return wire.Message{}, ctx.Err()
	}
}

func (c *Client) dropWaiter(id wire.ID) {
	c.mu.Lock()
	delete(c.waiters, id)
	c.mu.Unlock()
}

// failCall ends a request whose reply could not be read. Internal calls get
// the error; tracked requests get an EventRequestFailed.
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
	c.emit(Event{Kind: EventRequestFailed, Time: time.Now(), RequestID: id, Err: err, LostConnection: lost})
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
func (c *Client) modernParams(params json.RawMessage, version string, token wire.ID) (json.RawMessage, error) {
	meta := map[string]any{
		wire.MetaProtocolVersion:    version,
		wire.MetaClientCapabilities: map[string]any{},
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
	f := &flight{method: r.Method}
	c.flights[r.ID] = f
	c.mu.Unlock()
	unreserve := func() {
		c.mu.Lock()
		if c.flights[r.ID] == f {
			delete(c.flights, r.ID)
		}
		c.mu.Unlock()
	}
	if c.kind == TransportStdio {
		c.purgeCancelled(time.Now())
	}

	params := r.Params
	var err error
	if info.Era == EraModern {
		params, err = c.modernParams(params, info.ProtocolVersion, r.ProgressToken)
	} else if !r.ProgressToken.IsZero() {
		params, err = wire.SetMeta(params, map[string]any{wire.MetaProgressToken: json.RawMessage(r.ProgressToken.Raw())})
	}
	if err != nil {
		unreserve()
		return fmt.Errorf("send %s: %w", r.Method, err)
	}
	raw := wire.Request(r.ID, r.Method, params)
	out := outgoing{
		id: r.ID, method: r.Method, name: wire.Target(r.Method, params), params: params, raw: raw,
		version: info.ProtocolVersion, modern: info.Era == EraModern,
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
//     session, and the stream is read for LateWindow before it is closed.
//
// Cancel never sends anything for a request that is not in flight (it
// returns ErrNotInFlight), never cancels the client's own handshake, and is
// idempotent: cancelling again returns the first signal and sends nothing.
func (c *Client) Cancel(id wire.ID, reason string) (CancelSignal, error) {
	c.mu.Lock()
	f, ok := c.flights[id]
	if !ok {
		c.mu.Unlock()
		return SignalNone, fmt.Errorf("cancel request %s: %w", id, ErrNotInFlight)
	}
	if f.cancelled {
		sig := f.signal
		c.mu.Unlock()
		return sig, nil
	}
	f.cancelled = true
	f.at = time.Now()
	c.mu.Unlock()
	sig, err := c.t.cancel(id, reason)
	c.mu.Lock()
	f.signal = sig
	c.mu.Unlock()
	if err != nil {
		return sig, fmt.Errorf("cancel request %s: %w", id, err)
	}
	return sig, nil
}

// flightCancelled reports whether a tracked request was cancelled by the
// client (used by transports deciding how a stream ended).
func (c *Client) flightCancelled(id wire.ID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.flights[id]
	return f != nil && f.cancelled
}

// endFlight forgets a request once its HTTP stream is over.
func (c *Client) endFlight(id wire.ID) {
	c.mu.Lock()
	delete(c.flights, id)
	c.mu.Unlock()
}

// purgeCancelled forgets stdio requests cancelled long ago that will never
// be answered, so a long session does not accumulate them. Send calls it.
func (c *Client) purgeCancelled(now time.Time) {
	limit := 10 * c.cfg.LateWindow
	c.mu.Lock()
	for id, f := range c.flights {
		if f.cancelled && now.Sub(f.at) > limit {
			delete(c.flights, id)
		}
	}
	c.mu.Unlock()
}

func isLegacyVersion(v string) bool {
	for _, l := range wire.LegacyVersions {
		if l == v {
			return true
		}
	}
	return false
}
