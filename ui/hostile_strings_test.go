package ui

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"inflight/ui/look"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"inflight/client"
	"inflight/keymap"
	"inflight/session"
	"inflight/wire"
)

// evil is what every string of the evil peer carries: each hazard issue 14
// saw reach the terminal — an OSC 8 hyperlink, blink and a background
// colour, a raw C1 CSI, a bidi override, a CR and backspaces that rewrite
// the line, a DCS — and a bell and an OSC window title.
const evil = "\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\ \x1b[5;41mblink\x1b[0m \u009b31mc1 \u202egnp.exe safe\rEVIL\x08\x08 \x1bP1$r\x1b\\ \x07\x1b]0;pwned\x07"

// evilJSON is evil as a JSON string the way a careless server writes it:
// Go escapes ESC, CR, BS and BEL, and leaves U+009B and U+202E raw.
func evilJSON(prefix string) string {
	b, _ := json.Marshal(prefix + evil)
	return string(b)
}

// evilPeer is a stdio MCP server of ours (modern era) whose every string is
// hostile: its name and version, its tool's name and description, the
// names, descriptions, defaults and enums of the tool's input schema, its
// progress messages, its results and errors, its log notifications, a
// malformed line and its stderr. Its progress values are out of range.
type evilPeer struct {
	in     *io.PipeReader
	out    *io.PipeWriter
	errOut *io.PipeWriter
	calls  int
	done   chan struct{}
}

func serveEvil() (*evilPeer, *client.Pipes) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	errR, errW := io.Pipe()
	p := &evilPeer{in: inR, out: outW, errOut: errW, done: make(chan struct{})}
	go p.serve()
	return p, &client.Pipes{Stdin: inW, Stdout: outR, Stderr: errR}
}

func (p *evilPeer) stop() {
	p.in.CloseWithError(io.ErrClosedPipe)
	p.out.Close()
	p.errOut.Close()
	<-p.done
}

func (p *evilPeer) send(s string) { _, _ = io.WriteString(p.out, s+"\n") }

func (p *evilPeer) serve() {
	defer close(p.done)
	sc := bufio.NewScanner(p.in)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		msg, err := wire.Decode(sc.Bytes())
		if err != nil || msg.Kind != wire.KindRequest {
			continue
		}
		id := msg.ID.Raw()
		switch msg.Method {
		case wire.MethodDiscover:
			p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","supportedVersions":[%q],"capabilities":{"tools":{}},"_meta":{%q:{"name":%s,"version":%s}}}}`,
				id, wire.VersionModern, wire.MetaServerInfo, evilJSON("evil-server"), evilJSON("v")))
		case wire.MethodToolsList:
			p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","tools":[{"name":%s,"description":%s,"inputSchema":{"type":"object","properties":{%s:{"type":"string","description":%s,"default":%s,"enum":[%s,"b"]},%s:{"type":"boolean","description":%s},%s:{"type":"object","description":%s}},"required":[%s]}}]}}`,
				id, evilJSON("tool"), evilJSON("desc"),
				evilJSON("req"), evilJSON("d"), evilJSON("def"), evilJSON("enum"),
				evilJSON("flag"), evilJSON("d"),
				evilJSON("obj"), evilJSON("d"),
				evilJSON("req")))
		case wire.MethodToolsCall:
			p.calls++
			p.call(msg, id)
		default:
			p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":%s}}`, id, evilJSON("no method")))
		}
	}
}

func (p *evilPeer) call(msg wire.Message, id string) {
	token := `0`
	if raw, ok := wire.MetaValue(msg.Params, wire.MetaProgressToken); ok {
		token = string(raw)
	}
	fmt.Fprintf(p.errOut, "stderr %s\n", evil)
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":1e308,"total":100,"message":%s}}`, token, evilJSON("progress")))
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":1.5e308,"total":1e-300,"message":%s}}`, token, evilJSON("progress")))
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":%s}}`, evilJSON("log")))
	p.send("not json " + evil)
	if p.calls == 1 {
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","content":[{"type":"text","text":%s}]}}`, id, evilJSON("result")))
		return
	}
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":%s,"data":%s}}`, id, evilJSON("error"), evilJSON("data")))
}

// strictFrameProblem says what in a frame could act on the terminal: any
// escape sequence but an SGR of our own styles (blink, a foreign background
// colour, OSC, DCS, cursor movement), a C0 control but the newline (CR,
// backspace, BEL), DEL, a C1 control, a bidirectional control, invalid
// UTF-8.
func strictFrameProblem(frame string) string {
	for i := 0; i < len(frame); i++ {
		if frame[i] != 0x1b {
			continue
		}
		j := i + 1
		if j < len(frame) && frame[j] == '[' {
			for j++; j < len(frame) && (frame[j] >= '0' && frame[j] <= '9' || frame[j] == ';' || frame[j] == ':'); j++ {
			}
			if j < len(frame) && frame[j] == 'm' && look.FrameFilter().Allows(frame[i:j+1]) {
				i = j
				continue
			}
		}
		return fmt.Sprintf("an escape sequence not of our styling: %q", frame[i:min(len(frame), i+24)])
	}
	if !utf8.ValidString(frame) {
		return "invalid UTF-8"
	}
	for _, r := range ansi.Strip(frame) {
		switch {
		case r < 0x20 && r != '\n', r == 0x7f, r >= 0x80 && r <= 0x9f:
			return fmt.Sprintf("control character %U", r)
		case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
			return fmt.Sprintf("bidirectional control %U", r)
		}
	}
	return ""
}

// The strict check catches each hazard, and passes our own styling.
func TestStrictFrameProblem(t *testing.T) {
	st := look.NewStyles(true)
	if p := strictFrameProblem(st.Selected.Render(st.Title.Render("inflight")) + "\n" + st.Flag.Render("⚑")); p != "" {
		t.Errorf("our styling: %s", p)
	}
	for _, bad := range []string{"\x1b]8;;x\x1b\\", "\x1b[5m", "\x1b[41m", "\u009b", "\u202e", "a\rb", "a\x08", "\x1bP1$r", "\x07", "\xff"} {
		if strictFrameProblem("ok "+bad) == "" {
			t.Errorf("%q passed", bad)
		}
	}
}

// Issue 14 item 2: a server whose every string is hostile, and every view
// of the TUI — header, list, detail, the composer's tool picker, its form
// (with an error naming a field), its JSON editor, the protocol log and
// each of its entries opened whole, the stderr view, help, the status line
// — drawn with nothing of the server's acting on the terminal, both as the
// views draw it and after View's choke point. The hostile text is shown
// (as placeholders), not dropped.
func TestEvilStringsInEveryView(t *testing.T) {
	var mu sync.Mutex
	var peers []*evilPeer
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range peers {
			p.stop()
		}
	})
	d := &liveDialer{newCfg: func() (client.Config, error) {
		p, pipes := serveEvil()
		mu.Lock()
		peers = append(peers, p)
		mu.Unlock()
		return client.Config{Pipes: pipes}, nil
	}}
	cfg := session.DefaultConfig()
	cfg.LateWindow = 300 * time.Millisecond
	l := newLive(t, d, cfg)
	l.connected()

	var seen strings.Builder
	peek := func() { seen.WriteString(l.screen() + "\n") }
	// The header: the server's name and version (a name this long gives
	// way to the era on a screen of ordinary width).
	l.update(tea.WindowSizeMsg{Width: 600, Height: liveHeight})
	peek()
	l.update(tea.WindowSizeMsg{Width: liveWidth, Height: liveHeight})

	// Composer: the picker, the form, an error naming the required field,
	// the JSON editor; then send.
	send := func() *session.Request {
		n := l.m.tracker.Len()
		l.key("n")
		peek()
		l.key("enter")
		peek()
		l.key("ctrl+s")
		if l.m.screens.composer.Err() == "" {
			t.Fatalf("no error for the empty required field:\n%s", l.screen())
		}
		peek()
		l.key("x")
		l.key("ctrl+e")
		if _, open := l.m.screens.composer.JSON(); !open {
			t.Fatalf("the JSON editor did not open: %s", l.m.screens.composer.Err())
		}
		peek()
		l.key("ctrl+e", "enter")
		if l.m.focus.mode != keymap.ModeList || l.m.tracker.Len() != n+1 {
			t.Fatalf("the composer did not send:\n%s", l.screen())
		}
		peek() // the status line: "sent #2 …"
		return l.m.tracker.At(l.m.tracker.Len() - 1)
	}
	first := send()
	l.settled(10 * time.Second)
	second := send()
	l.settled(10 * time.Second)
	l.until("the progress violations", 10*time.Second, func() bool {
		return l.m.tracker.Violations().Count(session.ViolationProgressOutOfRange) >= 2 && l.m.tracker.Stderr().Len() >= 2
	})
	if first.State != session.StateCompleted || second.State != session.StateFailed {
		t.Errorf("the calls ended %s and %s", first.State, second.State)
	}
	peek() // the list: the result's summary, the error's message
	seen.WriteString(l.detail(first))
	seen.WriteString(l.detail(second))

	// The log, and every entry in it opened whole.
	l.key("l")
	peek()
	l.key("home")
	for i := 0; i < l.m.tracker.Log().Len(); i++ {
		l.key("enter")
		peek()
		l.key("esc", "down")
	}
	l.key("/", "e", "v", "i", "l")
	peek()
	l.key("esc", "esc")

	l.key("s")
	peek()
	l.key("esc", "?")
	peek()
	l.key("esc")

	text := seen.String()
	for _, want := range []string{
		"evil-server␛]8;;https://evil.example␛\\link", // header
		"tool␛]8;;",                 // picker and form
		"req␛]8;;",                  // a property's name in the form and the picker's arguments
		`\u202egnp.exe safe␍EVIL␈␈`, // bidi, CR and backspaces shown
		`\u009b31mc1`,               // the raw C1 CSI shown
		"✗ req␛]8;;",                // the form's error, naming the field
		"result␛]8;;",               // the summary and the detail
		"error␛]8;;",                // the error's message
		"stderr ␛]8;;",              // stderr
		`"data": "log\u001b]8;;`,    // a log notification, opened
		"progress_out_of_range",     // the violation
		"last 1.5e+308/1e-300",      // the progress, bounded
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no view shows %q", want)
		}
	}
	for _, bad := range []string{"+Inf%", strings.Repeat("0", 40)} {
		if strings.Contains(text, bad) {
			t.Errorf("a view shows %q", bad)
		}
	}
	l.quitCleanly()
}

// The banner says why the connection failed, in the server's words (an
// HTTP error's body): a raw peer that refuses every request with a hostile
// body, and the banner drawn inert.
func TestEvilStringsInTheBanner(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, "refused "+evil)
	}))
	t.Cleanup(ts.Close) // after the harness's cleanup has closed the client
	l := newLive(t, httpDialer(ts, ""), session.DefaultConfig())
	l.until("the connection failed", 10*time.Second, func() bool { return l.m.conn.state == connLost })
	// Wide enough for the whole cause on one line (a long one loses its
	// middle, where the body is).
	l.update(tea.WindowSizeMsg{Width: 600, Height: liveHeight})
	if scr := l.screen(); !strings.Contains(scr, "refused ␛]8;;") {
		t.Errorf("the banner does not show the server's words inert:\n%s", scr)
	}
	l.quitCleanly()
}
