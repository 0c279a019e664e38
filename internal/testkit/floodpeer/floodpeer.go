// Package floodpeer is the raw stdio peer of issue 9's speed benchmark: a
// server that is never the slow side. Asked to call its tool flood with
// {"count": N}, it writes N notifications/progress lines carrying the
// request's progress token, generated into large buffers by appending bytes
// to a prebuilt prefix and suffix, as fast as the pipe takes them, then the
// result. It answers the set-up of either era (server/discover, initialize,
// ping) and nothing else, and uses nothing of inflight, so the benchmark
// that runs `inflight call` against it measures the client alone.
//
// Count is the other side: what a minimal client does with the stream (read
// each line, check it is JSON with the right token, count it), the floor
// any client could reach. The commands peer/ and minimal/ wrap Serve and
// Count for the benchmark, which builds them with Build.
package floodpeer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Tool is the one tool the peer serves; its arguments are {"count": N}.
const Tool = "flood"

// DefaultCount is the number of notifications when the arguments give none.
const DefaultCount = 1000

// chunkSize is how many bytes the peer gathers before each write: large
// enough that a write is a handful of system calls per thousand lines.
const chunkSize = 1 << 20

// request is the part of a client's message the peer reads.
type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name      string `json:"name"`
		Arguments struct {
			Count *int `json:"count"`
		} `json:"arguments"`
		Meta struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	} `json:"params"`
}

// The set-up answers of either era.
const (
	discoverResult   = `{"resultType":"complete","supportedVersions":["2026-07-28","2025-11-25"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"floodpeer","version":"1"}}}`
	initializeResult = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"floodpeer","version":"1"}}`
	toolsListResult  = `{"resultType":"complete","tools":[{"name":"flood","description":"Sends count progress notifications as fast as the pipe takes them, then answers.","inputSchema":{"type":"object","properties":{"count":{"type":"integer","minimum":0}}}}]}`
	floodResult      = `{"resultType":"complete","content":[{"type":"text","text":"flooded"}]}`
)

// Serve answers the client's messages from in on out until in ends. A
// flood is written from the read loop: the peer serves one client that
// waits for it, and a second request simply waits its turn.
func Serve(in io.Reader, out io.Writer) error {
	br := bufio.NewReaderSize(in, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if line = bytes.TrimSpace(line); len(line) > 0 {
			if werr := handle(line, out); werr != nil {
				return werr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func handle(line []byte, out io.Writer) error {
	var req request
	if json.Unmarshal(line, &req) != nil || len(req.ID) == 0 || req.Method == "" {
		return nil // a notification (cancelled, initialized) or garbage: nothing to answer
	}
	switch req.Method {
	case "server/discover":
		return reply(out, req.ID, discoverResult)
	case "initialize":
		return reply(out, req.ID, initializeResult)
	case "ping":
		return reply(out, req.ID, `{}`)
	case "tools/list":
		return reply(out, req.ID, toolsListResult)
	case "tools/call":
		if req.Params.Name != Tool {
			return replyError(out, req.ID, -32602, "unknown tool")
		}
		n := DefaultCount
		if c := req.Params.Arguments.Count; c != nil {
			n = *c
		}
		if n < 0 {
			return replyError(out, req.ID, -32602, "count must not be negative")
		}
		if tok := req.Params.Meta.ProgressToken; len(tok) > 0 {
			if err := Flood(out, tok, n); err != nil {
				return err
			}
		}
		return reply(out, req.ID, floodResult)
	}
	return replyError(out, req.ID, -32601, "method not found")
}

func reply(out io.Writer, id json.RawMessage, result string) error {
	_, err := fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", id, result)
	return err
}

func replyError(out io.Writer, id json.RawMessage, code int, msg string) error {
	_, err := fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q}}`+"\n", id, code, msg)
	return err
}

// Flood writes n progress notifications for token (its JSON, e.g. `1` or
// `"a"`), progress 1 … n of total n, in writes of about chunkSize bytes.
// Generating a line is appending a number between two prebuilt byte
// strings, some tens of nanoseconds, far below what any client spends
// reading one (BenchmarkFloodPeer measures it).
func Flood(out io.Writer, token []byte, n int) error {
	prefix, suffix := lineParts(token, n)
	buf := make([]byte, 0, chunkSize+len(prefix)+len(suffix)+20)
	for i := 1; i <= n; i++ {
		buf = append(buf, prefix...)
		buf = strconv.AppendInt(buf, int64(i), 10)
		buf = append(buf, suffix...)
		if len(buf) >= chunkSize || i == n {
			if _, err := out.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	return nil
}

// lineParts are what comes before and after the progress number on each
// line: the same bytes inflight's own client benchmark sends.
func lineParts(token []byte, n int) (prefix, suffix []byte) {
	prefix = []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":` + string(token) + `,"progress":`)
	suffix = []byte(`,"total":` + strconv.Itoa(n) + `,"message":"working"}}` + "\n")
	return prefix, suffix
}

// Request is the tools/call a client sends for a flood of n notifications,
// with ID and progress token 1 and the modern era's _meta, without the
// newline.
func Request(n int) []byte {
	return []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flood","arguments":{"count":` + strconv.Itoa(n) +
		`},"_meta":{"progressToken":1,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"floodpeer-minimal","version":"1"}}}}`)
}

// Count is the minimal client's reading of the answer to Request: every
// line until the response with ID 1 must be valid JSON (json.Valid) and a
// progress notification for token 1; it returns how many there were. It is
// the least work a client that checks what it reads can do, and the floor
// `inflight call` is measured against.
func Count(r io.Reader) (int, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	method := []byte(`"method":"notifications/progress"`)
	tokenField := []byte(`"progressToken":1,`)
	answer := []byte(`"id":1,`)
	n := 0
	for sc.Scan() {
		line := sc.Bytes()
		if !json.Valid(line) {
			return n, fmt.Errorf("line %d is not JSON: %.80q", n+1, line)
		}
		if bytes.Contains(line, tokenField) && bytes.Contains(line, method) {
			n++
			continue
		}
		if bytes.Contains(line, answer) {
			if bytes.Contains(line, []byte(`"error":`)) {
				return n, fmt.Errorf("the peer answered with an error: %.200s", line)
			}
			return n, nil
		}
		return n, fmt.Errorf("line %d is neither progress for token 1 nor the answer: %.80q", n+1, line)
	}
	if err := sc.Err(); err != nil {
		return n, err
	}
	return n, errors.New("the peer's output ended before its answer")
}
