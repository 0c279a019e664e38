package client_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"inflight/client"
	"inflight/event"
	"inflight/session"
	"inflight/wire"
)

// stdioPeer is a hand-written stdio server for tests of misbehaviour no
// real SDK produces: it records every line the client writes, hands each
// decoded message to handle (in its reader goroutine), and writes whatever
// the test tells it to.
type stdioPeer struct {
	out    *io.PipeWriter // to the client's stdout
	in     *io.PipeReader // from the client's stdin
	handle func(p *stdioPeer, m wire.Message)

	wmu sync.Mutex

	mu      sync.Mutex
	lines   []string
	changed chan struct{}
	done    chan struct{}
}

// newStdioPeer starts a peer and returns the pipes a client connects to.
func newStdioPeer(t testing.TB, handle func(p *stdioPeer, m wire.Message)) (*stdioPeer, *client.Pipes) {
	t.Helper()
	fromServer, toClient := io.Pipe()
	fromClient, toServer := io.Pipe()
	p := &stdioPeer{out: toClient, in: fromClient, handle: handle, changed: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		br := bufio.NewReaderSize(fromClient, 1<<16)
		for {
			line, err := br.ReadString('\n')
			if line != "" {
				line = strings.TrimRight(line, "\n")
				p.mu.Lock()
				p.lines = append(p.lines, line)
				close(p.changed)
				p.changed = make(chan struct{})
				p.mu.Unlock()
				if m, derr := wire.Decode([]byte(line)); derr == nil && p.handle != nil {
					p.handle(p, m)
				}
			}
			if err != nil {
				// Like a server process, exit at stdin EOF: the client
				// sees its stdout close.
				toClient.Close()
				return
			}
		}
	}()
	t.Cleanup(func() {
		toClient.Close()
		fromClient.Close()
		<-p.done
		fromServer.Close()
	})
	return p, &client.Pipes{Stdin: toServer, Stdout: fromServer}
}

// send writes one line (a newline is added) to the client.
func (p *stdioPeer) send(line string) {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	_, _ = io.WriteString(p.out, line+"\n")
}

func (p *stdioPeer) sendRaw(b []byte) {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	_, _ = p.out.Write(b)
}

func (p *stdioPeer) all() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.lines...)
}

// wait returns the first line the client wrote that contains substr.
func (p *stdioPeer) wait(t testing.TB, substr string) string {
	t.Helper()
	deadline := time.NewTimer(waitLimit)
	defer deadline.Stop()
	for {
		p.mu.Lock()
		for _, l := range p.lines {
			if strings.Contains(l, substr) {
				p.mu.Unlock()
				return l
			}
		}
		changed := p.changed
		p.mu.Unlock()
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("the client never wrote a line containing %q; it wrote:\n%s", substr, strings.Join(p.all(), "\n"))
		}
	}
}

// legacyHandshake answers like a legacy server: server/discover is an
// unknown method, initialize succeeds.
func legacyHandshake(p *stdioPeer, m wire.Message) {
	switch m.Method {
	case wire.MethodDiscover:
		p.send(string(wire.ErrorResponse(m.ID, wire.CodeMethodNotFound, "Method not found")))
	case wire.MethodInitialize:
		p.send(string(wire.ResultResponse(m.ID, json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"peer","version":"1"}}`))))
	}
}

// legacyPeer is a connected legacy client/peer pair.
func legacyPeer(t *testing.T, cfg client.Config) (*client.Client, *recorder, *stdioPeer) {
	t.Helper()
	p, pipes := newStdioPeer(t, legacyHandshake)
	cfg.Pipes = pipes
	c, rec, info := connectClient(t, cfg)
	if info.Era != event.EraLegacy {
		t.Fatalf("era %s, want legacy", info.Era)
	}
	return c, rec, p
}

func TestStdioGarbageLines(t *testing.T) {
	c, rec, p := legacyPeer(t, client.Config{})
	id := send(t, c, 1, wire.MethodToolsList, nil)
	p.wait(t, `"tools/list"`)
	bad := []string{
		"this is not json",
		"{broken",
		`[{"jsonrpc":"2.0","method":"x"}]`,
		`{"jsonrpc":"1.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":1}`,
		"\x00\x01\x02 binary",
		`"just a string"`,
	}
	from := rec.len()
	for _, l := range bad {
		p.send(l)
	}
	p.send(`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`)
	rec.waitFrom(t, from, "the response after the garbage", responseTo(id))
	var malformed []event.Event
	for _, ev := range rec.all()[from:] {
		if ev.Kind == event.Malformed {
			malformed = append(malformed, ev)
		}
	}
	if len(malformed) != len(bad) {
		t.Fatalf("%d malformed events, want %d:\n%s", len(malformed), len(bad), rec.dump())
	}
	for i, ev := range malformed {
		if string(ev.Raw) != bad[i] || ev.Err == nil {
			t.Errorf("malformed %d: raw %q err %v; want %q with a reason", i, ev.Raw, ev.Err, bad[i])
		}
	}
	if rec.count(kind(event.TransportClosed)) != 0 {
		t.Errorf("garbage closed the connection")
	}
	// The tracker records them as violations, by kind.
	tr := session.NewTracker(session.Config{})
	for _, ev := range rec.all() {
		tr.Apply(ev)
	}
	if tr.Violations().Len() < len(bad) {
		t.Errorf("tracker recorded %d violations, want at least %d", tr.Violations().Len(), len(bad))
	}
}

func TestStdioHugeMessage(t *testing.T) {
	c, rec, p := legacyPeer(t, client.Config{})
	id := send(t, c, 1, wire.MethodResourcesRead, json.RawMessage(`{"uri":"big://"}`))
	p.wait(t, `"resources/read"`)
	text := strings.Repeat("x", 10<<20)
	line := `{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"big://","text":"` + text + `"}]}}`
	go p.send(line)
	ev := rec.wait(t, "the 10 MB response", responseTo(id))
	if len(ev.Raw) != len(line) || !json.Valid(ev.Msg.Result) {
		t.Errorf("10 MB response: raw %d bytes, want %d", len(ev.Raw), len(line))
	}
}

func TestStdioLineOverLimit(t *testing.T) {
	const limit = 64 << 10
	c, rec, p := legacyPeer(t, client.Config{MaxMessageBytes: limit})
	id := send(t, c, 1, wire.MethodToolsList, nil)
	p.wait(t, `"tools/list"`)
	from := rec.len()
	long := `{"jsonrpc":"2.0","id":1,"result":{"junk":"` + strings.Repeat("y", 3*limit) + `"}}`
	go func() {
		p.send(long)
		p.send(`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`)
	}()
	bad := rec.waitFrom(t, from, "the oversized line reported", kind(event.Malformed))
	if bad.Err == nil || !strings.Contains(bad.Err.Error(), "exceeds") {
		t.Errorf("oversized line error %v", bad.Err)
	}
	// The line's bytes, not its terminator, are what was kept and dropped.
	if len(bad.Raw)+bad.Truncated != len(long) || len(bad.Raw) > event.MaxRawKept {
		t.Errorf("kept %d + truncated %d, want %d in all and at most %d kept", len(bad.Raw), bad.Truncated, len(long), event.MaxRawKept)
	}
	ev := rec.waitFrom(t, from, "the next line", responseTo(id))
	if !strings.Contains(string(ev.Raw), `"tools":[]`) {
		t.Errorf("the line after the oversized one: %s", ev.Raw)
	}
}

func TestStdioUnknownAndWrongIDs(t *testing.T) {
	c, rec, p := legacyPeer(t, client.Config{})
	tr := session.NewTracker(session.Config{})
	fd := &feeder{tr: tr, rec: rec}
	// A response before its request was ever sent.
	p.send(`{"jsonrpc":"2.0","id":2,"result":{"early":true}}`)
	rec.wait(t, "the early response", responseTo(wire.IntID(2)))

	tr.Begin(wire.MethodToolsList, nil, session.RequestOptions{}, time.Now())
	id := send(t, c, 1, wire.MethodToolsList, nil)
	p.wait(t, `"tools/list"`)
	p.send(`{"jsonrpc":"2.0","id":"1","result":{}}`)    // a string, not the integer 1
	p.send(`{"jsonrpc":"2.0","id":77,"result":{}}`)     // never issued
	p.send(`{"jsonrpc":"2.0","id":1.0,"result":{}}`)    // 1.0 is another ID than the 1 sent (issue 14, item 11)
	p.send(`{"jsonrpc":"2.0","id":1,"result":{"x":1}}`) // the answer
	p.send(`{"jsonrpc":"2.0","id":1,"result":{"x":2}}`) // a duplicate
	rec.wait(t, "the duplicate", func(ev event.Event) bool {
		return ev.Kind == event.Received && strings.Contains(string(ev.Raw), `"x":2`)
	})
	rec.wait(t, "the unknown ID", responseTo(wire.IntID(77)))
	rec.wait(t, "the string ID", responseTo(wire.StringID("1")))
	// After the 2 arrived unasked, 2 can still be sent.
	tr.Begin(wire.MethodToolsList, nil, session.RequestOptions{}, time.Now())
	send(t, c, 2, wire.MethodToolsList, nil)
	fd.feed()
	if r, _ := tr.Get(id); r.State != session.StateCompleted {
		t.Errorf("request 1 is %s, want completed by the response with the ID 1", r.State)
	}
	codes := tr.Violations().Counts()
	if codes[session.ViolationUnknownResponseID] < 3 || codes[session.ViolationDuplicateResponse] != 1 {
		t.Errorf("violations %v, want unknown IDs (early 2, \"1\", 77, 1.0) and one duplicate", codes)
	}
	if rec.count(kind(event.TransportClosed)) != 0 {
		t.Errorf("wrong IDs closed the connection")
	}
}

// TestStdioDetection covers every outcome of the server/discover probe.
func TestStdioDetection(t *testing.T) {
	modernResult := `{"supportedVersions":["2026-07-28"],"capabilities":{},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"m","version":"2"}}}`
	initResult := func(v string) json.RawMessage {
		return json.RawMessage(`{"protocolVersion":"` + v + `","capabilities":{},"serverInfo":{"name":"l","version":"1"}}`)
	}
	tests := []struct {
		name     string
		forced   string
		discover func(p *stdioPeer, m wire.Message) // nil: stay silent
		era      event.Era
		version  string
		wantErr  string
	}{
		{name: "discover result", era: event.EraModern, version: wire.VersionModern,
			discover: func(p *stdioPeer, m wire.Message) {
				p.send(string(wire.ResultResponse(m.ID, json.RawMessage(modernResult))))
			}},
		{name: "method not found", era: event.EraLegacy, version: wire.Version20251125,
			discover: func(p *stdioPeer, m wire.Message) {
				p.send(string(wire.ErrorResponse(m.ID, wire.CodeMethodNotFound, "nope")))
			}},
		{name: "invalid params", era: event.EraLegacy, version: wire.Version20251125,
			discover: func(p *stdioPeer, m wire.Message) {
				p.send(string(wire.ErrorResponse(m.ID, wire.CodeInvalidParams, "not initialized")))
			}},
		{name: "silence", era: event.EraLegacy, version: wire.Version20251125},
		{name: "success that is not a discover result", era: event.EraLegacy, version: wire.Version20251125,
			discover: func(p *stdioPeer, m wire.Message) { p.send(string(wire.ResultResponse(m.ID, json.RawMessage(`{}`)))) }},
		{name: "unsupported version lists a legacy one", era: event.EraLegacy, version: wire.Version20250618,
			discover: func(p *stdioPeer, m wire.Message) {
				p.send(`{"jsonrpc":"2.0","id":` + m.ID.Raw() + `,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2025-06-18"],"requested":"2026-07-28"}}}`)
			}},
		{name: "discover lists only legacy versions", era: event.EraLegacy, version: wire.Version20250618,
			discover: func(p *stdioPeer, m wire.Message) {
				p.send(string(wire.ResultResponse(m.ID, json.RawMessage(`{"supportedVersions":["2025-06-18"],"capabilities":{}}`))))
			}},
		{name: "other modern error is not a fallback", wantErr: "modern server rejected",
			discover: func(p *stdioPeer, m wire.Message) {
				p.send(string(wire.ErrorResponse(m.ID, wire.CodeMissingClientCapability, "missing capability")))
			}},
		{name: "forced modern against a legacy server", forced: wire.VersionModern, wantErr: "forced",
			discover: func(p *stdioPeer, m wire.Message) {
				p.send(string(wire.ErrorResponse(m.ID, wire.CodeMethodNotFound, "nope")))
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var initVersion string
			p, pipes := newStdioPeer(t, func(p *stdioPeer, m wire.Message) {
				switch m.Method {
				case wire.MethodDiscover:
					if tc.discover != nil {
						tc.discover(p, m)
					}
				case wire.MethodInitialize:
					var params struct {
						ProtocolVersion string `json:"protocolVersion"`
					}
					_ = json.Unmarshal(m.Params, &params)
					initVersion = params.ProtocolVersion
					p.send(string(wire.ResultResponse(m.ID, initResult(params.ProtocolVersion))))
				}
			})
			c, rec := newClient(t, client.Config{Pipes: pipes, ProtocolVersion: tc.forced, ProbeTimeout: 200 * time.Millisecond})
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
			defer cancel()
			info, err := c.Connect(ctx)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Connect = %+v, %v; want an error containing %q", info, err, tc.wantErr)
				}
				for _, l := range p.all() {
					if strings.Contains(l, `"initialize"`) {
						t.Errorf("fell back to initialize: %s", l)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Connect: %v\n%s", err, rec.dump())
			}
			if info.Era != tc.era || info.ProtocolVersion != tc.version {
				t.Errorf("era %s version %s, want %s %s", info.Era, info.ProtocolVersion, tc.era, tc.version)
			}
			if tc.era == event.EraLegacy {
				p.wait(t, wire.NotifyInitialized)
				if initVersion != tc.version {
					t.Errorf("initialize asked for %s, want %s", initVersion, tc.version)
				}
			}
			// The probe and the handshake are the client's own business.
			for _, ev := range rec.all() {
				if (ev.Kind == event.Sent || ev.Kind == event.Received) && !ev.Internal {
					t.Errorf("handshake event not internal: %s", describeEvent(ev))
				}
			}
		})
	}
}

// TestStdioServerRequests covers what a legacy server may ask of the client.
func TestStdioServerRequests(t *testing.T) {
	t.Run("refused without a handler", func(t *testing.T) {
		_, rec, p := legacyPeer(t, client.Config{})
		p.send(`{"jsonrpc":"2.0","id":"s1","method":"ping"}`)
		p.send(`{"jsonrpc":"2.0","id":"s2","method":"roots/list"}`)
		p.send(`{"jsonrpc":"2.0","id":"s3","method":"sampling/createMessage","params":{}}`)
		p.send(`{"jsonrpc":"2.0","id":"s4","method":"elicitation/create","params":{}}`)
		pong, err := wire.Decode([]byte(p.wait(t, `"id":"s1"`)))
		if err != nil || pong.Kind != wire.KindResult || string(pong.Result) != "{}" {
			t.Errorf("ping answer %+v, %v; want an empty result", pong, err)
		}
		for _, id := range []string{"s2", "s3", "s4"} {
			m, err := wire.Decode([]byte(p.wait(t, `"id":"`+id+`"`)))
			if err != nil || m.Kind != wire.KindError || m.Error.Code != wire.CodeMethodNotFound || !strings.Contains(m.Error.Message, "inflight does not handle") {
				t.Errorf("answer to %s: %+v %v; want a clear method-not-found error", id, m, err)
			}
		}
		// All of it is in the log, marked as the client's own traffic.
		for _, id := range []string{"s1", "s2", "s3", "s4"} {
			rid := wire.StringID(id)
			rec.wait(t, "the server's request "+id, func(ev event.Event) bool {
				return ev.Kind == event.Received && ev.Msg.Kind == wire.KindRequest && ev.RequestID == rid && ev.Internal
			})
			rec.wait(t, "the answer to "+id, func(ev event.Event) bool {
				return ev.Kind == event.Sent && ev.RequestID == rid && ev.Internal
			})
		}
	})
	t.Run("handler", func(t *testing.T) {
		started := make(chan string, 4)
		released := make(chan error, 4)
		handler := func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, *wire.Error) {
			started <- method
			if method == wire.MethodRootsList {
				return json.RawMessage(`{"roots":[{"uri":"file:///tmp"}]}`), nil
			}
			if method == wire.MethodElicitationCreate {
				return nil, &wire.Error{Code: -1, Message: "user declined"}
			}
			// sampling: wait to be cancelled by the server.
			<-ctx.Done()
			released <- ctx.Err()
			return json.RawMessage(`{"should":"never be sent"}`), nil
		}
		_, rec, p := legacyPeer(t, client.Config{ServerRequests: handler})
		p.send(`{"jsonrpc":"2.0","id":1,"method":"roots/list"}`)
		m, _ := wire.Decode([]byte(p.wait(t, `"roots"`)))
		if m.Kind != wire.KindResult || m.ID != wire.IntID(1) {
			t.Errorf("roots/list answer %+v", m)
		}
		p.send(`{"jsonrpc":"2.0","id":2,"method":"elicitation/create","params":{}}`)
		m, _ = wire.Decode([]byte(p.wait(t, `"user declined"`)))
		if m.Kind != wire.KindError || m.ID != wire.IntID(2) || m.Error.Code != -1 {
			t.Errorf("elicitation answer %+v", m)
		}

		p.send(`{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{}}`)
		for method := range started {
			if method == wire.MethodSamplingCreate {
				break
			}
		}
		from := rec.len()
		p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"changed my mind"}}`)
		select {
		case err := <-released:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("handler context ended with %v", err)
			}
		case <-time.After(waitLimit):
			t.Fatal("the server's cancel did not reach the handler")
		}
		note := rec.waitFrom(t, from, "the server's cancel", func(ev event.Event) bool {
			return ev.Kind == event.Received && ev.Msg.Method == wire.NotifyCancelled
		})
		if !note.Internal {
			t.Errorf("the server's cancel of its own request is not marked internal")
		}
		quietly(200 * time.Millisecond)
		for _, l := range p.all() {
			if strings.Contains(l, "never be sent") || strings.Contains(l, `"id":3`) {
				t.Errorf("answered a request the server cancelled: %s", l)
			}
		}
	})
}

// TestStdioServerClosesStdout: a peer that closes its end is a closed
// transport, and every request in flight ends with it.
func TestStdioPeerCloses(t *testing.T) {
	c, rec, p := legacyPeer(t, client.Config{})
	tr := session.NewTracker(session.Config{})
	tr.Begin(wire.MethodToolsCall, toolCall("x", nil), session.RequestOptions{}, time.Now())
	tr.Begin(wire.MethodToolsCall, toolCall("y", nil), session.RequestOptions{}, time.Now())
	send(t, c, 1, wire.MethodToolsCall, toolCall("x", nil))
	send(t, c, 2, wire.MethodToolsCall, toolCall("y", nil))
	p.wait(t, `"id":2`)
	p.out.Close()
	ev := rec.wait(t, "the transport closed", kind(event.TransportClosed))
	if ev.Err == nil || !strings.Contains(ev.Err.Error(), "closed its stdout") {
		t.Errorf("closure cause %v", ev.Err)
	}
	select {
	case <-c.Done():
	default:
		t.Error("Done not closed after EventTransportClosed")
	}
	if err := c.Send(context.Background(), client.Request{ID: wire.IntID(3), Method: "x"}); !errors.Is(err, client.ErrClosed) {
		t.Errorf("Send after closure = %v, want ErrClosed", err)
	}
	for _, e := range rec.all() {
		tr.Apply(e)
	}
	for _, id := range []wire.ID{wire.IntID(1), wire.IntID(2)} {
		if r, _ := tr.Get(id); r.State != session.StateConnectionLost {
			t.Errorf("request %s is %s, want connection_lost", id, r.State)
		}
	}
}

// TestCloseWithoutReader: Close returns even when nobody reads Events and the
// channel is full.
func TestCloseWithoutReader(t *testing.T) {
	p, pipes := newStdioPeer(t, legacyHandshake)
	c, err := client.New(client.Config{Pipes: pipes, EventBuffer: 4, ShutdownWait: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	connected := make(chan error, 1)
	go func() {
		_, err := c.Connect(context.Background())
		connected <- err
	}()
	// Read only what Connect needs to finish, then stop reading.
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for ev := range c.Events() {
			if ev.Kind == event.Connected {
				return
			}
		}
	}()
	if err := <-connected; err != nil {
		t.Fatal(err)
	}
	<-drained
	// More than the channel holds: the client's reader blocks (back
	// pressure), and so, through the synchronous pipe, does the peer.
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		for i := 0; i < 50; i++ {
			p.send(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`)
		}
	}()
	p.wait(t, wire.NotifyInitialized)
	done := make(chan struct{})
	start := time.Now()
	go func() {
		c.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(waitLimit):
		t.Fatal("Close hung on a full event channel")
	}
	t.Logf("Close with a stalled consumer took %s", time.Since(start))
	for range c.Events() {
	}
	<-sent
}
