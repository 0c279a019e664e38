// Package hostile holds misbehaving MCP servers for tests: the "hostile
// peers" of issue 6. Each one speaks just enough MCP to get through the
// connection set-up of either era — it answers server/discover as a modern
// server and initialize as a legacy one, so a test picks the era by forcing
// a protocol version or not — lists one tool, ToolName, and misbehaves in
// one named way when that tool is called.
//
// Stdio peers (Stdio values) run in-process over pipes (Serve, for
// client.Config{Pipes: ...}) or as a real child process: the test binary
// re-executed with the environment Command returns, served by RunFromEnv,
// which every TestMain that uses them calls first. Only a process can show
// some things — ignoring SIGTERM, closing stdout while still running — so
// both forms share one implementation.
//
// HTTP peers are http.Handlers for httptest servers on 127.0.0.1.
//
// Nothing here is used by inflight itself; it is test support that several
// packages share.
package hostile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"inflight/wire"
)

// ToolName is the one tool every peer lists. Calling it sets off the peer's
// misbehaviour; everything before that is well-behaved, so that a client
// gets connected first.
const ToolName = "hostile"

// ServerName is the serverInfo name every peer reports, followed by the
// peer's own name.
const ServerName = "hostile"

// Stdio is a hostile stdio server.
type Stdio struct {
	// Name says what the peer does wrong; it selects the peer in a child
	// process (see Command).
	Name string
	// Open runs before the peer reads anything: a server that talks first.
	Open func(s *Session)
	// Call runs in its own goroutine for each tools/call. It must return
	// once s.Done() is closed.
	Call func(s *Session, req Request)
	// Cancelled runs (on the reader goroutine) for each
	// notifications/cancelled the client sends.
	Cancelled func(s *Session, c wire.Cancelled)
	// Stubborn peers ignore the end of their stdin and, as a process,
	// SIGTERM: only SIGKILL (or, in-process, Served.Stop) ends them.
	Stubborn bool
	// Tasks makes the peer declare task support (legacy
	// capabilities.tasks, the modern tasks extension) and list its tool
	// with execution.taskSupport "optional".
	Tasks bool
	// Handle runs in its own goroutine for each request that is neither
	// set-up nor tools/call (tasks/get, prompts/get, …) and reports whether
	// it answered; when it did not, the peer answers -32601. It must
	// return once s.Done() is closed.
	Handle func(s *Session, req Request) bool
}

// Request is a request a peer received.
type Request struct {
	ID     wire.ID
	Method string
	Params json.RawMessage
	// Token is the progress token the client asked for (zero if none).
	Token wire.ID
}

// Session is one connection of a stdio peer: what it writes goes to the
// client's stdout, one whole write at a time.
type Session struct {
	peer string

	wmu       sync.Mutex
	out       io.Writer
	closeOut  func() error
	outClosed bool
	// exit ends the peer at once, as a crash would: the process exits, or
	// the in-process pipes are closed.
	exit func()

	done     chan struct{} // closed when the peer must stop
	stopOnce sync.Once
	calls    sync.WaitGroup

	rmu       sync.Mutex
	received  []string
	changed   chan struct{}
	cancelled map[wire.ID]chan struct{}
	// deaf is closed by StopReading.
	deaf     chan struct{}
	deafOnce sync.Once
	// record, when set, gets every line the client wrote (child processes
	// write them to a file the test reads after the process is gone).
	record io.Writer
	// stderr is the process's stderr for a child; nil in-process.
	stderr io.Writer

	// legacy is set once the client sent initialize: it speaks the
	// legacy era.
	legacy bool
	// book holds a task peer's tasks.
	book taskBook
}

func newSession(peer string, out io.Writer, closeOut func() error) *Session {
	return &Session{peer: peer, out: out, closeOut: closeOut, done: make(chan struct{}), changed: make(chan struct{}),
		cancelled: map[wire.ID]chan struct{}{}, deaf: make(chan struct{})}
}

// errStdoutClosed is returned by writes after CloseStdout.
var errStdoutClosed = errors.New("hostile: stdout is closed")

// Done is closed when the peer must stop: its stdin ended (unless it is
// stubborn) or it was stopped.
func (s *Session) Done() <-chan struct{} { return s.done }

func (s *Session) stop() { s.stopOnce.Do(func() { close(s.done) }) }

// Write writes raw bytes to the client, in one piece.
func (s *Session) Write(p []byte) error {
	return s.Locked(func(w io.Writer) error {
		_, err := w.Write(p)
		return err
	})
}

// Locked runs fn with the client's stdout to itself, for a message written
// in many pieces (a huge line) that nothing may interleave with.
func (s *Session) Locked(fn func(w io.Writer) error) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.outClosed {
		return errStdoutClosed
	}
	return fn(s.out)
}

// Send writes one message followed by a newline.
func (s *Session) Send(msg []byte) error {
	return s.Write(append(append([]byte(nil), msg...), '\n'))
}

// Reply answers a request with a result (raw JSON).
func (s *Session) Reply(id wire.ID, result string) error {
	return s.Send(wire.ResultResponse(id, json.RawMessage(result)))
}

// Progress sends notifications/progress for token.
func (s *Session) Progress(token wire.ID, progress, total float64, message string) error {
	return s.Send(progressNotification(token.Raw(), progress, total, message))
}

// progressNotification builds notifications/progress with a token given as
// raw JSON, so that peers can send tokens of any JSON type.
func progressNotification(tokenRaw string, progress, total float64, message string) []byte {
	params := fmt.Sprintf(`{"progressToken":%s,"progress":%s,"total":%s,"message":%s}`,
		tokenRaw, num(progress), num(total), quote(message))
	return wire.Notification(wire.NotifyProgress, json.RawMessage(params))
}

// num formats a float as JSON (no NaN or infinities: JSON has none).
func num(f float64) string {
	b, err := json.Marshal(f)
	if err != nil {
		return "0"
	}
	return string(b)
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// CloseStdout closes the client's stdout; the peer keeps reading its stdin.
func (s *Session) CloseStdout() {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if !s.outClosed {
		s.outClosed = true
		_ = s.closeOut()
	}
}

// StopReading makes the peer stop reading its stdin after the line it is
// handling (or the next one it reads), for good: what the client writes
// then fills the pipe and its writes stall. The peer still writes.
func (s *Session) StopReading() { s.deafOnce.Do(func() { close(s.deaf) }) }

// Exit ends the peer at once, mid-request, as a crash would.
func (s *Session) Exit() { s.exit() }

// Sleep waits d, or less when the peer must stop; it reports whether the
// whole wait passed.
func (s *Session) Sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.done:
		return false
	}
}

// Received returns the lines the client wrote so far.
func (s *Session) Received() []string {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	return append([]string(nil), s.received...)
}

// WaitReceived waits until the client wrote a line containing substr and
// returns it, or returns "" after limit.
func (s *Session) WaitReceived(substr string, limit time.Duration) string {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for {
		s.rmu.Lock()
		for _, l := range s.received {
			if strings.Contains(l, substr) {
				s.rmu.Unlock()
				return l
			}
		}
		changed := s.changed
		s.rmu.Unlock()
		select {
		case <-changed:
		case <-deadline.C:
			return ""
		}
	}
}

// CancelledCh is closed when the client cancels request id.
func (s *Session) CancelledCh(id wire.ID) <-chan struct{} {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	return s.cancelCh(id)
}

func (s *Session) cancelCh(id wire.ID) chan struct{} {
	ch, ok := s.cancelled[id]
	if !ok {
		ch = make(chan struct{})
		s.cancelled[id] = ch
	}
	return ch
}

func (s *Session) markCancelled(id wire.ID) {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	ch := s.cancelCh(id)
	select {
	case <-ch:
	default:
		close(ch)
	}
}

func (s *Session) receive(line []byte) {
	if s.record != nil {
		_, _ = s.record.Write(append(append([]byte(nil), line...), '\n'))
	}
	s.rmu.Lock()
	s.received = append(s.received, string(line))
	close(s.changed)
	s.changed = make(chan struct{})
	s.rmu.Unlock()
}

// serve runs one session: it reads the client's messages from in until its
// end, answering the set-up itself and handing tools/call to p.Call.
func (p Stdio) serve(s *Session, in io.Reader) {
	if p.Open != nil {
		p.Open(s)
	}
	br := bufio.NewReaderSize(in, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if line = bytes.TrimSpace(line); len(line) > 0 {
			s.receive(line)
			p.handle(s, line)
		}
		if err != nil {
			break
		}
		select {
		case <-s.deaf:
			<-s.done
		default:
		}
		if isDone(s.done) {
			break
		}
	}
	if p.Stubborn {
		<-s.done
	}
	s.stop()
	s.calls.Wait()
	s.CloseStdout()
}

func isDone(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// handle answers one message from the client.
func (p Stdio) handle(s *Session, line []byte) {
	msg, err := wire.Decode(line)
	if err != nil {
		return
	}
	switch msg.Kind {
	case wire.KindNotification:
		if msg.Method == wire.NotifyCancelled {
			if c, err := wire.DecodeCancelled(msg.Params); err == nil {
				s.markCancelled(c.RequestID)
				if p.Cancelled != nil {
					p.Cancelled(s, c)
				}
			}
		}
	case wire.KindRequest:
		if msg.Method == wire.MethodInitialize {
			s.rmu.Lock()
			s.legacy = true
			s.rmu.Unlock()
		}
		if reply, ok := setUpReplyOf(p.Name, msg, p.Tasks); ok {
			_ = s.Send(reply)
			return
		}
		req := Request{ID: msg.ID, Method: msg.Method, Params: msg.Params, Token: progressToken(msg.Params)}
		if msg.Method != wire.MethodToolsCall && p.Handle != nil {
			s.calls.Add(1)
			go func() {
				defer s.calls.Done()
				if !p.Handle(s, req) {
					_ = s.Send(wire.ErrorResponse(msg.ID, wire.CodeMethodNotFound, "hostile peer: method not found"))
				}
			}()
			return
		}
		if msg.Method != wire.MethodToolsCall || p.Call == nil {
			_ = s.Send(wire.ErrorResponse(msg.ID, wire.CodeMethodNotFound, "hostile peer: method not found"))
			return
		}
		s.calls.Add(1)
		go func() {
			defer s.calls.Done()
			p.Call(s, req)
		}()
	}
}

// progressToken reads params._meta.progressToken.
func progressToken(params json.RawMessage) wire.ID {
	raw, ok := wire.MetaValue(params, wire.MetaProgressToken)
	if !ok {
		return wire.ID{}
	}
	id, err := wire.ParseID(raw)
	if err != nil {
		return wire.ID{}
	}
	return id
}

// setUpReply answers what every peer answers well: the era probe and the
// handshake of either era, ping and tools/list. It reports false for
// anything else.
func setUpReply(peer string, msg wire.Message) ([]byte, bool) {
	return setUpReplyOf(peer, msg, false)
}

// setUpReplyOf is setUpReply for a peer that declares task support or not.
func setUpReplyOf(peer string, msg wire.Message, tasks bool) ([]byte, bool) {
	if tasks {
		switch msg.Method {
		case wire.MethodDiscover:
			return wire.ResultResponse(msg.ID, json.RawMessage(taskDiscoverResult(peer))), true
		case wire.MethodInitialize:
			return wire.ResultResponse(msg.ID, json.RawMessage(taskInitializeResult(peer))), true
		case wire.MethodToolsList:
			return wire.ResultResponse(msg.ID, json.RawMessage(taskToolsListResult)), true
		}
	}
	switch msg.Method {
	case wire.MethodDiscover:
		return wire.ResultResponse(msg.ID, json.RawMessage(discoverResult(peer))), true
	case wire.MethodInitialize:
		return wire.ResultResponse(msg.ID, json.RawMessage(initializeResult(peer))), true
	case wire.MethodPing:
		return wire.ResultResponse(msg.ID, json.RawMessage(`{}`)), true
	case wire.MethodToolsList:
		return wire.ResultResponse(msg.ID, json.RawMessage(toolsListResult)), true
	}
	return nil, false
}

func discoverResult(peer string) string {
	return fmt.Sprintf(`{"resultType":"complete","supportedVersions":[%q],"capabilities":{"tools":{}},"_meta":{%q:{"name":%q,"version":"1"}}}`,
		wire.VersionModern, wire.MetaServerInfo, ServerName+" "+peer)
}

func initializeResult(peer string) string {
	return fmt.Sprintf(`{"protocolVersion":%q,"capabilities":{"tools":{}},"serverInfo":{"name":%q,"version":"1"}}`,
		wire.Version20251125, ServerName+" "+peer)
}

// toolsListResult lists the one tool, with an empty input schema so that
// the TUI's composer sends it with no arguments at all.
var toolsListResult = fmt.Sprintf(`{"resultType":"complete","tools":[{"name":%q,"description":"Misbehaves when called.","inputSchema":{"type":"object"}}]}`, ToolName)

// textResult is a complete tool result holding one text.
func textResult(text string) string {
	return fmt.Sprintf(`{"resultType":"complete","content":[{"type":"text","text":%s}]}`, quote(text))
}

// Served is a stdio peer served in-process. The client writes Stdin and
// reads Stdout, as it would a child's pipes.
type Served struct {
	Stdin  io.WriteCloser
	Stdout io.ReadCloser
	// Session is the peer's side, for what it received.
	Session *Session

	inR      *io.PipeReader
	outW     *io.PipeWriter
	finished chan struct{}
}

// errKilled is what the client reads from a peer that was stopped.
var errKilled = errors.New("hostile: peer stopped")

// Serve starts p in-process and returns the client's ends of its pipes.
// Stop must be called when the test ends.
func Serve(p Stdio) *Served {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := newSession(p.Name, outW, outW.Close)
	sv := &Served{Stdin: inW, Stdout: outR, Session: s, inR: inR, outW: outW, finished: make(chan struct{})}
	s.exit = sv.kill
	go func() {
		defer close(sv.finished)
		p.serve(s, inR)
		// Like a process that exited: the client's writes fail from now on.
		inR.Close()
	}()
	return sv
}

// kill ends the peer's pipes as the death of its process would.
func (sv *Served) kill() {
	sv.Session.stop()
	sv.inR.CloseWithError(errKilled)
	// Closing the pipe first, outside the session's write lock, ends a write
	// blocked on a client that stopped reading; that write holds the lock.
	sv.outW.Close()
	sv.Session.CloseStdout()
}

// Stop ends the peer, as SIGKILL ends a process, and waits until every one
// of its goroutines has returned.
func (sv *Served) Stop() {
	sv.kill()
	<-sv.finished
}

// Finished is closed once the peer has ended.
func (sv *Served) Finished() <-chan struct{} { return sv.finished }
