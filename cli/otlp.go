package cli

import (
	"fmt"
	"io"
	"sync"

	"github.com/spf13/pflag"

	"inflight/otlp"
	"inflight/proxy"
	"inflight/redact"
	"inflight/termsafe"
)

// otlpVar adds --otlp, the OTLP/HTTP collector a run's spans go to, as
// the TUI, call, check and both proxies take it.
func otlpVar(fs *pflag.FlagSet, p *string) {
	fs.StringVar(p, "otlp", "", "send the run as OpenTelemetry spans to the OTLP/HTTP collector at `URL` (e.g. http://127.0.0.1:4318; default: $OTEL_EXPORTER_OTLP_ENDPOINT, if set)")
}

// proxySpans opens the proxy's OTLP export (--otlp, or the environment's
// collector) into opts; closeSpans ends its spans and flushes them,
// bounded, once the proxy returned. A collector that fails is said once
// on stderr.
func proxySpans(opts *proxy.Options, endpoint, transport string, stderr io.Writer, red *redact.Redactor) (closeSpans func(), err error) {
	name := opts.Name
	s, err := otlp.Open(otlp.Options{Endpoint: endpoint, Name: "inflight proxy " + name, Transport: transport, Redactor: red,
		Warn: func(msg string) { fmt.Fprintf(stderr, "inflight proxy %s: %s\n", termsafe.Line(name), msg) }})
	if err != nil {
		return nil, err
	}
	opts.Spans = s
	return func() { _ = s.Close() }, nil
}

// tuiWarn carries the OTLP export's one warning to the TUI's status line
// while the TUI runs, and says it again on stderr once the TUI ended: the
// TUI's screen is gone by then, and the flush at the end may be what
// fails, after the TUI stopped listening.
type tuiWarn struct {
	mu     sync.Mutex
	ch     chan string
	said   string
	done   bool
	stderr io.Writer
}

func newTUIWarn(stderr io.Writer) *tuiWarn { return &tuiWarn{ch: make(chan string, 1), stderr: stderr} }

func (w *tuiWarn) say(msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.said == "" {
		w.said = msg
	}
	if w.done {
		fmt.Fprintf(w.stderr, "inflight: %s\n", msg)
		return
	}
	select {
	case w.ch <- msg:
	default:
	}
}

// ended says on stderr the warning said while the TUI ran, whether or
// not the TUI took it; what comes later goes there at once.
func (w *tuiWarn) ended() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.done = true
	if w.said != "" {
		fmt.Fprintf(w.stderr, "inflight: %s\n", w.said)
	}
}
