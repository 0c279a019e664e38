package npmpeer_test

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"inflight/internal/testkit/npmpeer"
)

// The reference server's HTTP+SSE transport (`node dist/index.js sse`: GET
// /sse, POST /message), found from the bare stream URL — its POST to /sse
// is answered 404 — and cancelled with notifications/cancelled POSTed to
// the endpoint: the long operation's progress keeps coming on the shared
// stream after it, and is flagged.
func TestEverythingSSECancel(t *testing.T) {
	t.Parallel()
	in := npmpeer.Need(t, npmpeer.Node, npmpeer.Everything)
	url := startEverythingSSE(t, in)
	out := runInflight(t, "call", url, "--tool", longOp, "--args", `{"duration":3,"steps":3}`,
		"--cancel-after", "1.2s", "--late-window", "2.5s", "--json")
	checkCancelledReport(t, out, "sse")
}

// startEverythingSSE runs the reference server's HTTP+SSE transport on a
// free loopback port and returns its stream's URL once it listens.
func startEverythingSSE(t *testing.T, in npmpeer.Install) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	argv := in.EverythingCommand("sse")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	ready := make(chan struct{})
	var mu sync.Mutex
	var seen bytes.Buffer
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			seen.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if strings.Contains(sc.Text(), "running on port") {
				close(ready)
				break
			}
		}
		for sc.Scan() {
		}
	}()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("server-everything sse did not say it listens in 30s:\n%s", seen.String())
	}
	return fmt.Sprintf("http://127.0.0.1:%d/sse", port)
}
