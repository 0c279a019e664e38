package proxy

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"inflight/wire"
)

// The test binary doubles as the servers the proxy starts: with
// INFLIGHT_PROXY_HELPER set, TestMain runs that helper instead of the
// tests, so every test has a real child process behind the proxy.
func TestMain(m *testing.M) {
	if h := os.Getenv("INFLIGHT_PROXY_HELPER"); h != "" {
		os.Exit(runHelper(h))
	}
	goleak.VerifyTestMain(m)
}

func runHelper(name string) int {
	switch name {
	case "script":
		// Write SEND to stdout in odd-sized pieces while copying stdin to
		// GOT; exit at the end of stdin.
		send, _ := os.ReadFile(os.Getenv("SEND"))
		got, err := os.Create(os.Getenv("GOT"))
		if err != nil {
			return 3
		}
		done := make(chan struct{})
		first := make(chan struct{})
		go func() {
			if os.Getenv("WAIT_FIRST") != "" {
				// Send only once the host's first line is in.
				var b [1]byte
				for {
					n, err := os.Stdin.Read(b[:])
					if n == 1 {
						_, _ = got.Write(b[:])
					}
					if err != nil || (n == 1 && b[0] == '\n') {
						break
					}
				}
			}
			close(first)
			_, _ = io.Copy(got, os.Stdin)
			got.Close()
			close(done)
		}()
		<-first
		for i, n := 0, 1; i < len(send); i, n = i+n, n*3%4097+1 {
			_, _ = os.Stdout.Write(send[i:min(i+n, len(send))])
		}
		<-done
		return 0
	case "flood":
		// N progress notifications as fast as the pipe takes them, then
		// wait for stdin to close.
		n, _ := strconv.Atoi(os.Getenv("N"))
		var b bytes.Buffer
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":%d}}`+"\n", i)
			if b.Len() > 32<<10 {
				_, _ = os.Stdout.Write(b.Bytes())
				b.Reset()
			}
		}
		_, _ = os.Stdout.Write(b.Bytes())
		_, _ = io.Copy(io.Discard, os.Stdin)
		return 0
	case "sink":
		// Answer nothing; at the end of stdin write to GOT how many bytes
		// came and their SHA-256.
		h := sha256.New()
		n, _ := io.Copy(h, os.Stdin)
		_ = os.WriteFile(os.Getenv("GOT"), fmt.Appendf(nil, "%d %x", n, h.Sum(nil)), 0o600)
		return 0
	case "deaf":
		// Ignore the end of stdin and SIGTERM: only SIGKILL ends it.
		signal.Ignore(syscall.SIGTERM)
		_, _ = io.Copy(io.Discard, os.Stdin)
		time.Sleep(time.Minute)
		return 0
	case "pong":
		// Answer every request line with an empty result, at once.
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			m, err := wire.Decode(sc.Bytes())
			if err != nil || m.Kind != wire.KindRequest {
				continue
			}
			_, _ = os.Stdout.Write(append(wire.ResultResponse(m.ID, json.RawMessage(`{}`)), '\n'))
		}
		return 0
	case "answer-die":
		// Answer the first request with a CRLF line, then exit with
		// status 3 while the host still waits.
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			if m, err := wire.Decode(sc.Bytes()); err == nil && m.Kind == wire.KindRequest {
				_, _ = os.Stdout.Write(append(wire.ResultResponse(m.ID, json.RawMessage(`{}`)), '\r', '\n'))
				time.Sleep(50 * time.Millisecond)
				return 3
			}
		}
		return 0
	case "pong-after":
		// Copy stdin to GOT; answer each request once the next line (or
		// the end of stdin) is in, so that what the host sends after a
		// request comes first.
		got, err := os.Create(os.Getenv("GOT"))
		if err != nil {
			return 3
		}
		defer got.Close()
		sc := bufio.NewScanner(os.Stdin)
		var pending []wire.ID
		answer := func() {
			for _, id := range pending {
				_, _ = os.Stdout.Write(append(wire.ResultResponse(id, json.RawMessage(`{}`)), '\n'))
			}
			pending = nil
		}
		for sc.Scan() {
			fmt.Fprintln(got, sc.Text())
			m, err := wire.Decode(sc.Bytes())
			if err == nil && m.Kind == wire.KindRequest {
				answer()
				pending = append(pending, m.ID)
				if m.ID == wire.IntID(1) {
					answer() // the first at once
				}
				continue
			}
			answer()
		}
		answer()
		return 0
	case "progress-flood":
		// On each request, N progress notifications for token 1 and then
		// the answer.
		n, _ := strconv.Atoi(os.Getenv("N"))
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			m, err := wire.Decode(sc.Bytes())
			if err != nil || m.Kind != wire.KindRequest {
				continue
			}
			w := bufio.NewWriterSize(os.Stdout, 64<<10)
			for i := 1; i <= n; i++ {
				fmt.Fprintf(w, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":%d}}`+"\n", i)
			}
			_, _ = w.Write(append(wire.ResultResponse(m.ID, json.RawMessage(`{}`)), '\n'))
			_ = w.Flush()
		}
		return 0
	case "spawner":
		// Leave a helper behind in the process group, holding stdout, and
		// exit at the end of stdin (a wrapper script that starts
		// `sleep 300 &` does this).
		c := exec.Command("sleep", "30")
		c.Stdout = os.Stdout
		if c.Start() != nil {
			return 3
		}
		_ = os.WriteFile(os.Getenv("PIDFILE"), []byte(strconv.Itoa(c.Process.Pid)), 0o600)
		_, _ = io.Copy(io.Discard, os.Stdin)
		return 0
	case "die":
		// Answer one line, then exit with status 7 while the host waits.
		fmt.Println(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"bye"}}`)
		fmt.Fprintln(os.Stderr, "helper dies now")
		return 7
	}
	return 2
}

// helper returns the command and the environment that run a helper.
func helper(t *testing.T, name string, env ...string) (string, []string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe, append([]string{"INFLIGHT_PROXY_HELPER=" + name}, env...)
}

// hostPipes is a host: it writes the proxy's stdin and reads everything
// from its stdout.
type hostPipes struct {
	inW    *os.File // the host writes here
	inR    *os.File
	outR   *os.File
	outW   *os.File // the proxy writes here
	mu     sync.Mutex
	got    bytes.Buffer
	copied chan struct{}
}

func (h *hostPipes) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.got.Write(p)
}

func (h *hostPipes) gotLen() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.got.Len()
}

func newHost(t *testing.T) *hostPipes {
	t.Helper()
	h := &hostPipes{copied: make(chan struct{})}
	var err error
	if h.inR, h.inW, err = os.Pipe(); err != nil {
		t.Fatal(err)
	}
	if h.outR, h.outW, err = os.Pipe(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_, _ = io.Copy(h, h.outR)
		close(h.copied)
	}()
	t.Cleanup(func() {
		h.inW.Close()
		h.inR.Close()
		h.outW.Close()
		<-h.copied
		h.outR.Close()
	})
	return h
}

func (h *hostPipes) host() Host { return Host{In: h.inR, Out: h.outW} }

// received closes the proxy's stdout (as the proxy's exit would) and
// returns what the host read.
func (h *hostPipes) received() []byte {
	h.outW.Close()
	<-h.copied
	return h.got.Bytes()
}

// run runs the proxy in the background; wait returns its result.
func run(t *testing.T, h *hostPipes, command string, opts Options, args ...string) (wait func() Result) {
	t.Helper()
	var res Result
	var err error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		res, err = Run(context.Background(), h.host(), command, args, opts)
	}()
	return func() Result {
		t.Helper()
		wg.Wait()
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		return res
	}
}

// syncBuffer is a bytes.Buffer safe for the proxy's stderr.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
