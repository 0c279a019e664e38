package hostile

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"inflight/wire"
)

func TestMain(m *testing.M) {
	RunFromEnv()
	goleak.VerifyTestMain(m)
}

// Every stdio peer gets a client through the set-up of either era before
// it misbehaves, and Stop leaves nothing running.
func TestStdioPeersConnect(t *testing.T) {
	for _, p := range StdioPeers() {
		t.Run(p.Name, func(t *testing.T) {
			t.Parallel()
			sv := Serve(p)
			defer sv.Stop()
			lines := make(chan string, 16)
			go func() {
				defer close(lines)
				sc := bufio.NewScanner(sv.Stdout)
				sc.Buffer(make([]byte, 64<<10), 64<<10)
				for sc.Scan() {
					lines <- sc.Text()
				}
			}()
			ask := func(id int64, method string) wire.Message {
				t.Helper()
				if _, err := sv.Stdin.Write(append(wire.Request(wire.IntID(id), method, nil), '\n')); err != nil {
					t.Fatalf("write %s: %v", method, err)
				}
				timeout := time.After(5 * time.Second)
				for {
					select {
					case l, ok := <-lines:
						if !ok {
							t.Fatalf("stdout ended before the answer to %s", method)
						}
						m, err := wire.Decode([]byte(l))
						if err == nil && m.IsResponse() && m.ID == wire.IntID(id) && !strings.Contains(l, "before it was asked") {
							return m
						}
					case <-timeout:
						t.Fatalf("no answer to %s", method)
					}
				}
			}
			if m := ask(100, wire.MethodDiscover); m.Kind != wire.KindResult || !bytes.Contains(m.Result, []byte(wire.VersionModern)) {
				t.Errorf("server/discover: %+v", m)
			}
			if m := ask(101, wire.MethodInitialize); m.Kind != wire.KindResult || !bytes.Contains(m.Result, []byte(wire.Version20251125)) {
				t.Errorf("initialize: %+v", m)
			}
			if m := ask(102, wire.MethodToolsList); m.Kind != wire.KindResult || !bytes.Contains(m.Result, []byte(`"`+ToolName+`"`)) {
				t.Errorf("tools/list: %+v", m)
			}
			sv.Stop()
			sv.Stdout.Close()
			for range lines {
			}
			if got := sv.Session.Received(); len(got) != 3 {
				t.Errorf("received %d lines, want 3: %q", len(got), got)
			}
		})
	}
}

// The bomb is small on the wire and huge inflated.
func TestGzipBomb(t *testing.T) {
	b := gzipBomb()
	if len(b) > 4<<20 {
		t.Fatalf("the bomb is %d bytes on the wire; it should be small", len(b))
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	// Inflating one member is enough to see the ratio; the members repeat.
	zr.Multistream(false)
	n, err := io.Copy(io.Discard, zr)
	if err != nil || n != 4<<20 {
		t.Fatalf("one member inflates to %d bytes (%v)", n, err)
	}
	if members := GzipBombSize / n; int64(len(b))/members*members != int64(len(b)) {
		t.Fatalf("%d bytes are not %d whole members", len(b), members)
	}
}

// An HTTP peer connects in either era and counts the calls it got.
func TestHTTPPeerSetUp(t *testing.T) {
	p := Plain()
	ts := NewServer(p, false)
	defer ts.Close()
	post := func(method string) *http.Response {
		t.Helper()
		resp, err := http.Post(ts.URL, "application/json", bytes.NewReader(wire.Request(wire.IntID(1), method, nil)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	if resp := post(wire.MethodInitialize); resp.Header.Get("Mcp-Session-Id") != SessionID {
		t.Errorf("initialize gave no session: %v", resp.Header)
	}
	post(wire.MethodToolsCall)
	if p.Calls() != 1 || p.Posts() != 2 {
		t.Errorf("calls %d posts %d", p.Calls(), p.Posts())
	}
	http.DefaultClient.CloseIdleConnections()
}
