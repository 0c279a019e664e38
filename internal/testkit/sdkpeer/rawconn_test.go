package sdkpeer_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"inflight/internal/testkit/sdkpeer"
)

// The tests here speak raw JSON-RPC to a peer over its stdin and stdout,
// with nothing of inflight's client in between, so that what they measure
// is the peer and the pipe and nothing being rewritten at the same time.

// Protocol eras a test drives a peer in.
const (
	legacy = "legacy"
	modern = "modern"
)

var eras = []string{legacy, modern}

// modernMeta is the _meta every modern request carries (SEP-2575).
const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientCapabilities":{},` +
	`"io.modelcontextprotocol/clientInfo":{"name":"sdkpeer-test","version":"1"}`

// waitLimit bounds every wait for the peer, so a broken peer fails a test
// instead of hanging it.
const waitLimit = 10 * time.Second

// line is one message read from the peer, stamped when the reader got it.
type line struct {
	at  time.Time
	raw []byte
	msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			ProgressToken json.RawMessage `json:"progressToken"`
			Progress      float64         `json:"progress"`
		} `json:"params"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
}

// rawConn is a running peer and the two ends of its stdio.
type rawConn struct {
	t      testing.TB
	era    string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan line
	stderr *lockedBuffer
	nextID int
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startPeer builds and starts the named peer and opens a session in era:
// initialize and notifications/initialized (legacy) or server/discover
// (modern). The peer is ended when t ends.
func startPeer(t testing.TB, name, era string) *rawConn {
	t.Helper()
	cmd := exec.Command(sdkpeer.BuildPeer(t, name))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &rawConn{t: t, era: era, cmd: cmd, stdin: stdin, lines: make(chan line, 1024), stderr: &lockedBuffer{}}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	readerDone := make(chan struct{})
	go c.read(stdout, readerDone)
	t.Cleanup(func() {
		_ = stdin.Close()
		wait := make(chan error, 1)
		go func() { <-readerDone; wait <- cmd.Wait() }()
		select {
		case <-wait:
		case <-time.After(waitLimit):
			_ = cmd.Process.Kill()
			<-wait
		}
		if t.Failed() {
			t.Logf("%s stderr:\n%s", name, c.stderr.String())
		}
	})
	if era == legacy {
		c.call(`"initialize"`, `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sdkpeer-test","version":"1"}}`)
		c.write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	} else {
		c.call(`"server/discover"`, `{`+modernMeta+`}}`)
	}
	return c
}

func (c *rawConn) read(stdout io.Reader, done chan<- struct{}) {
	defer close(done)
	defer close(c.lines)
	r := bufio.NewReaderSize(stdout, 64<<10)
	for {
		raw, err := r.ReadBytes('\n')
		at := time.Now()
		if len(bytes.TrimSpace(raw)) > 0 {
			l := line{at: at, raw: raw}
			if jerr := json.Unmarshal(raw, &l.msg); jerr != nil {
				c.t.Errorf("peer wrote a line that is not JSON: %q", raw)
			}
			c.lines <- l
		}
		if err != nil {
			return
		}
	}
}

// write sends one line and returns the time just before the write began:
// the earliest the peer could have read it.
func (c *rawConn) write(msg []byte) time.Time {
	c.t.Helper()
	at := time.Now()
	if _, err := c.stdin.Write(append(msg, '\n')); err != nil {
		c.t.Fatalf("write to the peer: %v", err)
	}
	return at
}

// request writes a request with a fresh ID and returns the ID's JSON and
// the time the write began. method is JSON (quoted); params is a JSON
// object or empty.
func (c *rawConn) request(method, params string) (id string, sent time.Time) {
	c.t.Helper()
	c.nextID++
	id = strconv.Itoa(c.nextID)
	msg := `{"jsonrpc":"2.0","id":` + id + `,"method":` + method
	if params != "" {
		msg += `,"params":` + params
	}
	return id, c.write([]byte(msg + "}"))
}

// call sends a request and waits for its answer.
func (c *rawConn) call(method, params string) (line, time.Time) {
	c.t.Helper()
	id, sent := c.request(method, params)
	return c.answer(id), sent
}

// next returns the next line read that satisfies ok, dropping the others.
func (c *rawConn) next(what string, ok func(line) bool) line {
	c.t.Helper()
	limit := time.After(waitLimit)
	for {
		select {
		case l, open := <-c.lines:
			if !open {
				c.t.Fatalf("the peer closed stdout while waiting for %s", what)
			}
			if ok(l) {
				return l
			}
		case <-limit:
			c.t.Fatalf("no %s within %s", what, waitLimit)
		}
	}
}

// answer waits for the response to request id.
func (c *rawConn) answer(id string) line {
	c.t.Helper()
	return c.next("answer to "+id, func(l line) bool {
		return l.msg.Method == "" && string(l.msg.ID) == id
	})
}

// probes are the plain requests a round trip can be measured with. In the
// modern era ping is a removed method: both SDKs answer it with -32601 when
// it carries the modern _meta, which is still a full round trip; a bare ping
// (no _meta) is answered with {} by both; server/discover is the modern
// era's own plain request.
func (c *rawConn) probes() map[string][2]string {
	if c.era == legacy {
		return map[string][2]string{"ping": {`"ping"`, ""}}
	}
	return map[string][2]string{
		"ping":      {`"ping"`, `{` + modernMeta + `}}`},
		"bare-ping": {`"ping"`, ""},
		"discover":  {`"server/discover"`, `{` + modernMeta + `}}`},
	}
}

// roundTrip sends one probe and returns the time from the start of the
// write to the reading of its answer.
func (c *rawConn) roundTrip(method, params string) time.Duration {
	c.t.Helper()
	ans, sent := c.call(method, params)
	return ans.at.Sub(sent)
}

// minRoundTrip is the quickest of n round trips of every probe of the era.
func (c *rawConn) minRoundTrip(n int) time.Duration {
	c.t.Helper()
	best := time.Duration(1<<63 - 1)
	for _, p := range c.probes() {
		for range n {
			best = min(best, c.roundTrip(p[0], p[1]))
		}
	}
	return best
}

// cancelTrial is one slow call cancelled at step 1 of 6.
type cancelTrial struct {
	id      string    // the request's ID, also its progress token
	written time.Time // just before the cancel's write began
	answer  line
	delay   time.Duration // answer.at - written
}

// cancelAtFirstStep calls slow, waits for its first progress notification,
// cancels it with notifications/cancelled and waits for the answer.
func (c *rawConn) cancelAtFirstStep() cancelTrial {
	c.t.Helper()
	c.nextID++
	id := strconv.Itoa(c.nextID)
	params := `{"name":"` + sdkpeer.Tool + `","arguments":` + sdkpeer.DefaultArgs + `,`
	if c.era == modern {
		params += modernMeta + `,"progressToken":` + id + `}}`
	} else {
		params += `"_meta":{"progressToken":` + id + `}}`
	}
	c.write([]byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":` + params + `}`))
	c.next("first progress of "+id, func(l line) bool {
		if l.msg.Method == "" && string(l.msg.ID) == id {
			c.t.Fatalf("request %s was answered before its first progress: %s", id, l.raw)
		}
		return l.msg.Method == "notifications/progress" && string(l.msg.Params.ProgressToken) == id
	})
	tr := cancelTrial{id: id}
	tr.written = c.write([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `,"reason":"sdkpeer test"}}`))
	tr.answer = c.answer(id)
	tr.delay = tr.answer.at.Sub(tr.written)
	return tr
}

func (tr cancelTrial) String() string {
	return fmt.Sprintf("answer %.0f µs after the cancel's write began: %s", float64(tr.delay)/1e3, bytes.TrimSpace(tr.answer.raw))
}

func TestMain(m *testing.M) {
	code := m.Run()
	sdkpeer.RemoveBuilt()
	os.Exit(code)
}
