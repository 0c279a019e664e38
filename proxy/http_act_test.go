package proxy

import (
	"fmt"
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
// view tells a key's doing from a --rule's by (ui/feed_act.go noteAct);
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

// heldByKey has the host POST tools/call id (version its era), a key hold
// its response, and waits for it to be held; the channel has what the host
// got, once it has it.
func heldByKey(t *testing.T, v *viewerConn, url, version string, id int64) <-chan string {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		_, b := hostPost(url, version, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"slow"}}`, id))
		got <- b
	}()
	wid := wire.IntID(id)
	v.await("the host's tools/call "+wid.String(), func(r *trace.Record) bool { return r.Dir == trace.DirOut && r.ID != nil && *r.ID == wid })
	if rep := v.command(Command{Act: "hold", ID: &wid}); rep.Code != ReplyDone {
		t.Fatalf("hold refused: %+v", rep)
	}
	v.await("the response to "+wid.String()+" held", injectedOn(wid, PhaseHolding, "holding the response"))
	return got
}

// injectedOn matches an injected line on id, of phase, whose text has part.
func injectedOn(id wire.ID, phase, part string) func(*trace.Record) bool {
	return func(r *trace.Record) bool {
		return r.Event == trace.EventInjected && r.ID != nil && *r.ID == id && r.Code == phase && strings.Contains(r.Text, part)
	}
}

// A response held on HTTP (here by a key) is acted on again as on stdio
// (act.go reactLocked) and as the view offers on a held row: dropped (the
// host never gets it, and nothing is left to release), delayed from now,
// raced against the host's legacy cancel; a cancel (the upstream answered
// already) and a modern race (nothing can cross) are refused with why.
func TestHTTPActAgainOnAHeldResponse(t *testing.T) {
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	up := newJSONUpstream(t, func(string) time.Duration { return 20 * time.Millisecond })
	dir := privateTemp(t)
	rp := startHTTPProxy(t, up.URL, func(o *Options) { o.SocketDir = dir })
	v := attachViewer(t, dir, "demo-http")
	refused := func(c Command, part string) {
		t.Helper()
		if rep := v.command(c); rep.Code != ReplyRefused || !strings.Contains(rep.Text, part) {
			t.Errorf("%s on a held response: %+v, want refused saying %q", c.Act, rep, part)
		}
	}

	// Dropped: the host is left waiting.
	dropped := heldByKey(t, v, rp.url, wire.VersionModern, 1)
	id1 := wire.IntID(1)
	if rep := v.command(Command{Act: "drop", ID: &id1}); rep.Code != ReplyDone {
		t.Errorf("drop on a held response: %+v", rep)
	}
	v.await("the drop", injectedOn(id1, PhaseDropped, "dropped the held response to tools/call slow (id 1) ("+CommandSource+"), held "))
	refused(Command{Act: ActRelease, ID: &id1}, "nothing of request 1 is held")

	// Delayed from now; cancel and a modern race refused.
	delayed := heldByKey(t, v, rp.url, wire.VersionModern, 2)
	id2 := wire.IntID(2)
	refused(Command{Act: "cancel", ID: &id2}, "answered tools/call slow (id 2) already")
	refused(Command{Act: "race", ID: &id2}, "nothing can cross on modern HTTP")
	start := time.Now()
	if rep := v.command(Command{Act: "delay", ID: &id2, After: "150ms"}); rep.Code != ReplyDone {
		t.Errorf("delay on a held response: %+v", rep)
	}
	select {
	case b := <-delayed:
		if took := time.Since(start); !strings.Contains(b, `"result"`) || took < 150*time.Millisecond {
			t.Errorf("the delayed response: %q, %s after the delay; want its answer, 150ms on", b, took)
		}
	case <-time.After(3 * time.Second):
		t.Errorf("the delayed response never came")
	}
	v.await("the delay's release", injectedOn(id2, PhaseReleased, "released the response to tools/call slow (id 2) after 150ms"))

	// Raced against the host's legacy cancel.
	raced := heldByKey(t, v, rp.url, wire.Version20251125, 3)
	id3 := wire.IntID(3)
	if rep := v.command(Command{Act: "race", ID: &id3}); rep.Code != ReplyDone {
		t.Errorf("race on a held legacy response: %+v", rep)
	}
	v.await("the race's hold", injectedOn(id3, PhaseHolding, "until the host cancels it ("+CommandSource+")"))
	hostPost(rp.url, wire.Version20251125, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`)
	v.await("the race's release", injectedOn(id3, PhaseReleased, "the instant the host's cancel arrived"))
	select {
	case b := <-raced:
		if !strings.Contains(b, `"result"`) {
			t.Errorf("the raced response: %q, want its answer", b)
		}
	case <-time.After(3 * time.Second):
		t.Errorf("the raced response never came")
	}

	select {
	case b := <-dropped:
		t.Errorf("the host got a dropped response: %q", b)
	case <-time.After(50 * time.Millisecond):
	}
	rp.stop()
	if b := <-dropped; strings.Contains(b, `"result"`) {
		t.Errorf("the host got the dropped response as the proxy ended: %q", b)
	}
}

// After a legacy host's notifications/cancelled, its request is no longer
// in flight (stdio forgets it): a command on it is refused saying so,
// rather than taken and then quietly skipped (a cancel replied "done" and
// sent nothing).
func TestHTTPActRefusedAfterTheHostCancelled(t *testing.T) {
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	up := newJSONUpstream(t, func(string) time.Duration { return 2 * time.Second })
	dir := privateTemp(t)
	rp := startHTTPProxy(t, up.URL, func(o *Options) { o.SocketDir = dir })
	v := attachViewer(t, dir, "demo-http")
	done := make(chan struct{})
	go func() {
		defer close(done)
		hostPost(rp.url, wire.Version20251125, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"slow"}}`)
	}()
	id := wire.IntID(4)
	v.await("the host's tools/call", func(r *trace.Record) bool { return r.Dir == trace.DirOut && r.ID != nil && *r.ID == id })
	// Recorded and seen by the injector before the upstream answers the POST.
	hostPost(rp.url, wire.Version20251125, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}`)
	for _, act := range []string{"cancel", "hold"} {
		rep := v.command(Command{Act: act, ID: &id})
		if rep.Code != ReplyRefused || !strings.Contains(rep.Text, "tools/call slow (id 4) is not in flight: the host cancelled it") {
			t.Errorf("%s after the host's cancel: %q %q, want refused saying the host cancelled it", act, rep.Code, rep.Text)
		}
	}
	up.mu.Lock()
	n := len(up.cancels)
	up.mu.Unlock()
	if n != 1 {
		t.Errorf("the upstream got %d notifications/cancelled, want the host's one", n)
	}
	rp.stop()
	<-done
}
