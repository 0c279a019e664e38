package ui

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"inflight/client"
	"inflight/redact"
	"inflight/session"
	"inflight/trace"
	"inflight/wire"
)

// echoSecret is the credential the user configured; echoSpellings are the
// ways a server may spell it back in JSON (as written, PHP's escaped "/",
// \u for non-ASCII, \u for plain letters).
const echoSecret = "sk/ab+cdä1A"

var echoSpellings = []string{
	`sk/ab+cdä1A`,
	`sk\/ab+cdä1A`,
	`sk\/ab+cd\u00e41A`,
	`sk\/ab+cd\u00E41\u0041`,
	`\u0073\u006b\u002f\u0061\u0062\u002b\u0063\u0064\u00e4\u0031\u0041`,
}

// leaks reports which spelling of the secret s holds.
func leaks(s string) string {
	for _, sp := range append(echoSpellings, "ab+cd") {
		if strings.Contains(s, sp) {
			return sp
		}
	}
	return ""
}

// serveEcho is a stdio MCP server of ours that echoes the client's
// credential back, spelled a different way for each tools/call, in its
// result and in a log notification.
func serveEcho() (stop func(), pipes *client.Pipes) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		send := func(s string) { _, _ = io.WriteString(outW, s+"\n") }
		calls := 0
		sc := bufio.NewScanner(inR)
		for sc.Scan() {
			msg, err := wire.Decode(sc.Bytes())
			if err != nil || msg.Kind != wire.KindRequest {
				continue
			}
			id := msg.ID.Raw()
			switch msg.Method {
			case wire.MethodDiscover:
				send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","supportedVersions":[%q],"capabilities":{"tools":{}},"_meta":{%q:{"name":"echo","version":"1"}}}}`,
					id, wire.VersionModern, wire.MetaServerInfo))
			case wire.MethodToolsList:
				send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}`, id))
			case wire.MethodToolsCall:
				sp := echoSpellings[calls%len(echoSpellings)]
				calls++
				send(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"saw ` + sp + `"}}`)
				send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","content":[{"type":"text","text":"you sent %s"}],"path":"a\/b"}}`, id, sp))
			default:
				send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, id))
			}
		}
	}()
	return func() {
		inR.CloseWithError(io.ErrClosedPipe)
		outW.Close()
		<-done
	}, &client.Pipes{Stdin: inW, Stdout: outR}
}

// Issue 14 item 3: a server that echoes the user's credential escaped
// differently from Go got it into the protocol log, the detail view and
// exports, because messages are kept byte for byte. Whatever the spelling,
// the bytes the session keeps are redacted, so no view and no export shows
// it — with the redactor's own byte function, and with only the string
// function the TUI is given today.
func TestEchoedSecretInEverySpelling(t *testing.T) {
	h := http.Header{}
	h.Set("Authorization", "Bearer "+echoSecret)
	red := redact.New(h, nil, "")
	for _, withBytes := range []bool{true, false} {
		t.Run(fmt.Sprintf("RedactBytes=%v", withBytes), func(t *testing.T) {
			var mu sync.Mutex
			var stops []func()
			t.Cleanup(func() {
				mu.Lock()
				defer mu.Unlock()
				for _, s := range stops {
					s()
				}
			})
			d := &liveDialer{newCfg: func() (client.Config, error) {
				stop, pipes := serveEcho()
				mu.Lock()
				stops = append(stops, stop)
				mu.Unlock()
				return client.Config{Pipes: pipes}, nil
			}}
			var exported bytes.Buffer
			exportDone := make(chan struct{}, 1)
			l := newLiveWith(t, d, session.DefaultConfig(), func(o *Options) {
				o.Redact = red.String
				if withBytes {
					o.RedactBytes = red.Bytes
				}
				// Written with no redactor at all: what the session
				// keeps must already be redacted.
				o.Export = func(path string, snap Snapshot) (string, error) {
					err := trace.WriteEntries(&exported, snap.Entries, snap.Dropped, snap.Start, nil)
					exportDone <- struct{}{}
					return path, err
				}
			})
			l.connected()
			var reqs []*session.Request
			for range echoSpellings {
				reqs = append(reqs, l.callToolNamed("echo"))
				l.settled(10 * time.Second)
			}
			var screens strings.Builder
			screens.WriteString(l.screen())
			for _, r := range reqs {
				if raw, _ := l.m.tracker.RawResponse(r.ID); leaks(string(raw)) != "" {
					t.Errorf("#%s: the stored response holds %q: %s", r.ID, leaks(string(raw)), raw)
				}
				screens.WriteString(l.detail(r))
			}
			lg := l.m.tracker.Log()
			for i := 0; i < lg.Len(); i++ {
				if e := lg.At(i); leaks(string(e.Raw)) != "" {
					t.Errorf("log entry %d holds %q: %s", i, leaks(string(e.Raw)), e.Raw)
				}
			}
			l.key("l", "home")
			for i := 0; i < lg.Len(); i++ {
				l.key("enter")
				screens.WriteString(l.screen())
				l.key("esc", "down")
			}
			l.key("esc")
			if sp := leaks(screens.String()); sp != "" {
				t.Errorf("a screen shows %q:\n%s", sp, screens.String())
			}
			if !strings.Contains(screens.String(), "you sent "+redact.Placeholder) {
				t.Errorf("no screen shows the redacted echo")
			}
			l.key("e")
			l.until("the export", 10*time.Second, func() bool {
				select {
				case <-exportDone:
					return true
				default:
					return false
				}
			})
			if sp := leaks(exported.String()); sp != "" || !strings.Contains(exported.String(), redact.Placeholder) {
				t.Errorf("the export holds %q:\n%s", sp, exported.String())
			}
			// The rest of each message is what the server wrote.
			if !strings.Contains(exported.String(), `"path":"a\/b"`) {
				t.Errorf("the export re-encoded the messages:\n%s", exported.String())
			}
			l.quitCleanly()
		})
	}
}

// callToolNamed sends a tool with no arguments the way a person does.
func (l *liveHarness) callToolNamed(name string) *session.Request {
	l.t.Helper()
	n := l.m.tracker.Len()
	l.key("n", "enter", "enter")
	if l.m.tracker.Len() != n+1 {
		l.t.Fatalf("the composer did not send:\n%s", l.screen())
	}
	r := l.m.tracker.At(l.m.tracker.Len() - 1)
	if r.Target != name {
		l.t.Fatalf("sent %s %s", r.Method, r.Target)
	}
	return r
}
