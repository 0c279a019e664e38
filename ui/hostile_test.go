package ui

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"inflight/client"
	"inflight/internal/testkit/hostile"
	"inflight/keymap"
	"inflight/session"
	"inflight/ui/prompt"
	"inflight/wire"
)

// The hostile battery for the TUI: the Model, driven by a real client
// connected to a server that misbehaves on purpose (package hostile). The
// request is sent the way a person sends it (n, enter, enter); whatever the
// server does, nothing may panic, every Update (with the frame after it)
// must return promptly, every request must reach a final state — waiting
// for its timeout and late window when that is what ends it — every frame
// must fit the screen with no control character or escape sequence of the
// server's reaching the terminal, and the screen must say what happened.

const (
	liveWidth  = 120
	liveHeight = 35
	// frameLimit catches a frozen UI (an Update and its View that never
	// end, or take seconds), not a slow one: how fast a frame is under a
	// hostile stream is measured in benchmarks (BenchmarkKeyUnderFlood),
	// and the slowest frame seen here is logged. Under -race on a loaded
	// two-core machine a healthy frame has taken 700 ms.
	frameLimit = 5 * time.Second
)

// liveHarness drives a Model the way Bubble Tea does — commands run in
// goroutines and their messages come back to Update — but Update and View
// run here, in the test's goroutine, where they are timed and checked.
type liveHarness struct {
	t    *testing.T
	m    *Model
	msgs chan tea.Msg
	done chan struct{}
	wg   sync.WaitGroup
	quit bool

	slowest time.Duration
	frames  int
	// strict (on by default) also checks, after every message, the frame
	// and the frame as the views drew it (before View's choke point) with
	// strictFrameProblem: each view must sanitise the server's strings
	// itself.
	strict bool
}

// liveDialer makes real clients and remembers them so that the harness can
// close them all.
type liveDialer struct {
	mu      sync.Mutex
	clients []*client.Client
	newCfg  func() (client.Config, error)
	http    bool
}

func (d *liveDialer) dial() (Client, error) {
	cfg, err := d.newCfg()
	if err != nil {
		return nil, err
	}
	// Short shutdown steps keep the battery quick; the behaviour under
	// test does not depend on their length. (The late window is the
	// tracker's, which the model passes on with every request.)
	cfg.ShutdownWait = 300 * time.Millisecond
	c, err := client.New(cfg)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.clients = append(d.clients, c)
	d.mu.Unlock()
	return c, nil
}

func (d *liveDialer) closeAll() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, c := range d.clients {
		_ = c.Close()
	}
}

// stdioDialer serves a stdio peer in-process for every connection.
func stdioDialer(t *testing.T, p hostile.Stdio, version string) *liveDialer {
	var mu sync.Mutex
	var served []*hostile.Served
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, sv := range served {
			sv.Stop()
		}
	})
	return &liveDialer{newCfg: func() (client.Config, error) {
		sv := hostile.Serve(p)
		mu.Lock()
		served = append(served, sv)
		mu.Unlock()
		return client.Config{Pipes: &client.Pipes{Stdin: sv.Stdin, Stdout: sv.Stdout}, ProtocolVersion: version}, nil
	}}
}

// httpDialer connects to an HTTP server's URL.
func httpDialer(ts *httptest.Server, version string) *liveDialer {
	return &liveDialer{http: true, newCfg: func() (client.Config, error) {
		return client.Config{URL: ts.URL + "/mcp", ProtocolVersion: version}, nil
	}}
}

func newLive(t *testing.T, d *liveDialer, cfg session.Config) *liveHarness {
	t.Helper()
	return newLiveWith(t, d, cfg, nil)
}

// newLiveWith is newLive with options of the test's own (set may be nil).
func newLiveWith(t *testing.T, d *liveDialer, cfg session.Config, set func(*Options)) *liveHarness {
	t.Helper()
	transport := "stdio"
	if d.http {
		transport = "http"
	}
	opts := Options{Target: "a hostile server", Transport: transport, Dial: d.dial, Tracker: cfg, Dark: true}
	if set != nil {
		set(&opts)
	}
	m, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	l := &liveHarness{t: t, m: m, msgs: make(chan tea.Msg, 64), done: make(chan struct{}), strict: true}
	t.Cleanup(func() { l.close(d) })
	l.run(m.Init())
	l.update(tea.WindowSizeMsg{Width: liveWidth, Height: liveHeight})
	return l
}

// close ends everything the harness started: pending ticks, the clients
// (which ends the event pump), and every command goroutine.
func (l *liveHarness) close(d *liveDialer) {
	l.m.clock.stop()
	d.closeAll()
	close(l.done)
	finished := make(chan struct{})
	go func() {
		l.wg.Wait()
		close(finished)
	}()
	select {
	case <-finished:
	case <-time.After(10 * time.Second):
		l.t.Errorf("commands still running 10s after the clients were closed")
	}
	l.t.Logf("%d frames, slowest Update+View %s", l.frames, l.slowest.Round(time.Microsecond))
}

// run starts a command the way Bubble Tea does: in its own goroutine, its
// message delivered back to Update.
func (l *liveHarness) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		msg := cmd()
		select {
		case l.msgs <- msg:
		case <-l.done:
		}
	}()
}

// handle delivers one message.
func (l *liveHarness) handle(msg tea.Msg) {
	switch msg := msg.(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			l.run(c)
		}
	case tea.QuitMsg:
		l.quit = true
	default:
		l.update(msg)
	}
}

// update runs Update and View as Bubble Tea would after a message, timing
// both and checking the frame.
func (l *liveHarness) update(msg tea.Msg) {
	l.t.Helper()
	start := time.Now()
	var cmd tea.Cmd
	func() {
		defer func() {
			if r := recover(); r != nil {
				l.t.Fatalf("Update panicked on %T: %v\nscreen before:\n%s", msg, r, l.screen())
			}
		}()
		_, cmd = l.m.Update(msg)
	}()
	content := l.m.View().Content
	took := time.Since(start)
	l.frames++
	l.slowest = max(l.slowest, took)
	if took > frameLimit {
		l.t.Errorf("Update(%T) and its frame took %s", msg, took)
	}
	if p := frameProblem(content, l.m.size.width, l.m.size.height); p != "" {
		l.t.Fatalf("after %T: %s", msg, p)
	}
	if l.strict {
		for what, frame := range map[string]string{"the frame": content, "the frame as the views drew it": l.m.frame()} {
			if p := strictFrameProblem(frame); p != "" {
				l.t.Fatalf("after %T (mode %v), %s: %s\n%s", msg, l.m.focus.mode, what, p, ansi.Strip(frame))
			}
		}
	}
	l.run(cmd)
}

// until handles messages until cond holds.
func (l *liveHarness) until(what string, limit time.Duration, cond func() bool) {
	l.t.Helper()
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for !cond() {
		select {
		case msg := <-l.msgs:
			l.handle(msg)
		case <-deadline.C:
			l.t.Fatalf("%s: not within %s; screen:\n%s", what, limit, l.screen())
		}
	}
}

// key presses keys, handling what each returns at once.
func (l *liveHarness) key(names ...string) {
	for _, n := range names {
		l.update(keyMsg(n))
	}
}

func (l *liveHarness) screen() string { return ansi.Strip(l.m.View().Content) }

// frameProblem says what is wrong with a frame, or "" when nothing is: it
// must fit the screen, and every escape sequence in it must be styling of
// our own (SGR) — an escape sequence or control character a server sent
// must have been made visible and inert.
func frameProblem(content string, width, height int) string {
	for i := 0; i < len(content); i++ {
		if content[i] != 0x1b {
			continue
		}
		j := i + 1
		if j < len(content) && content[j] == '[' {
			j++
			for j < len(content) && (content[j] >= '0' && content[j] <= '9' || content[j] == ';' || content[j] == ':') {
				j++
			}
			if j < len(content) && content[j] == 'm' {
				i = j
				continue
			}
		}
		return fmt.Sprintf("an escape sequence that is not styling reached the frame: %q", content[i:min(len(content), i+24)])
	}
	plain := ansi.Strip(content)
	for _, r := range plain {
		if (r < 0x20 && r != '\n') || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
			return fmt.Sprintf("control character %U reached the frame:\n%s", r, plain)
		}
	}
	if !utf8.ValidString(content) {
		return "invalid UTF-8 reached the frame"
	}
	lines := strings.Split(plain, "\n")
	if len(lines) > height {
		return fmt.Sprintf("the frame has %d lines on a %d-line screen", len(lines), height)
	}
	for _, line := range lines {
		if w := ansi.StringWidth(line); w > width {
			return fmt.Sprintf("a line is %d cells wide on a %d-cell screen: %q", w, width, line)
		}
	}
	return ""
}

// The frame check itself catches what it is there to catch.
func TestFrameProblem(t *testing.T) {
	ok := "\x1b[1;38;2;1;2;3mstyled\x1b[m text ␛[31m\nline two"
	if p := frameProblem(ok, 20, 2); p != "" {
		t.Errorf("a clean frame: %s", p)
	}
	for _, bad := range []string{
		"title \x1b]0;PWNED\x07", "clear \x1b[2J", "bell \x07", "c1 \u009b31m", "del \x7f", "cr \r",
		"bad utf-8 \xff", strings.Repeat("w", 21), "1\n2\n3",
	} {
		if frameProblem(bad, 20, 2) == "" {
			t.Errorf("%q passed the frame check", bad)
		}
	}
}

// connected waits until the client is connected and the tools are listed.
func (l *liveHarness) connected() {
	l.t.Helper()
	l.until("connected with the tools listed", 10*time.Second, func() bool {
		return l.m.conn.state == connUp && len(l.m.screens.composer.Tools()) > 0
	})
}

// callTool sends the hostile tool the way a newcomer does: n, enter (the
// only tool), enter (send, no arguments). It returns the request.
func (l *liveHarness) callTool() *session.Request {
	l.t.Helper()
	n := l.m.tracker.Len()
	l.key("n", "enter", "enter")
	if l.m.focus.mode != keymap.ModeList || l.m.tracker.Len() != n+1 {
		l.t.Fatalf("the composer did not send the tool:\n%s", l.screen())
	}
	r := l.m.tracker.At(l.m.tracker.Len() - 1)
	if r.Method != wire.MethodToolsCall || r.Target != hostile.ToolName {
		l.t.Fatalf("sent %s %s", r.Method, r.Target)
	}
	return r
}

// settled waits until no request is in flight or cancelling.
func (l *liveHarness) settled(limit time.Duration) {
	l.t.Helper()
	l.until("every request final", limit, func() bool {
		for i := 0; i < l.m.tracker.Len(); i++ {
			if !l.m.tracker.At(i).State.IsFinal() {
				return false
			}
		}
		return true
	})
}

// screens renders the list, the request's detail (unless noDetail) and
// the protocol log, checking each frame, and returns their text together.
func (l *liveHarness) screens(r *session.Request, noDetail bool) string {
	l.t.Helper()
	var b strings.Builder
	b.WriteString(l.screen())
	if !noDetail {
		b.WriteString(l.detail(r))
	}
	l.key("l")
	b.WriteString(l.screen())
	l.key("esc")
	return b.String()
}

// detail opens the request's detail view and returns its text.
func (l *liveHarness) detail(r *session.Request) string {
	l.t.Helper()
	l.m.screens.list = l.m.screens.list.Select(r.ID, false)
	l.key("enter")
	scr := l.screen()
	l.key("esc")
	return scr
}

// quitCleanly presses q (and y if asked) and waits for the program to end.
func (l *liveHarness) quitCleanly() {
	l.t.Helper()
	l.key("q")
	if l.m.screens.prompt.Kind() == prompt.Quit {
		l.key("y")
	}
	l.until("quit", 10*time.Second, func() bool { return l.quit })
	for i := 0; i < l.m.tracker.Len(); i++ {
		if r := l.m.tracker.At(i); !r.State.IsFinal() {
			l.t.Errorf("after quitting, #%s is still %s", r.ID, r.State)
		}
	}
}

// uiCase is one hostile server and what the TUI must show.
type uiCase struct {
	name string
	dial func(t *testing.T) *liveDialer
	// timeout is the tracker's default request timeout.
	timeout time.Duration
	// act, when set, runs after the request is sent (a cancel).
	act func(l *liveHarness, r *session.Request)
	// state is the request's final state; says is text one of its screens
	// must show.
	state session.State
	says  []string
	// violations are codes the tracker must record (they may arrive after
	// the request is final: a duplicate answer follows the first).
	violations []string
	// await, when set, is what else must have arrived before the screens
	// are read (late traffic follows the answer that settles a request).
	await func(r *session.Request) bool
	// noDetail skips the detail view, for a known UI bug that another test
	// pins.
	noDetail bool
}

func stdioCase(p hostile.Stdio, version string) func(t *testing.T) *liveDialer {
	return func(t *testing.T) *liveDialer { return stdioDialer(t, p, version) }
}

func httpCase(h func() *hostile.HTTP, version string) func(t *testing.T) *liveDialer {
	return func(t *testing.T) *liveDialer {
		ts := hostile.NewServer(h(), false)
		t.Cleanup(ts.Close)
		return httpDialer(ts, version)
	}
}

// cancelAtProgress presses c once the request reports progress.
func cancelAtProgress(l *liveHarness, r *session.Request) {
	l.until("progress", 10*time.Second, func() bool { return r.Progress.Count > 0 })
	l.key("c")
}

func uiCases() []uiCase {
	var cases []uiCase
	for _, e := range []struct{ name, version string }{{"modern", ""}, {"legacy", wire.Version20251125}} {
		cases = append(cases,
			uiCase{name: "garbage/" + e.name, dial: stdioCase(hostile.Garbage, e.version), state: session.StateCompleted,
				says: []string{"survived the garbage ␛[31mRED␛[0m", "violations", "non_json_line"}, violations: []string{"non_json_line", "malformed_message"}},
			uiCase{name: "huge-line/" + e.name, dial: stdioCase(hostile.HugeLine, e.version), state: session.StateCompleted,
				says: []string{"answered after a line of 100 MiB", "⚠ 1 violation", "malformed"}, violations: []string{"malformed_message"}},
			uiCase{name: "deep-nesting/" + e.name, dial: stdioCase(hostile.DeepNesting, e.version), state: session.StateCompleted,
				says: []string{"deeply nested", "⚠ 1 violation", "malformed"}, violations: []string{"malformed_message"},
				noDetail: true}, // TestHostileDeepResultDetailIsBounded
			uiCase{name: "odd-ids/" + e.name, dial: stdioCase(hostile.OddIDs, e.version), state: session.StateCompleted,
				says: []string{"answered with the id as 2e0", "unknown_response_id"}, violations: []string{"unknown_response_id", "unknown_progress_token"}},
			uiCase{name: "duplicates/" + e.name, dial: stdioCase(hostile.Duplicates, e.version), state: session.StateCompleted,
				says: []string{"the first answer", "duplicate_response"}, violations: []string{"duplicate_response", "unknown_response_id"}},
			uiCase{name: "answers-cancel/" + e.name, dial: stdioCase(hostile.AnswersCancel, e.version), act: cancelAtProgress,
				await: func(r *session.Request) bool { return r.Late.Response && r.Late.ProgressAfterCancel > 0 },
				state: session.StateCancelled, says: []string{"late response ignored", "⚑ 1 late progress"}},
			uiCase{name: "progress-storm/" + e.name, dial: stdioCase(hostile.ProgressStorm, e.version), state: session.StateCompleted,
				says:       []string{fmt.Sprintf("sent %d progress notifications", hostile.StormCount), "progress_not_increasing"},
				violations: []string{"progress_not_increasing"}},
			uiCase{name: "closes-stdout/" + e.name, dial: stdioCase(hostile.ClosesStdout, e.version), state: session.StateConnectionLost,
				says: []string{"connection lost: the server closed its stdout", "press R to reconnect"}},
			uiCase{name: "ignores-sigterm/" + e.name, dial: stdioCase(hostile.IgnoresSIGTERM, e.version), timeout: 500 * time.Millisecond,
				state: session.StateTimedOut, says: []string{"timed out", "nothing more in"}},
			uiCase{name: "answers-first/" + e.name, dial: stdioCase(hostile.AnswersFirst, e.version), state: session.StateCompleted,
				says: []string{"the real answer", "unknown_response_id"}, violations: []string{"unknown_response_id"}},
			uiCase{name: "crashes/" + e.name, dial: stdioCase(hostile.Crashes, e.version), state: session.StateConnectionLost,
				says: []string{"connection lost", "press R to reconnect"}},

			uiCase{name: "http-sse-comments-forever/" + e.name, dial: httpCase(hostile.SSECommentsForever, e.version), timeout: 700 * time.Millisecond,
				state: session.StateTimedOut, says: []string{"timed out"}},
			uiCase{name: "http-gzip-bomb/" + e.name, dial: httpCase(hostile.GzipBomb, e.version), state: session.StateFailed,
				says: []string{`Content-Encoding "gzip", which inflight never asked for`}},
			uiCase{name: "http-answers-first/" + e.name, dial: httpCase(hostile.AnswersFirstHTTP, e.version), state: session.StateCompleted,
				says: []string{"the real answer", "unknown_response_id"}, violations: []string{"unknown_response_id"}},
			uiCase{name: "http-huge-event/" + e.name, dial: httpCase(hostile.HugeEvent, e.version), state: session.StateConnectionLost,
				says: []string{"the response stream"}}, // the cause is cut off: TestHostileLongErrorIsReadable
			uiCase{name: "http-redirect-other-host/" + e.name, dial: redirectDialer(e.version), state: session.StateFailed,
				says: []string{"redirect to another host", "refused"}},
		)
	}
	return cases
}

// redirectDialer connects to a server that redirects tools/call to another
// host, which must never see it.
func redirectDialer(version string) func(t *testing.T) *liveDialer {
	return func(t *testing.T) *liveDialer {
		other := hostile.Plain()
		ots := hostile.NewServer(other, false)
		ts := hostile.NewServer(hostile.Redirect(ots.URL+"/mcp"), false)
		t.Cleanup(func() {
			ts.Close()
			ots.Close()
			if other.Posts() != 0 {
				t.Errorf("the other host received %d POSTs: the redirect was followed", other.Posts())
			}
		})
		return httpDialer(ts, version)
	}
}

func TestHostileServersInTheTUI(t *testing.T) {
	for _, tc := range uiCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := session.DefaultConfig()
			cfg.LateWindow = 300 * time.Millisecond
			cfg.DefaultTimeout = 10 * time.Second
			if tc.timeout > 0 {
				cfg.DefaultTimeout = tc.timeout
			}
			l := newLive(t, tc.dial(t), cfg)
			l.connected()
			r := l.callTool()
			if tc.act != nil {
				tc.act(l, r)
			}
			l.settled(20 * time.Second)
			if r.State != tc.state {
				t.Errorf("#%s ended %s, want %s (error %q)", r.ID, r.State, tc.state, r.LocalError)
			}
			l.until(fmt.Sprintf("violations %v", tc.violations), 10*time.Second, func() bool {
				for _, code := range tc.violations {
					if l.m.tracker.Violations().Count(code) == 0 {
						return false
					}
				}
				return true
			})
			if tc.await != nil {
				l.until("late traffic", 10*time.Second, func() bool { return tc.await(r) })
			}
			text := l.screens(r, tc.noDetail)
			for _, want := range tc.says {
				if !strings.Contains(text, want) {
					t.Errorf("no screen says %q; they show:\n%s", want, text)
				}
			}
			l.quitCleanly()
		})
	}
}

// A TLS server whose certificate nobody trusts: the connection fails, and
// the screen says why and how to retry; nothing was in flight.
func TestHostileTLSErrorInTheTUI(t *testing.T) {
	ts := hostile.NewServer(hostile.Plain(), true)
	t.Cleanup(ts.Close) // after the harness's cleanup has closed the client
	l := newLive(t, httpDialer(ts, ""), session.DefaultConfig())
	l.until("the connection failed", 10*time.Second, func() bool { return l.m.conn.state == connLost })
	scr := l.screen()
	for _, want := range []string{"certificate", "Press R to try again"} {
		if !strings.Contains(scr, want) {
			t.Errorf("the screen does not say %q:\n%s", want, scr)
		}
	}
	if l.m.tracker.Len() != 0 {
		t.Errorf("%d requests tracked on a connection that never came up", l.m.tracker.Len())
	}
	l.quitCleanly()
}

// Known UI bugs, pinned by tests that fail until they are fixed.

// The detail view indented a result however deep it nested
// (prettyJSON → json.Indent), and indentation costs as many bytes per line
// as the line is deep: a 20 KB answer nested 9 000 deep — which
// encoding/json accepts — becomes about 160 MB, rebuilt on every frame, so
// one Update+View takes over a minute under -race. wire.IndentBounded is
// the bounded form check uses.
func TestHostileDeepResultDetailIsBounded(t *testing.T) {
	cfg := session.DefaultConfig()
	l := newLive(t, stdioDialer(t, hostile.DeepNesting, ""), cfg)
	l.connected()
	r := l.callTool()
	l.settled(20 * time.Second)
	start := time.Now()
	l.detail(r) // update() fails the test past frameLimit
	t.Logf("detail of a result nested %d deep: %s", hostile.DeepValidDepth, time.Since(start))
}

// Why a line or event was rejected — "line of 104857600 bytes exceeds
// the 33554432-byte message limit", "exceeded max depth" — is on no screen.
// The log shows the violation's code and the raw prefix; the reason lives
// only in the tracker's violation detail, which the detail view shows for
// a request's own violations, and a stdio line that could not be read
// belongs to no request.
func TestHostileRejectedLineSaysWhy(t *testing.T) {
	l := newLive(t, stdioDialer(t, hostile.HugeLine, ""), session.DefaultConfig())
	l.connected()
	r := l.callTool()
	l.settled(20 * time.Second)
	if text := l.screens(r, false); !strings.Contains(text, "exceeds the 33554432-byte message limit") {
		t.Errorf("no screen says why the line was rejected:\n%s", text)
	}
}

// A request's error longer than the screen is cut at the screen's
// edge in its row and in the detail view alike (the detail body is clamped,
// not wrapped), so the end of the message — here the cause — is on no
// screen.
func TestHostileLongErrorIsReadable(t *testing.T) {
	ts := hostile.NewServer(hostile.HugeEvent(), false)
	t.Cleanup(ts.Close) // after the harness's cleanup has closed the client
	l := newLive(t, httpDialer(ts, wire.Version20251125), session.DefaultConfig())
	l.connected()
	r := l.callTool()
	l.settled(20 * time.Second)
	text := strings.Join(strings.Fields(l.detail(r)), " ")
	if !strings.Contains(text, "exceeds the 33554432-byte message limit") {
		t.Errorf("the detail view does not show the whole error %q:\n%s", r.LocalError, l.detail(r))
	}
}
