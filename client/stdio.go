package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"inflight/event"
	"inflight/internal/pipeinq"
	"inflight/wire"
)

// stdioTransport speaks newline-delimited JSON-RPC with a child process (or
// with in-process pipes).
type stdioTransport struct {
	c *Client

	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	// out is stdout's line reader, once the reader has started.
	out    atomic.Pointer[lineReader]
	stderr io.ReadCloser

	// writeSem serialises writes, so lines from different goroutines never
	// interleave. It is a channel rather than a mutex so that a writer
	// queued behind a stuck write can give up (see write).
	writeSem chan struct{}
	wbuf     []byte
	// stdinOnce closes stdin exactly once. It is not done under writeSem: a
	// write blocked on a server that stopped reading holds it, and closing
	// the pipe is precisely what unblocks it.
	stdinOnce sync.Once
	// writing is set while a write is on the pipe; stalled is closed, with
	// stallErr set, once a write was given up (see write).
	writing   atomic.Bool
	stallOnce sync.Once
	stalled   chan struct{}
	stallErr  error

	exited     chan struct{} // the process exited (never closed for pipes)
	waitErr    error
	stdoutDone chan struct{}
	stderrDone chan struct{}
	closing    atomic.Bool
	stopped    chan struct{} // the supervisor finished
}

func newStdioTransport(c *Client) *stdioTransport {
	return &stdioTransport{
		c:          c,
		exited:     make(chan struct{}),
		stdoutDone: make(chan struct{}),
		stderrDone: make(chan struct{}),
		stopped:    make(chan struct{}),
		writeSem:   make(chan struct{}, 1),
		stalled:    make(chan struct{}),
	}
}

func (t *stdioTransport) start(ctx context.Context) error {
	cfg := &t.c.cfg
	if cfg.Pipes != nil {
		t.stdin, t.stdout, t.stderr = cfg.Pipes.Stdin, cfg.Pipes.Stdout, cfg.Pipes.Stderr
	} else {
		if err := t.spawn(); err != nil {
			return err
		}
	}
	t.c.wg.Add(2)
	go t.readStdout()
	if t.stderr != nil {
		t.c.wg.Add(1)
		go t.readStderr()
	} else {
		close(t.stderrDone)
	}
	go t.supervise()
	return nil
}

// spawn starts the server with its own pipes. The pipes are os.Pipe pairs we
// own (not exec's StdoutPipe) so that waiting for the process never races
// with reading what it wrote last.
func (t *stdioTransport) spawn() error {
	cfg := &t.c.cfg
	cmd := exec.Command(cfg.Command, cfg.Args...)
	cmd.Env = append(os.Environ(), cfg.Env...)
	cmd.Dir = cfg.Dir
	setProcessGroup(cmd)
	inR, inW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("start server: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return fmt.Errorf("start server: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return fmt.Errorf("start server: %w", err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		for _, f := range []*os.File{inR, inW, outR, outW, errR, errW} {
			f.Close()
		}
		// exec's error names the command already ("fork/exec
		// /x/server: no such file or directory"): said once, the reason
		// fits a status line.
		if strings.Contains(err.Error(), cfg.Command) {
			return fmt.Errorf("start server: %w", err)
		}
		return fmt.Errorf("start server %q: %w", cfg.Command, err)
	}
	// The child has its copies; ours of its ends must go so EOF can happen.
	inR.Close()
	outW.Close()
	errW.Close()
	t.cmd, t.stdin, t.stdout, t.stderr = cmd, inW, outR, errR
	t.c.wg.Add(1)
	go func() {
		defer t.c.wg.Done()
		t.waitErr = cmd.Wait()
		close(t.exited)
		t.endGroup()
	}()
	return nil
}

// endGroup stops what the server left behind in its process group once it
// has exited, whichever way it went (it exited at the end of its stdin,
// crashed, or was signalled). A wrapper script that starts a helper
// (`sleep 300 &`) and execs the server leaves the helper running, holding
// the server's stdout and stderr open, so that every read waits on it
// (issue 14, item 8: each call took 4.9 s instead of 0.3 s, and the helper
// outlived inflight). The server is gone, so whatever is left is an orphan
// of the connection: SIGTERM, a short grace, then SIGKILL.
func (t *stdioTransport) endGroup() {
	if !groupAlive(t.cmd) {
		return
	}
	signalGroup(t.cmd, sigTerm)
	grace := min(t.c.cfg.ShutdownWait, 200*time.Millisecond)
	for deadline := time.Now().Add(grace); time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		if !groupAlive(t.cmd) {
			return
		}
	}
	signalGroup(t.cmd, sigKill)
}

func (t *stdioTransport) readStdout() {
	defer t.c.wg.Done()
	defer close(t.stdoutDone)
	// Once the reader is done nothing more can be read: the descriptor goes
	// now, not whenever a finalizer gets to it (a TUI that reconnects would
	// otherwise pile up two per server it started).
	defer t.stdout.Close()
	lr := newLineReader(t.stdout, t.c.cfg.MaxMessageBytes)
	t.out.Store(lr)
	// Every event carries the time its transport read it. The lines one
	// read() brought in were read at one instant, so the clock is asked
	// once per read, not once per line: the profile of a flood (several
	// hundred lines per read) had time.Now at 4-7 % of the reader.
	var now time.Time
	reads := ^uint64(0)
	for {
		line, total, err := lr.Next()
		if n := lr.Reads(); n != reads {
			reads, now = n, time.Now()
		}
		switch {
		case errors.Is(err, errLineTooLong):
			// line is the kept prefix (at most event.MaxRawKept bytes) and total
			// the line's length, both without the terminator.
			t.c.emitWait(event.Event{Kind: event.Malformed, Time: now, Raw: keepRaw(line), Truncated: total - len(line),
				Err: fmt.Errorf("line of %d bytes exceeds the %d-byte message limit", total, t.c.cfg.MaxMessageBytes)})
			continue
		case err != nil:
			return
		}
		if len(line) == 0 {
			continue
		}
		t.c.receiveAt(line, 0, now, wire.ID{}, lr.End())
	}
}

// outputSoFar is how many bytes the server had written to its stdout by
// now: what inflight read, and what still waits in the pipe. A cancel takes
// it as it leaves: every message that ends within it was sent before the
// cancel (0: unknown, before the reader started).
func (t *stdioTransport) outputSoFar() int64 {
	lr := t.out.Load()
	if lr == nil {
		return 0
	}
	return lr.ReadSoFar() + pipeinq.Pending(t.stdout)
}

func (t *stdioTransport) readStderr() {
	defer t.c.wg.Done()
	defer close(t.stderrDone)
	defer t.stderr.Close()
	lr := newLineReader(t.stderr, event.MaxRawKept)
	for {
		line, total, err := lr.Next()
		if err != nil && !errors.Is(err, errLineTooLong) {
			return
		}
		t.c.emitWait(event.Event{Kind: event.Stderr, Time: time.Now(), Text: string(line), Truncated: total - len(line)})
	}
}

// supervise notices the end of the connection (the process exited or closed
// its stdout) and reports it once.
func (t *stdioTransport) supervise() {
	defer t.c.wg.Done()
	defer close(t.stopped)
	wait := t.c.cfg.ShutdownWait
	var cause error
	stopAfter := false
	select {
	case <-t.stdoutDone:
		if t.closing.Load() {
			break
		}
		if t.cmd == nil {
			cause = errors.New("the server closed its stdout")
			break
		}
		// A server that closes stdout usually exits right after; wait a
		// little for its exit status, which says more than "EOF".
		select {
		case <-t.exited:
			cause = exitCause(t.waitErr)
		case <-time.After(wait):
			// Nothing more can be read, so the connection is over now: report
			// it first and stop the process after, rather than leaving every
			// request looking alive through the whole escalation.
			cause = errors.New("the server closed its stdout but kept running; inflight is stopping it")
			stopAfter = true
		}
	case <-t.exited:
		cause = exitCause(t.waitErr)
	}
	if t.closing.Load() {
		cause = nil
	}
	if !stopAfter {
		// Let the readers drain what the server wrote before it ended. Once
		// it has exited, only what it left behind can hold the pipes open
		// (endGroup is stopping that), or a helper that left its process
		// group: one bound for both pipes, then they are closed.
		drain := time.NewTimer(wait)
		for _, p := range []struct {
			done chan struct{}
			r    io.ReadCloser
		}{{t.stdoutDone, t.stdout}, {t.stderrDone, t.stderr}} {
			if isClosed(p.done) {
				continue
			}
			select {
			case <-p.done:
			case <-drain.C:
				drain.Reset(0)
				p.r.Close()
				<-p.done
			}
		}
		drain.Stop()
	}
	t.c.markDead(cause)
	if stopAfter {
		t.terminate()
		select {
		case <-t.stderrDone:
		case <-time.After(wait):
			t.stderr.Close()
			<-t.stderrDone
		}
	}
}

func exitCause(err error) error {
	if err == nil {
		return errors.New("the server exited (status 0)")
	}
	return fmt.Errorf("the server exited: %w", err)
}

// terminate escalates: close stdin, wait, SIGTERM, wait, SIGKILL, wait; each
// wait bounded by ShutdownWait.
func (t *stdioTransport) terminate() {
	wait := t.c.cfg.ShutdownWait
	t.closeStdin()
	if t.cmd == nil {
		return
	}
	select {
	case <-t.exited:
		return
	case <-time.After(wait):
	}
	signalGroup(t.cmd, sigTerm)
	select {
	case <-t.exited:
		return
	case <-time.After(wait):
	}
	signalGroup(t.cmd, sigKill)
	select {
	case <-t.exited:
	case <-time.After(wait):
	}
}

func (t *stdioTransport) close() error {
	if t.stdin == nil {
		return nil // never started
	}
	t.closing.Store(true)
	if t.cmd != nil {
		t.terminate()
	} else {
		t.closeStdin()
		select {
		case <-t.stdoutDone:
		case <-time.After(t.c.cfg.ShutdownWait):
			t.stdout.Close()
		}
	}
	<-t.stopped
	return nil
}

// closeStdin closes the server's stdin once: the first step of shutdown,
// and the end of any write blocked on a server that stopped reading.
func (t *stdioTransport) closeStdin() {
	t.stdinOnce.Do(func() { _ = t.stdin.Close() })
}

// ErrWriteStalled is wrapped by the error of a Send, Cancel or handshake
// whose write to a stdio server's stdin could not complete in time (see
// Config.WriteTimeout): the server stopped reading. The connection is then
// unusable and reported closed.
var ErrWriteStalled = errors.New("the server is not reading its stdin")

// write sends one line, in a single write so that lines from different
// goroutines never interleave.
//
// A debugger must not hang on a server that stopped reading its stdin, so
// the write is bounded by WriteTimeout and by ctx. Going over either bound
// in the middle of a write leaves a half-written line on the pipe, which no
// other message may ever follow: the write is abandoned by closing stdin
// (which is also what unblocks it), and from then on every write fails
// with ErrWriteStalled. The caller reports the connection lost (see lost).
// A writer still queued behind a stuck write has written nothing
// and gives up without harm: on its own ctx, on the bound, or when the
// stuck write is abandoned.
func (t *stdioTransport) write(ctx context.Context, raw []byte) error {
	return t.writeFrom(ctx, raw, nil)
}

// writeFrom is write, calling starting (when set) the moment the write
// may begin: the pipe is ours and nothing stands in the way.
func (t *stdioTransport) writeFrom(ctx context.Context, raw []byte, starting func()) error {
	// Profiling the cancel path showed the timers of the slow path in the
	// way of the common case, where nobody else is writing: take the
	// semaphore without them when it is free.
	select {
	case t.writeSem <- struct{}{}:
	default:
		if err := t.waitTurn(ctx); err != nil {
			return err
		}
	}
	defer func() { <-t.writeSem }()
	if isClosed(t.stalled) {
		return t.stallErr
	}
	if err := ctx.Err(); err != nil {
		// Nothing written yet: giving up now costs the connection nothing.
		return fmt.Errorf("write to server stdin: %w", err)
	}
	if starting != nil {
		starting()
	}
	t.wbuf = appendLine(t.wbuf[:0], raw)
	size := len(t.wbuf)
	if dl, ok := t.stdin.(interface{ SetWriteDeadline(time.Time) error }); ok {
		if ctx.Done() == nil && dl.SetWriteDeadline(time.Now().Add(t.c.cfg.WriteTimeout)) == nil {
			// A pollable pipe (a real child's stdin) bounds the write itself:
			// no watchdog goroutine or timer on the hot path of a cancel.
			return t.writeWithDeadline(size)
		}
		// The watchdog bounds this one; an earlier write's deadline must
		// not cut it short.
		_ = dl.SetWriteDeadline(time.Time{})
	}
	// The watchdog and the writer race to clear writing: whoever wins
	// decides whether the write completed or was abandoned.
	t.writing.Store(true)
	abandon := func(why string) {
		if t.writing.CompareAndSwap(true, false) {
			t.stall(fmt.Errorf("write to server stdin: %w: a write of %d bytes %s; inflight closed the server's stdin, "+
				"since a half-written message can be followed by nothing else, and the connection is unusable", ErrWriteStalled, size, why))
		}
	}
	stopCtx := context.AfterFunc(ctx, func() { abandon(fmt.Sprintf("was abandoned (%v)", ctx.Err())) })
	watchdog := time.AfterFunc(t.c.cfg.WriteTimeout, func() {
		abandon(fmt.Sprintf("did not complete within %s", t.c.cfg.WriteTimeout))
	})
	n, err := t.stdin.Write(t.wbuf)
	completed := t.writing.CompareAndSwap(true, false)
	stopCtx()
	watchdog.Stop()
	if cap(t.wbuf) > 1<<20 {
		t.wbuf = nil
	}
	switch {
	case !completed && (err != nil || n < size):
		<-t.stalled // the watchdog that won is recording why
		return t.stallErr
	case err != nil:
		return fmt.Errorf("write to server stdin: %w", err)
	}
	// Written whole, even if the watchdog fired in the same instant: the
	// message is out (though the connection is now closed).
	return nil
}

// appendLine appends raw to dst as one line. Messages on stdio are
// delimited by newlines and must not contain embedded ones, yet a message
// may carry JSON as a person wrote it (an answer file's pretty-printed
// response, which made the reference server wait forever on the half it
// could not parse): valid JSON with line breaks is compacted — JSON
// escapes a newline inside a string, so those outside are whitespace.
// Anything else goes as given (SendRaw's malformed messages are meant).
func appendLine(dst, raw []byte) []byte {
	if bytes.IndexByte(raw, '\n') < 0 && bytes.IndexByte(raw, '\r') < 0 {
		return append(append(dst, raw...), '\n')
	}
	b := bytes.NewBuffer(dst)
	if err := json.Compact(b, raw); err != nil {
		b.Truncate(len(dst))
		b.Write(raw)
	}
	return append(b.Bytes(), '\n')
}

// waitTurn waits for the write semaphore while another write holds it,
// bounded by ctx and WriteTimeout.
func (t *stdioTransport) waitTurn(ctx context.Context) error {
	bound := time.NewTimer(t.c.cfg.WriteTimeout)
	defer bound.Stop()
	select {
	case t.writeSem <- struct{}{}:
		return nil
	case <-t.stalled:
		return t.stallErr
	case <-ctx.Done():
		return fmt.Errorf("write to server stdin: %w", ctx.Err())
	case <-bound.C:
		return fmt.Errorf("write to server stdin: %w: an earlier write has been stuck for over %s", ErrWriteStalled, t.c.cfg.WriteTimeout)
	}
}

// writeWithDeadline writes t.wbuf (size bytes) to a stdin that carries a
// write deadline. A write cut short by the deadline leaves a half-written
// line, so the connection is abandoned exactly as the watchdog would.
func (t *stdioTransport) writeWithDeadline(size int) error {
	if isClosed(t.stalled) {
		return t.stallErr
	}
	n, err := t.stdin.Write(t.wbuf)
	if cap(t.wbuf) > 1<<20 {
		t.wbuf = nil
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, os.ErrDeadlineExceeded):
		t.stall(fmt.Errorf("write to server stdin: %w: a write of %d bytes did not complete within %s (%d written); inflight closed the server's stdin, "+
			"since a half-written message can be followed by nothing else, and the connection is unusable", ErrWriteStalled, size, t.c.cfg.WriteTimeout, n))
		return t.stallErr
	case n > 0 && n < size:
		t.stall(fmt.Errorf("write to server stdin: %w: a write of %d bytes broke after %d (%v); the connection is unusable", ErrWriteStalled, size, n, err))
		return t.stallErr
	}
	return fmt.Errorf("write to server stdin: %w", err)
}

// stall records that a write was abandoned and closes stdin, which ends
// the write and makes sure nothing follows the half-written line.
func (t *stdioTransport) stall(err error) {
	t.stallOnce.Do(func() {
		t.stallErr = err
		close(t.stalled)
		t.closeStdin()
	})
}

// lost reports the connection closed once a write was abandoned (even one
// that completed in the instant its watchdog fired: stdin is closed all the
// same). Callers run it after reporting what the failed write concerned, so
// that the request is seen failing before the connection closes.
func (t *stdioTransport) lost() {
	if isClosed(t.stalled) {
		t.c.markDead(t.stallErr)
	}
}

func (t *stdioTransport) send(ctx context.Context, out outgoing) error {
	if isClosed(t.c.dead) {
		return ErrClosed
	}
	if !out.id.IsZero() {
		// Report a request before it can be answered, so that its response
		// can never overtake it on the event channel. (Callers report the
		// notifications and responses they send themselves.)
		t.c.emitSent(out)
	}
	if out.writing != nil {
		out.writing(time.Now())
	}
	err := t.write(ctx, out.raw)
	if errors.Is(err, ErrWriteStalled) {
		if !out.id.IsZero() && !out.internal {
			// This request is lost with the connection, as the others are:
			// nothing will answer it (issue 14, item 12: it ended "failed",
			// as if the server had refused it). It is reported on its own,
			// with the reason, before the connection closes.
			t.c.emit(event.Event{Kind: event.RequestFailed, Time: time.Now(), RequestID: out.id, Err: err, LostConnection: true})
		}
	}
	t.lost()
	return err
}

func (t *stdioTransport) cancel(id wire.ID, reason string) (event.CancelSignal, error) {
	raw := wire.Notification(wire.NotifyCancelled, wire.CancelledParams(id, reason))
	// The signal's time is when its write began, not when the write
	// returned: a server can answer it (and the answer be read) before
	// this goroutine runs again, and an answer read "before the cancel
	// left" would pass for one that crossed it. Write before the
	// bookkeeping events: the cancel's latency matters more than their
	// order (the tracker recorded the intent already).
	//
	// It is taken once the write may start (another write may hold the
	// pipe), with how much the server had written by then: every message
	// that ends within that was sent before the cancel, and crossed it,
	// however late it is read — a flood's pipe holds hundreds of such
	// lines. (What is read while the write runs is applied before the
	// CancelSent below, as having crossed a signal not yet out, which it
	// did.)
	var now time.Time
	var mark int64
	err := t.writeFrom(context.Background(), raw, func() {
		now, mark = time.Now(), t.outputSoFar()
	})
	if now.IsZero() {
		now = time.Now()
	}
	defer t.lost()
	if err != nil {
		// The tracker must know the cancel did not go out (found in
		// review: with no word of it, everything after counted as crossed).
		t.c.emit(event.Event{Kind: event.CancelSent, Time: now, RequestID: id, Signal: event.SignalNone, Reason: reason, Err: err})
		return event.SignalNone, err
	}
	t.c.emitOwnSent(id, raw, now)
	t.c.emit(event.Event{Kind: event.CancelSent, Time: now, RequestID: id, Signal: event.SignalNotification, Reason: reason, StreamEnd: mark})
	return event.SignalNotification, nil
}
