package floodpeer_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"inflight/internal/testkit/floodpeer"
	"inflight/internal/testkit/testbin"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.RemoveAll()
	os.Exit(code)
}

// served runs Serve on in-process pipes and returns the client's ends.
func served(t *testing.T) (toPeer io.WriteCloser, fromPeer *bufio.Reader) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := floodpeer.Serve(inR, outW)
		_ = outW.CloseWithError(err)
		done <- err
	}()
	t.Cleanup(func() {
		_ = inW.Close()
		_ = outR.Close()
		if err := <-done; err != nil && err != io.ErrClosedPipe {
			t.Errorf("Serve: %v", err)
		}
	})
	return inW, bufio.NewReader(outR)
}

// The flood is the promised lines, in order, then the answer; and Count,
// the minimal client's reading, counts them all.
func TestFloodLinesAndCount(t *testing.T) {
	in, out := served(t)
	if _, err := in.Write(append(floodpeer.Request(3), '\n')); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for range 4 {
		l, err := out.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, l)
	}
	for i, l := range lines[:3] {
		want := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":` +
			strconv.Itoa(i+1) + `,"total":3,"message":"working"}}` + "\n"
		if l != want {
			t.Errorf("line %d = %q, want %q", i+1, l, want)
		}
	}
	if !strings.HasPrefix(lines[3], `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete"`) {
		t.Errorf("the answer = %q", lines[3])
	}

	// A flood larger than one write, read by Count.
	const n = 50_000
	if _, err := in.Write(append(floodpeer.Request(n), '\n')); err != nil {
		t.Fatal(err)
	}
	got, err := floodpeer.Count(out)
	if err != nil || got != n {
		t.Fatalf("Count = %d, %v; want %d", got, err, n)
	}
}

// The set-up of either era gets its answer, so inflight connects in both.
func TestSetUpAnswers(t *testing.T) {
	in, out := served(t)
	// io.Pipe holds nothing: write while the answers are read.
	go func() {
		for _, req := range []string{
			`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`,
			`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`,
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`{"jsonrpc":"2.0","id":3,"method":"ping"}`,
			`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`,
			`{"jsonrpc":"2.0","id":5,"method":"resources/list"}`,
		} {
			if _, err := io.WriteString(in, req+"\n"); err != nil {
				return // the test has failed and closed the pipe
			}
		}
	}()
	want := map[string]string{"1": "supportedVersions", "2": "protocolVersion", "3": `"result":{}`, "4": `"name":"flood"`, "5": "-32601"}
	for range len(want) {
		l, err := out.ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("not JSON: %q", l)
		}
		w, ok := want[string(m.ID)]
		if !ok || !bytes.Contains(l, []byte(w)) {
			t.Errorf("answer %s = %s, want it to contain %q", m.ID, l, w)
		}
		delete(want, string(m.ID))
	}
}

// Count refuses what a checking client refuses.
func TestCountRefuses(t *testing.T) {
	progress := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}` + "\n"
	for name, stream := range map[string]string{
		"not JSON":     progress + `{"jsonrpc":"2.0","method":` + "\n",
		"other token":  `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":2,"progress":1}}` + "\n",
		"error answer": progress + `{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"no"}}` + "\n",
		"no answer":    progress,
	} {
		if n, err := floodpeer.Count(strings.NewReader(stream)); err == nil {
			t.Errorf("%s: Count = %d, nil; want an error", name, n)
		}
	}
}

// The two commands the benchmark runs work together as real processes.
func TestMinimalClientAgainstPeer(t *testing.T) {
	peer := testbin.Build(t, "inflight/internal/testkit/floodpeer/peer")
	minimal := testbin.Build(t, "inflight/internal/testkit/floodpeer/minimal")
	out, err := exec.Command(minimal, "-n", "2000", "--", peer).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "2000" {
		t.Fatalf("minimal: %v\n%s", err, out)
	}
}
