package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"inflight/client"
	"inflight/event"
	"inflight/target"
)

// The check battery sends what a well-behaved client never would — a cancel
// for an unknown ID, for a finished request, malformed cancels — and the
// client refuses to (Cancel sends nothing for a request not in flight). So
// the runner writes those messages beside the client (Options.Inject): on
// stdio into the server's stdin, on legacy HTTP as its own POST in the
// client's session.

// injector writes one raw message to the server.
type injector interface {
	// inject sends raw and describes the outcome (an HTTP status), "" when
	// there is nothing to say.
	inject(ctx context.Context, raw []byte) (string, error)
}

// lockedStdin is a server's stdin shared by the client and Inject. The
// client writes each message with a single Write, so serialising Writes
// keeps lines whole.
type lockedStdin struct {
	mu sync.Mutex
	w  io.WriteCloser
}

func (s *lockedStdin) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// Close does not take the lock: a Write blocked on a full pipe must not
// keep the client from closing it.
func (s *lockedStdin) Close() error { return s.w.Close() }

func (s *lockedStdin) inject(_ context.Context, raw []byte) (string, error) {
	line := append(bytes.Clone(raw), '\n')
	if _, err := s.Write(line); err != nil {
		return "", fmt.Errorf("write to the server's stdin: %w", err)
	}
	return "", nil
}

// httpInjector POSTs messages to a Streamable HTTP endpoint with the
// headers the client uses: the target's own, the protocol version and, for
// a legacy session, its Mcp-Session-Id.
type httpInjector struct {
	hc      *http.Client
	url     string
	headers http.Header
	info    func() event.ConnInfo
}

func (h *httpInjector) inject(ctx context.Context, raw []byte) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(raw))
	if err != nil {
		return "", err
	}
	info := h.info()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if info.ProtocolVersion != "" {
		req.Header.Set("MCP-Protocol-Version", info.ProtocolVersion)
	}
	if info.SessionID != "" {
		req.Header.Set("Mcp-Session-Id", info.SessionID)
	}
	for k, vs := range h.headers {
		req.Header[k] = append([]string(nil), vs...)
	}
	resp, err := h.hc.Do(req)
	if err != nil {
		var ue interface{ Unwrap() error }
		if errors.As(err, &ue) {
			// net/http's "Post <url>:" prefix may carry a secret query.
			err = ue.Unwrap()
		}
		return "", fmt.Errorf("POST: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	status := fmt.Sprintf("HTTP %s", resp.Status)
	if b := strings.TrimSpace(string(body)); b != "" {
		status += ": " + b
	}
	return status, nil
}

// process is a stdio server the runner started itself, so that it holds
// the server's stdin (the client's own process handling keeps it private).
type process struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// startProcess starts a stdio target with pipes of its own, like the client
// does (os.Pipe pairs, so waiting for the process never races with reading
// what it wrote last).
func startProcess(t target.Target) (*client.Pipes, *process, error) {
	cmd := exec.Command(t.Command, t.Args...)
	cmd.Env = append(os.Environ(), t.Env...)
	cmd.Dir = t.Dir
	setProcessGroup(cmd)
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	pipe := func() (*os.File, *os.File, error) {
		r, w, err := os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	inR, inW, err := pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("start server: %w", err)
	}
	outR, outW, err := pipe()
	if err != nil {
		closeAll()
		return nil, nil, fmt.Errorf("start server: %w", err)
	}
	errR, errW, err := pipe()
	if err != nil {
		closeAll()
		return nil, nil, fmt.Errorf("start server: %w", err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		closeAll()
		return nil, nil, fmt.Errorf("start server %q: %w", t.Command, err)
	}
	inR.Close()
	outW.Close()
	errW.Close()
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	return &client.Pipes{Stdin: inW, Stdout: outR, Stderr: errR}, p, nil
}

// stop waits for the server to exit after the client closed its stdin, then
// terminates and kills it, each wait bounded.
func (p *process) stop(wait time.Duration) {
	if p == nil {
		return
	}
	for _, sig := range []func(){nil, func() { signalGroup(p.cmd, false) }, func() { signalGroup(p.cmd, true) }} {
		if sig != nil {
			sig()
		}
		select {
		case <-p.done:
			return
		case <-time.After(wait):
		}
	}
}
