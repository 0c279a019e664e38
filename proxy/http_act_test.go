package proxy

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"inflight/trace"
	"inflight/wire"
)

// TestHTTPActFromTheSocket: the attach socket's commands act on the HTTP
// proxy's host requests as on stdio's, in both eras, without a --rule: a
// hold keeps the upstream's answer from the host (go-sdk's client) until
// the release, a request the host never sent is refused with why, and a
// --read-only HTTP proxy refuses every command.
func TestHTTPActFromTheSocket(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			up, _ := demoInProcess(t)
			dir := privateTemp(t)
			rp := startHTTPProxy(t, up, func(o *Options) { o.SocketDir = dir })
			v := attachViewer(t, dir, "demo-http")
			cs := (&ruleHTTP{runningHTTP: rp}).connect(t, era.version)

			type outcome struct {
				took time.Duration
				err  error
			}
			done := make(chan outcome, 1)
			go func() {
				_, took, err := callTool(cs, "slow", 0.2, 2, 20*time.Second)
				done <- outcome{took, err}
			}()
			sent := v.await("the host's tools/call", func(r *trace.Record) bool {
				return r.Dir == trace.DirOut && r.ID != nil && strings.Contains(string(r.Msg), `"slow"`)
			})
			id := *sent.ID
			if rep := v.command(Command{Act: "hold", ID: &id}); rep.Code != ReplyDone {
				t.Fatalf("hold refused: %+v", rep)
			}
			v.await("the holding line", func(r *trace.Record) bool {
				return r.Event == trace.EventInjected && r.Code == PhaseHolding
			})
			select {
			case o := <-done:
				t.Fatalf("the host's call ended while held: %+v", o)
			case <-time.After(300 * time.Millisecond):
			}
			if rep := v.command(Command{Act: "release", ID: &id}); rep.Code != ReplyDone {
				t.Fatalf("release refused: %+v", rep)
			}
			o := <-done
			if o.err != nil {
				t.Fatalf("the released call failed: %v", o.err)
			}
			if o.took < 500*time.Millisecond {
				t.Errorf("the call took %s: the hold (over 300ms past a 200ms tool) did not hold it", o.took)
			}
			unknown := wire.IntID(99)
			if rep := v.command(Command{Act: "hold", ID: &unknown}); rep.Code != ReplyRefused || !strings.Contains(rep.Text, "99") {
				t.Errorf("a hold of an ID never sent: %+v", rep)
			}
		})
	}
	t.Run("read-only", func(t *testing.T) {
		up, _ := demoInProcess(t)
		dir := privateTemp(t)
		startHTTPProxy(t, up, func(o *Options) { o.SocketDir = dir; o.ReadOnly = true })
		v := attachViewer(t, dir, "demo-http")
		id := wire.IntID(1)
		if rep := v.command(Command{Act: "hold", ID: &id}); rep.Code != ReplyRefused || !strings.Contains(rep.Text, "read-only") {
			t.Errorf("a read-only HTTP proxy took a command: %+v", rep)
		}
	})
}

// The HTTP proxy's acting line for a key's action is worded as stdio's:
// "hold on … (a key in inflight attach), …", the bracketed source that the
// view tells a key's doing from a --rule's by (ui/attach_act.go noteAct);
// it never calls the key a rule.
func TestHTTPActingLineNamesTheKey(t *testing.T) {
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	up := newJSONUpstream(t, func(string) time.Duration { return 400 * time.Millisecond })
	dir := privateTemp(t)
	rp := startHTTPProxy(t, up.URL, func(o *Options) { o.SocketDir = dir })
	v := attachViewer(t, dir, "demo-http")
	go hostPost(rp.url, "2025-11-25", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow"}}`)
	v.await("the host's tools/call", func(r *trace.Record) bool { return r.Dir == trace.DirOut && r.ID != nil })
	id := wire.IntID(7)
	if rep := v.command(Command{Act: "hold", ID: &id}); rep.Code != ReplyDone {
		t.Fatalf("hold refused: %+v", rep)
	}
	acting := v.await("the acting line", func(r *trace.Record) bool { return r.Event == trace.EventInjected && r.Code == PhaseActing })
	if !strings.HasPrefix(acting.Text, "hold on tools/call slow (id 7) ("+CommandSource+"), ") || strings.Contains(acting.Text, `rule "`) {
		t.Errorf("the HTTP acting line: %q; stdio's names the key as \"(%s)\", which the view looks for", acting.Text, CommandSource)
	}
	rp.stop() // the held answer goes to the host as the proxy ends
}

// hostPost posts a host's message and reads its answer (for goroutines:
// no t).
func hostPost(url, version, body string) (int, string) {
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", version)
	req.Header.Set("Mcp-Session-Id", "s-1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
