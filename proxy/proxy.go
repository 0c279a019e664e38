// Package proxy is `inflight proxy`: it stands between a host (Claude
// Desktop, an SDK's client, an agent) and a stdio MCP server, forwards
// every byte both ways unchanged, and records the host's requests in a
// session.Tracker — states, progress, the host's cancels and what the
// server sends after them — and in a trace.
//
// The wire never waits for the record. Each direction has one forwarder
// goroutine that writes what it read to the other side at once, then
// hands a copy of the complete lines to a bounded queue (queue.go) that
// never blocks: when the recorder falls behind, the server's progress is
// skipped first and then anything, counted, and the record says how much.
// One recorder goroutine owns the tracker (recorder.go).
package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"inflight/event"
	"inflight/internal/pipeinq"
	"inflight/otlp"
	"inflight/redact"
	"inflight/session"
	"inflight/termsafe"
	"inflight/trace"
	"inflight/wire"
)

// Defaults of Options.
const (
	DefaultShutdownWait = 2 * time.Second
	DefaultQueueBytes   = 64 << 20
	DefaultMaxLineBytes = 32 << 20
)

// Options configure a proxy. The zero value works.
type Options struct {
	// Name names the proxy in its messages (and, later, its socket).
	Name string
	// Stderr receives the server's stderr, byte for byte, and the proxy's
	// own lines (each starting "inflight proxy NAME: "). nil discards both.
	Stderr io.Writer
	// Trace, when set, records the proxied traffic: "out" is what the host
	// sent, "in" what the server sent (trace.Writer.SetSenders names them).
	Trace *trace.Writer
	// Env is added to the proxy's environment for the server; Dir is its
	// working directory.
	Env []string
	Dir string
	// ShutdownWait bounds each step of stopping the server (after its
	// stdin is closed, after SIGTERM, after SIGKILL).
	ShutdownWait time.Duration
	// QueueBytes bounds what waits for the recorder; MaxLineBytes one
	// line it records (longer ones are forwarded whole and recorded cut).
	QueueBytes   int
	MaxLineBytes int
	// Tracker configures the tracker (its late window, its bounds).
	Tracker session.Config
	// SocketDir, when set, is where the proxy opens NAME.sock for
	// `inflight attach` (SocketDir()); a socket that cannot be opened is
	// said on stderr, and the proxy runs on without one.
	SocketDir string
	// TracePath is where Trace writes, as an absolute path. With a
	// socket, the proxy leaves it beside the socket in NAME.trace, which
	// outlives the proxy: `inflight attach NAME` opens that recorded run
	// once the proxy has ended. "" removes a NAME.trace an earlier proxy
	// of the name left (it is not this proxy's run).
	TracePath string
	// Redactor masks secrets in what the socket streams (nil: none).
	Redactor *redact.Redactor
	// Rules make things happen to the host's requests they match (delay,
	// hold, drop, cancel, race; ParseRule); the first that matches a
	// request acts on it. Without rules nothing but forwarding touches
	// the wire.
	Rules []Rule
	// Release, when it delivers, passes on every response the rules hold
	// at that moment (`inflight proxy` sends on SIGUSR1).
	Release <-chan struct{}
	// RecordHTTP (the HTTP proxy, with Trace) writes each exchange between
	// a host and the upstream whole to Trace, as an http_exchange line: the
	// host's request, the upstream's response or event stream (bounded as
	// the client's, event.MaxExchangeBody), for an HAR.
	RecordHTTP bool
	// RecordHTTPBodies keeps the upstream's bodies and event streams in
	// those lines too (an HAR is written); without it they are counted.
	RecordHTTPBodies bool
	// ReadOnly refuses the attach socket's commands (act_command.go):
	// no viewer can act on the host's requests. Without rules, a
	// read-only proxy also follows no request in flight: forwarding is
	// the plain copy.
	ReadOnly bool
	// OnEvent, when set, sees every event recorded and what it changed,
	// on the recorder's goroutine (never the wire's).
	OnEvent func(ev event.Event, changes []session.Change, tr *session.Tracker)
	// Spans, when set, is given what the trace is (the host's requests as
	// client spans), on the recorder's goroutine; the caller closes it
	// once the proxy returned.
	Spans *otlp.Sink
}

func (o Options) withDefaults() Options {
	if o.ShutdownWait <= 0 {
		o.ShutdownWait = DefaultShutdownWait
	}
	if o.QueueBytes <= 0 {
		o.QueueBytes = DefaultQueueBytes
	}
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = DefaultMaxLineBytes
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	return o
}

// Host is the host's end: what it writes (the proxy's stdin) and what it
// reads (the proxy's stdout).
type Host struct {
	In  io.Reader
	Out io.Writer
}

// End says how a proxied connection ended.
type End uint8

// The ends.
const (
	// EndHostClosed: the host closed the proxy's stdin (or stopped
	// reading its stdout); the proxy stopped the server.
	EndHostClosed End = iota + 1
	// EndServerExited: the server exited or closed its stdout; the host
	// sees the end of the proxy's stdout.
	EndServerExited
	// EndInterrupted: the proxy was told to stop (a signal); it stopped
	// the server.
	EndInterrupted
)

// Result is how a proxied connection ended.
type Result struct {
	End End
	// Err is the server's end when it exited on its own (its exit status).
	Err error
	// Stopped says what stopping the server took: "" (it exited when its
	// stdin closed), "SIGTERM" or "SIGKILL".
	Stopped string
	// PeakQueueBytes is the most the recorder's queue held at once.
	PeakQueueBytes int
	// PID is the server's process ID (gone by the time Run returns).
	PID int
	// Socket is the attach socket's path ("" without one).
	Socket string
}

// Run starts the server (command and args), forwards between it and the
// host until one of them ends, stops the server as the stdio transport
// says (close its stdin, wait, SIGTERM, wait, SIGKILL), and returns once
// the record is complete. When the server ends first, Run returns without
// waiting for the host's next write: the goroutine reading host.In ends
// with the process (or when the caller closes host.In).
func Run(ctx context.Context, host Host, command string, args []string, opts Options) (Result, error) {
	opts = opts.withDefaults()
	srv, err := startServer(command, args, opts)
	if err != nil {
		return Result{}, err
	}
	start := time.Now()
	q, rec, bc, socket := startRecording(opts, start, event.TransportStdio, termsafe.CommandLine(command, args))
	p := &stdioProxy{opts: opts, srv: srv, host: host, q: q, rec: rec,
		hostOutGone: make(chan struct{}), hostDone: make(chan error, 1), serverDone: make(chan error, 1), stderrDone: make(chan error, 1),
		res: Result{PID: srv.cmd.Process.Pid, Socket: socket}}
	if len(opts.Rules) == 0 && opts.ReadOnly {
		bc.takeCommands(nil, opts) // refused: read-only
		p.forwardPlain()
	} else {
		toHost, toSrv := &lineWriter{w: host.Out}, &lineWriter{w: srv.stdin}
		p.inj = newInjector(opts.Rules, q, toHost, toSrv, p.serverSoFar)
		// The viewers' commands act through the injector (the keys of
		// inflight attach), unless the proxy is read-only.
		bc.takeCommands(p.inj, opts)
		if opts.Release != nil {
			defer p.releaseOnSignal()()
		}
		p.forwardInjected(toHost, toSrv)
	}
	go func() {
		sp := &splitter{from: FromStderr, max: event.MaxRawKept}
		p.stderrDone <- pump(opts.Stderr, srv.stderr, sp, q, nil, nil, func() {})
	}()

	p.awaitEnd(ctx)
	p.finish()
	if bc != nil {
		bc.close()
	}
	p.res.PeakQueueBytes = q.peakBytes()
	return p.res, nil
}

// stdioProxy is one run of the stdio proxy: the server, the host, the
// recording, and the pumps between them.
type stdioProxy struct {
	opts Options
	srv  *server
	host Host
	q    *queue
	rec  *recorder
	// inj applies the rules and the viewers' commands; nil on a read-only
	// proxy without rules.
	inj *injector

	// serverRead counts the bytes read from the server's stdout.
	serverRead atomic.Int64
	// hostOutGone is closed once the host stopped reading the proxy's
	// stdout.
	hostOutGone chan struct{}
	goneOnce    sync.Once
	// The pumps' ends: the host's (its stdin), the server's (its stdout)
	// and its stderr.
	hostDone, serverDone, stderrDone chan error

	res Result
}

// serverSoFar is how far the server's output has been read, counting what
// its pipe still holds: a host cancel's position.
func (p *stdioProxy) serverSoFar() int64 {
	return p.serverRead.Load() + pipeinq.Pending(p.srv.stdout)
}

func (p *stdioProxy) hostGone() { p.goneOnce.Do(func() { close(p.hostOutGone) }) }

// forwardPlain pumps both ways byte for byte, recording what passes.
func (p *stdioProxy) forwardPlain() {
	go func() {
		sp := &splitter{from: FromHost, max: p.opts.MaxLineBytes}
		p.hostDone <- pump(p.srv.stdin, p.host.In, sp, p.q, nil, p.serverSoFar, nil)
	}()
	go func() {
		sp := &splitter{from: FromServer, max: p.opts.MaxLineBytes}
		p.serverDone <- pump(p.host.Out, p.srv.stdout, sp, p.q, &p.serverRead, nil, p.hostGone)
	}()
}

// forwardInjected pumps both ways through the injector: the host's lines
// as it sees them, the server's through its gate.
func (p *stdioProxy) forwardInjected(toHost, toSrv *lineWriter) {
	inj := p.inj
	go func() {
		sp := &splitter{from: FromHost, max: p.opts.MaxLineBytes}
		p.hostDone <- pumpVia(p.host.In, sp, p.q, nil, p.serverSoFar, nil, true,
			func(chunk []byte, at time.Time, ls []line) ([]line, func(), error) {
				after, notes := inj.hostLines(ls, at)
				return notes, after, toSrv.forward(chunk)
			})
	}()
	go func() {
		sp := &splitter{from: FromServer, max: p.opts.MaxLineBytes}
		g := &gate{in: inj, out: toHost, max: p.opts.MaxLineBytes}
		p.serverDone <- pumpVia(p.srv.stdout, sp, p.q, &p.serverRead, nil, p.hostGone, false,
			func(chunk []byte, at time.Time, _ []line) ([]line, func(), error) {
				return nil, nil, g.pass(chunk, at)
			})
	}()
}

// releaseOnSignal releases every held response each time opts.Release
// fires, until the returned stop is called.
func (p *stdioProxy) releaseOnSignal() (stop func()) {
	releaseDone := make(chan struct{})
	stopRelease := make(chan struct{})
	go func() {
		defer close(releaseDone)
		for {
			select {
			case <-p.opts.Release:
				p.inj.releaseAll()
			case <-stopRelease:
				return
			}
		}
	}()
	return func() {
		close(stopRelease)
		select {
		case <-releaseDone:
		case <-time.After(p.opts.ShutdownWait):
			// A release writing to a host that stopped reading.
		}
	}
}

// awaitEnd waits for the first end — the host's, the server's, or ctx's —
// and stops the server when it was not the server's own.
func (p *stdioProxy) awaitEnd(ctx context.Context) {
	select {
	case err := <-p.hostDone:
		if errors.Is(err, errWrite) {
			// The server stopped reading: it is ending (or hung, which
			// the wait below finds out).
			p.res.End = EndServerExited
			break
		}
		p.stop(EndHostClosed)
	case <-p.hostOutGone:
		p.stop(EndHostClosed)
	case <-p.serverDone:
		p.serverDone <- nil
		p.res.End = EndServerExited
	case <-p.srv.exited:
		p.res.End = EndServerExited
	case <-ctx.Done():
		p.stop(EndInterrupted)
	}
	if p.res.End == EndServerExited {
		select {
		case <-p.srv.exited:
		case <-time.After(p.opts.ShutdownWait):
			// It closed its stdout but runs on: nothing more can reach
			// the host, so stop it.
			p.res.Stopped = p.srv.stop(p.opts.ShutdownWait)
		}
		p.res.Err = exitCause(p.srv.waitErr)
		p.rec.say(p.res.Err.Error() + "; the host's connection is closed")
	}
}

// stop stops the server for end (the host's or an interruption).
func (p *stdioProxy) stop(end End) {
	p.res.End = end
	if end == EndHostClosed {
		p.q.pushControl(line{ctl: ctlHostGone, at: time.Now()})
	}
	p.res.Stopped = p.srv.stop(p.opts.ShutdownWait)
	if p.res.Stopped != "" {
		p.rec.say(fmt.Sprintf("the server did not exit within %s of its stdin closing: it took %s", p.opts.ShutdownWait, p.res.Stopped))
	}
}

// finish drains the server's output, lets what a rule holds go, and
// completes the record.
func (p *stdioProxy) finish() {
	p.srv.drain(p.opts.ShutdownWait, p.serverDone, p.stderrDone)
	if p.inj != nil {
		// What a rule still holds goes to the host, if it still reads,
		// before the end of the proxy's stdout.
		p.inj.close(p.opts.ShutdownWait)
	}
	var closeErr error
	if p.res.End == EndServerExited {
		closeErr = p.res.Err
	}
	p.q.pushControl(line{ctl: ctlClosed, at: time.Now(), err: closeErr})
	p.q.close()
	<-p.rec.done
}

// askedFirst is how many of the server's lines ls, from the first, are no
// response (its requests, its notifications): they are queued before they
// are written to the host, which may answer a request among them at once,
// and that answer must not reach the recorder before the question (it
// would be an answer to an ID the server never sent). A response — which
// a rule may hold, and whose notes go before it — and all after it keep
// their place, queued after the write.
func askedFirst(ls []line) int {
	for i := range ls {
		l := &ls[i]
		if l.total != len(l.raw) {
			return i
		}
		if mayBeResponse(l.raw) {
			// A request whose params say "result" or "error" is still one.
			if m, err := wire.Decode(l.raw); err != nil || m.Kind != wire.KindRequest {
				return i
			}
		}
	}
	return len(ls)
}

// errWrite marks a pump's end because the far side stopped taking bytes.
var errWrite = errors.New("write failed")

// pump forwards src to dst as it reads, handing a copy of the complete
// lines to q (the host's just before it writes them, the server's just
// after). read, when set, counts the
// bytes read (the server's output, which a host cancel's position is
// taken from); soFar, when set, is
// asked for that position on a chunk that may hold a cancel. When dst
// fails and onWriteErr is set, pump tells it once and goes on reading
// (and recording) without writing, so the server is never left blocked;
// otherwise it returns errWrite. It returns nil at the end of src.
func pump(dst io.Writer, src io.Reader, sp *splitter, q *queue, read *atomic.Int64, soFar func() int64, onWriteErr func()) error {
	buf := make([]byte, 64<<10)
	writing := true
	for {
		n, err := src.Read(buf)
		if n > 0 {
			at := time.Now()
			var pos int64
			if soFar != nil && containsCancel(buf[:n]) {
				pos = soFar()
			}
			// The host's lines are queued before they are written: once
			// written, the server may answer them, and its answer must not
			// reach the recorder first (a response to an ID the host had
			// not yet issued). The server's are queued after, off the
			// answer's path, but for its leading requests and
			// notifications, which the host may answer as fast (askedFirst).
			hostSide := sp.from == FromHost
			ls := sp.feed(buf[:n], at, pos)
			early := len(ls)
			if !hostSide {
				early = askedFirst(ls)
			}
			q.push(ls[:early])
			if writing {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					if onWriteErr == nil {
						return errWrite
					}
					onWriteErr()
					writing = false
				}
			}
			if read != nil {
				read.Add(int64(n))
			}
			q.push(ls[early:])
		}
		if err != nil {
			q.push(sp.rest(time.Now()))
			if errors.Is(err, io.EOF) || errors.Is(err, os.ErrClosed) {
				return nil
			}
			return err
		}
	}
}

// pumpVia is pump for a proxy with rules: each chunk goes through pass,
// which writes what of it goes on, and sees the chunk's complete lines
// first (so that a request is marked before the server can answer it).
// The lines are queued, then the notes pass returned, then after runs;
// with queueFirst the lines are queued before pass writes them (as pump
// does: the host's side, whose requests the server may answer at once),
// else after it (the server's side, where the gate queues what it did to
// a line before the line).
func pumpVia(src io.Reader, sp *splitter, q *queue, read *atomic.Int64, soFar func() int64, onWriteErr func(), queueFirst bool,
	pass func(chunk []byte, at time.Time, ls []line) (notes []line, after func(), err error)) error {
	buf := make([]byte, 64<<10)
	writing := true
	for {
		n, err := src.Read(buf)
		if n > 0 {
			at := time.Now()
			var pos int64
			if soFar != nil && containsCancel(buf[:n]) {
				pos = soFar()
			}
			ls := sp.feed(buf[:n], at, pos)
			early := len(ls)
			if !queueFirst {
				// The server's leading requests before pass writes them
				// (see pump); a response, which the gate may hold, keeps
				// its place after what the gate queues of it.
				early = askedFirst(ls)
			}
			q.push(ls[:early])
			var notes []line
			var after func()
			if writing {
				var werr error
				if notes, after, werr = pass(buf[:n], at, ls); werr != nil {
					if onWriteErr == nil {
						return errWrite
					}
					onWriteErr()
					writing = false
				}
			}
			if read != nil {
				read.Add(int64(n))
			}
			q.push(ls[early:])
			for _, l := range notes {
				q.pushControl(l)
			}
			if after != nil {
				after()
			}
		}
		if err != nil {
			if writing {
				// The end of the stream: what pass kept back of a last
				// line goes on.
				_, _, _ = pass(nil, time.Now(), nil)
			}
			q.push(sp.rest(time.Now()))
			if errors.Is(err, io.EOF) || errors.Is(err, os.ErrClosed) {
				return nil
			}
			return err
		}
	}
}

var cancelMethod = []byte(`notifications/cancelled`)

func containsCancel(b []byte) bool { return bytes.Contains(b, cancelMethod) }

// say writes one line of the proxy's own on its stderr, and records it.
func (r *recorder) say(text string) {
	fmt.Fprintf(r.stderr, "inflight proxy %s: %s\n", termsafe.Line(r.name), termsafe.Line(text))
}

// server is the child the proxy started.
type server struct {
	cmd                   *exec.Cmd
	stdin, stdout, stderr *os.File
	exited                chan struct{}
	waitErr               error
	stdinOnce             sync.Once
}

// startServer starts the server with pipes of its own (os.Pipe pairs, so
// that waiting for it never races with reading what it wrote last), in a
// process group of its own.
func startServer(command string, args []string, opts Options) (*server, error) {
	cmd := exec.Command(command, args...)
	cmd.Env = append(os.Environ(), opts.Env...)
	cmd.Dir = opts.Dir
	ownGroup(cmd)
	var files []*os.File
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		files = append(files, r, w)
		return r, w, err
	}
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	inR, inW, err1 := pipe()
	outR, outW, err2 := pipe()
	errR, errW, err3 := pipe()
	if err := errors.Join(err1, err2, err3); err != nil {
		closeAll()
		return nil, fmt.Errorf("start server: %w", err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		closeAll()
		return nil, fmt.Errorf("start server %q: %w", command, err)
	}
	// The child has its copies; ours of its ends must go so EOF can happen.
	inR.Close()
	outW.Close()
	errW.Close()
	s := &server{cmd: cmd, stdin: inW, stdout: outR, stderr: errR, exited: make(chan struct{})}
	go func() {
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()
	return s, nil
}

// stop ends the server as the stdio transport page says: close its stdin,
// wait; SIGTERM, wait; SIGKILL. It reports the signal it took ("" when
// closing stdin was enough).
func (s *server) stop(wait time.Duration) string {
	s.stdinOnce.Do(func() { s.stdin.Close() })
	for _, step := range []struct {
		sig  os.Signal
		name string
	}{{nil, ""}, {sigTerm, "SIGTERM"}, {sigKill, "SIGKILL"}} {
		if step.sig != nil {
			signalGroup(s.cmd, step.sig)
		}
		select {
		case <-s.exited:
			return step.name
		case <-time.After(wait):
		}
	}
	return "SIGKILL"
}

// drain waits for the server's output to be forwarded and recorded to
// its end, once the server has exited: what it left behind in its process
// group (a helper holding the pipes) is stopped, and after wait the pipes
// are closed whatever holds them.
func (s *server) drain(wait time.Duration, pumps ...chan error) {
	select {
	case <-s.exited:
	case <-time.After(wait):
	}
	if groupAlive(s.cmd) {
		signalGroup(s.cmd, sigTerm)
		time.Sleep(min(wait, 100*time.Millisecond))
		if groupAlive(s.cmd) {
			signalGroup(s.cmd, sigKill)
		}
	}
	deadline := time.After(wait)
	closed := false
	for _, p := range pumps {
		select {
		case <-p:
			continue
		case <-deadline:
		}
		if !closed {
			// Something still holds the pipes: close them under it.
			closed = true
			s.stdout.Close()
			s.stderr.Close()
			deadline = time.After(wait)
		}
		select {
		case <-p:
		case <-deadline:
			// The pump is stuck writing to a host that stopped reading
			// its stdout: give up on it; it ends when the host's end does
			// (or with the process).
		}
	}
	s.stdout.Close()
	s.stderr.Close()
	s.stdinOnce.Do(func() { s.stdin.Close() })
}

func exitCause(err error) error {
	if err == nil {
		return errors.New("the server exited (status 0)")
	}
	return fmt.Errorf("the server exited: %w", err)
}

// startRecording starts a proxy's record: the queue the forwarders copy
// lines to, the recorder (on its goroutine) with its tracker and trace
// writers, a first note naming what is proxied (what: the command, or
// the local URL and the upstream's), and the attach socket, when one can
// be opened (its path; a socket that cannot is said, and the proxy runs
// on without).
func startRecording(opts Options, start time.Time, transport event.TransportKind, what string) (q *queue, rec *recorder, bc *broadcast, socket string) {
	q = newQueue(opts.QueueBytes)
	rec = &recorder{q: q, tr: session.NewTracker(opts.Tracker), stderr: opts.Stderr, name: opts.Name, onEvent: opts.OnEvent,
		spans: opts.Spans, maxLine: opts.MaxLineBytes, done: make(chan struct{}), transport: transport}
	if opts.Trace != nil {
		rec.tws = append(rec.tws, opts.Trace)
		if opts.RecordHTTP && transport == event.TransportHTTP {
			rec.httpTrace = opts.Trace
		}
	}
	rec.report(event.Event{Kind: event.Note, Time: start, Text: "proxy " + opts.Name + ": " + what}, nil)
	if opts.SocketDir != "" {
		l, path, err := listen(opts.SocketDir, opts.Name)
		if err != nil {
			rec.say("no attach socket: " + err.Error())
		} else {
			socket = path
			// The socket is this proxy's now, and so is the record of
			// where its trace is.
			if err := markTrace(opts.SocketDir, opts.Name, opts.TracePath); err != nil {
				rec.say("no record of the trace for inflight attach after the end: " + err.Error())
			}
			bc = newBroadcast(l, Hello{Stream: "trace", Proxy: opts.Name, PID: os.Getpid(),
				Command: termsafe.Line(opts.Redactor.String(what)), Started: start,
				LateWindow: Duration(lateWindowOf(opts.Tracker)), Transport: transport.String()})
			tw := trace.NewWriter(bc, start, opts.Redactor)
			tw.SetSenders("host", "server")
			tw.SetPositions(true)
			rec.tws = append(rec.tws, tw)
		}
	}
	go rec.run()
	return q, rec, bc, socket
}
