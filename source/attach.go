package source

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"inflight/trace"
	"inflight/wire"
)

// Proxy is what a proxy says of itself when a view attaches (its hello
// line, proxy.Hello): the caller reads the hello, since the socket's
// handshake is the proxy package's.
type Proxy struct {
	// Name is the proxy's name, Command the server command it runs
	// (redacted).
	Name, Command string
	// Start is when the proxy's trace starts: a line's "ms" counts from it.
	Start time.Time
	// HistoryCut: the proxy's recent lines do not reach back to its start,
	// so they may name requests begun before them.
	HistoryCut bool
}

// AttachConfig configures an Attach.
type AttachConfig struct {
	// Proxy is what the proxy's hello said.
	Proxy Proxy
	// Commands, when set, is where this view's commands go (the same
	// connection): the proxy said it takes them. Nil: the view only
	// watches.
	Commands io.Writer
	// Encode writes one command as the proxy reads it
	// (proxy.EncodeCommand), terminated. Required with Commands.
	Encode func(act string, id wire.ID, after time.Duration) []byte
}

// Attach is a proxy's attach socket as a Source: it reads the proxy's
// trace lines (after its hello), decodes them, and delivers the Items.
// It owns the goroutine that reads.
type Attach struct {
	cfg   AttachConfig
	items chan Item

	mu  sync.Mutex
	err error

	// wmu keeps one command's line whole: commands are written from
	// several tea.Cmds at once.
	wmu sync.Mutex
}

// itemBuffer is how many decoded lines wait for the view.
const itemBuffer = 1024

// commandDeadline bounds a command's write: a proxy that stopped reading
// must not hang the view.
const commandDeadline = 2 * time.Second

// NewAttach starts reading r, a proxy's stream after its hello, until it
// ends. A line that is not a trace record is skipped.
func NewAttach(r io.Reader, cfg AttachConfig) *Attach {
	a := &Attach{cfg: cfg, items: make(chan Item, itemBuffer)}
	go a.read(r)
	return a
}

func (a *Attach) read(r io.Reader) {
	defer close(a.items)
	dec := Decoder{Start: a.cfg.Proxy.Start, Relayed: true}
	tr := trace.NewReader(bufio.NewReaderSize(r, 64<<10))
	for {
		rec, err := tr.Next()
		var le *trace.LineError
		switch {
		case errors.As(err, &le):
			continue
		case errors.Is(err, io.EOF):
			return
		case err != nil:
			a.mu.Lock()
			a.err = err
			a.mu.Unlock()
			return
		}
		if it, ok := dec.Decode(&rec); ok {
			a.items <- it
		}
	}
}

// Items delivers the proxy's lines, decoded; it is closed when the stream
// ends.
func (a *Attach) Items() <-chan Item { return a.items }

// Err says why the stream ended, once Items is closed (nil: the proxy
// closed it).
func (a *Attach) Err() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

// Proxy is what the proxy's hello said.
func (a *Attach) Proxy() Proxy { return a.cfg.Proxy }

// Acts reports whether the proxy takes this view's commands.
func (a *Attach) Acts() bool { return a.cfg.Commands != nil && a.cfg.Encode != nil }

// errWatchOnly: Act on a proxy that takes no commands.
var errWatchOnly = errors.New("this proxy takes no commands")

// Act asks the proxy to act on one of the host's requests: act is a
// command's act ("hold", "delay", "drop", "cancel", "cancel-silent",
// "race", "release"), after a delay's D. It only writes the command, and
// blocks until it is written (call it from a tea.Cmd): the proxy's answer
// comes in the stream, as a Reply.
func (a *Attach) Act(act string, id wire.ID, after time.Duration) error {
	if !a.Acts() {
		return errWatchOnly
	}
	line := a.cfg.Encode(act, id, after)
	a.wmu.Lock()
	defer a.wmu.Unlock()
	w := a.cfg.Commands
	if d, ok := w.(interface{ SetWriteDeadline(time.Time) error }); ok {
		_ = d.SetWriteDeadline(time.Now().Add(commandDeadline))
	}
	if _, err := w.Write(line); err != nil {
		return fmt.Errorf("write the command: %w", err)
	}
	return nil
}
