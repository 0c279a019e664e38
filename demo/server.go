// Package demo is the embedded demo MCP server: a handful of tools, a
// resource and a prompt that between them show every cancellation behaviour a
// client has to cope with, served over stdio and Streamable HTTP in both the
// modern (2026-07-28) and the legacy (initialize-based) protocol eras.
//
// The server is built on the official go-sdk. Where the SDK's own behaviour
// differs from what the demo must show (it always answers a handler that
// returned, even for a cancelled request), the package filters the outgoing
// wire; see withheld.go.
package demo

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Identity of the demo server, as reported by server/discover and initialize.
const (
	serverName    = "inflight-demo"
	serverVersion = "0.1.0"
	instructions  = "A demo server for inflight: its tools show how servers report progress, honour or ignore cancellation, and end subscriptions."
)

// defaultTickInterval is how often demo://clock changes when Options leave it unset.
const defaultTickInterval = 3 * time.Second

// closeGrace bounds how long Close waits for stdio requests in flight to be
// answered before it closes the connections outright. A stdio peer that
// stopped reading would otherwise block a pending write, and with it the
// session, forever.
const closeGrace = 2 * time.Second

// Options configure the demo server.
type Options struct {
	// Logger receives human-readable log lines (stderr in the real binary).
	// Nil discards them. Nothing is ever logged to the MCP peer, so stdout
	// stays pure JSON-RPC in stdio mode.
	Logger io.Writer
	// TickInterval is how often the demo resource changes; 0 means 3s.
	TickInterval time.Duration
	// NoTimestamps leaves the time off log lines: over stdio the client
	// reads stderr and stamps each line itself.
	NoTimestamps bool
}

// Server is the demo: an *mcp.Server plus the background goroutine that
// changes the demo://clock resource.
type Server struct {
	mcp      *mcp.Server
	log      *log.Logger
	interval time.Duration
	http     http.Handler

	// closing is closed by Close. Tools and the clock watch it so that
	// shutdown never waits for a tool's full duration.
	closing   chan struct{}
	closeOnce sync.Once
	clockDone sync.WaitGroup

	// runs numbers tool runs and listens, so log lines can be correlated.
	runs atomic.Int64

	clockMu sync.Mutex
	tick    int
	tickAt  time.Time

	listens listenRegistry

	// tasks holds the task layer's tasks (tasks.go).
	tasks taskStore

	// stdio holds the connections of running ServeStdio calls, so Close can
	// end them even when a peer has stopped reading.
	stdioMu sync.Mutex
	stdio   map[*withholdingConn]struct{}
}

// New builds the demo server and starts the goroutine that changes the clock
// resource. Call Close to stop it.
func New(opts Options) *Server {
	logw := opts.Logger
	if logw == nil {
		logw = io.Discard
	}
	interval := opts.TickInterval
	if interval <= 0 {
		interval = defaultTickInterval
	}
	s := &Server{
		log:      log.New(logw, "", logFlags(opts)),
		interval: interval,
		closing:  make(chan struct{}),
		tickAt:   time.Now(),
		stdio:    make(map[*withholdingConn]struct{}),
	}
	s.listens.init()
	s.tasks.init()
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: serverName, Version: serverVersion}, &mcp.ServerOptions{
		Instructions: instructions,
		// Subscriptions need both handlers; the SDK does the bookkeeping and
		// these only log.
		SubscribeHandler:   s.subscribed,
		UnsubscribeHandler: s.unsubscribed,
		// Capabilities are spelled out so the demo does not advertise the
		// deprecated logging capability beyond the one tool that logs.
		Capabilities: &mcp.ServerCapabilities{
			Tools:     &mcp.ToolCapabilities{ListChanged: true},
			Prompts:   &mcp.PromptCapabilities{ListChanged: true},
			Resources: &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
			// The chatty tool logs (answering.go).
			Logging: &mcp.LoggingCapabilities{},
		},
	})
	s.mcp.AddReceivingMiddleware(s.guardMiddleware, s.listenMiddleware)
	s.mcp.AddSendingMiddleware(s.subscriptionOrderMiddleware)
	s.addTools()
	s.addAnswering()
	s.addClock()
	s.addPrompt()
	s.http = s.newRouter()

	s.clockDone.Add(1)
	go s.runClock()
	return s
}

// MCP returns the underlying go-sdk server.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Close stops every goroutine New started, ends open subscriptions/listen
// streams gracefully, stops running tools (which then send no response) and
// closes every session, including those of ServeStdio, which then returns.
// Close is idempotent.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		close(s.closing)
		if n := s.listens.endAll(errServerClosing); n > 0 {
			s.logf("shutdown: ended %d subscription(s)", n)
		}
		if n := s.tasks.killAll(); n > 0 {
			s.logf("shutdown: stopped %d task(s)", n)
		}
		s.closeSessions()
		// After the sessions: a task blocked writing to a stdio peer that
		// stopped reading is freed when its connection closes.
		s.tasks.wait()
		s.clockDone.Wait()
	})
	return nil
}

// closeSessions ends the sessions that would otherwise outlive Close.
//
// A stdio session is closed once every request it read has been answered
// (tools and listens have just been told to stop, so that is quick), because
// the SDK refuses to write any response once a session is closing; after
// closeGrace it is closed regardless, since a peer that stopped reading
// could block a write forever. Legacy HTTP sessions are closed outright. The
// stateless sessions of modern HTTP requests are left alone: each ends with
// its own request, as soon as its (final) response has been delivered.
func (s *Server) closeSessions() {
	expired := time.After(closeGrace)
	var wg sync.WaitGroup
	for ss := range s.mcp.Sessions() {
		if ss.ID() != "" {
			wg.Go(func() { _ = ss.Close() })
		}
	}
	s.stdioMu.Lock()
	conns := make([]*withholdingConn, 0, len(s.stdio))
	for c := range s.stdio {
		conns = append(conns, c)
	}
	s.stdioMu.Unlock()
	for _, c := range conns {
		if !c.drain(expired) {
			s.logf("shutdown: a stdio session still had requests in flight after %s", closeGrace)
		}
		c.shutdown()
	}
	wg.Wait()
}

// isClosing reports whether Close has been called.
func (s *Server) isClosing() bool {
	select {
	case <-s.closing:
		return true
	default:
		return false
	}
}

func logFlags(o Options) int {
	if o.NoTimestamps {
		return 0
	}
	return log.Ltime | log.Lmicroseconds
}

// logf writes one line to Options.Logger.
func (s *Server) logf(format string, args ...any) {
	s.log.Printf(format, args...)
}

// subscribed logs a resources/subscribe (legacy) or the subscription a
// subscriptions/listen opens (modern); the SDK keeps the subscription itself.
func (s *Server) subscribed(_ context.Context, req *mcp.SubscribeRequest) error {
	s.logf("subscribe: %s", req.Params.URI)
	return nil
}

// unsubscribed logs the end of a resource subscription.
func (s *Server) unsubscribed(_ context.Context, req *mcp.UnsubscribeRequest) error {
	s.logf("unsubscribe: %s", req.Params.URI)
	return nil
}

// roundDuration keeps log lines and results readable: milliseconds below a
// second, tenths of a second above.
func roundDuration(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(100 * time.Millisecond)
}

// seconds converts a tool argument in seconds to a duration.
func seconds(v float64) time.Duration {
	return time.Duration(v * float64(time.Second))
}

// describeCause names why a request's context ended, for log lines. Plain
// cancellation (notifications/cancelled, a closed HTTP stream) is the common
// case and needs no comment.
func describeCause(ctx context.Context) string {
	cause := context.Cause(ctx)
	if cause == nil || cause == context.Canceled {
		return ""
	}
	return fmt.Sprintf(" (%v)", cause)
}
