package proxy

import (
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
