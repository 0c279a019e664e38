package ui

// Copy and open (issue 10): y copies the JSON of the selected request (in
// the list and the detail) or of the selected log entry (in the log and
// the entry view) to the terminal's clipboard with OSC 52, the sequence
// inflight writes itself (tea.SetClipboard); o opens the same text in
// $PAGER and O in $EDITOR, with the terminal handed over (tea.Exec) and
// the TUI drawn again when they exit. What leaves is redacted and inert:
// the secrets the model's redactor knows are masked, and every rune a
// terminal could act on is escaped (JSON) or drawn as a symbol (text).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"inflight/keymap"
	"inflight/session"
	"inflight/termsafe"
	"inflight/ui/logview"
	"inflight/wire"
)

// copyable is what y copies and o opens.
type copyable struct {
	// what names it for the status line: "request #3", "log entry 12"
	// (the number the log's entry view shows).
	what string
	// name is the stem of the temporary file o writes it to.
	name string
	// body is the text, redacted and inert; isJSON says it is one JSON
	// document (else it is text: cut bytes, a stderr line, a note).
	body   []byte
	isJSON bool
	// cut counts the bytes of the entry the bounded log did not keep.
	cut int
}

// maxClipboard bounds what y sends: an OSC 52 sequence of megabytes is
// more than terminals take (and than a paste is for); o has no bound.
const maxClipboard = 1 << 20

// largeClipboard is the size above which the status line says that some
// terminals cap what OSC 52 carries.
const largeClipboard = 100_000

// redaction is how what leaves the program is made safe: the secrets the
// options' redactors know are masked in a JSON document's bytes and in
// text.
type redaction struct {
	bytes func([]byte) []byte
	text  func(string) string
}

// redaction is the options' redaction (a bytes redactor derived from the
// text one when none was given).
func (o *Options) redaction() redaction {
	red := o.RedactBytes
	if red == nil {
		red = redactBytesWith(o.Redact)
	}
	return redaction{bytes: red, text: o.Redact}
}

// block makes text safe for several terminal lines: redacted, then inert.
func (red redaction) block(s string) string { return termsafe.Block(red.text(s)) }

// payloadOf is what y and o act on in mode: the JSON of r, the selected
// request (nil: none), in the list and the detail. It is false when there
// is nothing there to copy. In the log, the screen names the entry
// (logview.Copy, logview.Open) and entryPayload makes it.
func payloadOf(mode keymap.Mode, t *session.Tracker, r *session.Request, red redaction) (copyable, bool) {
	switch mode {
	case keymap.ModeList, keymap.ModeDetail:
		if r == nil {
			return copyable{}, false
		}
		return requestPayload(t, r, red), true
	}
	return copyable{}, false
}

// requestPayload is r as one JSON object: the request as it went out and
// what came back for it, as the bytes were ({"request": …, "response":
// …}; before the request is written, its "method" and "params"), as t
// stores them. A response that came after the cancel is
// "responseAfterCancel", so that a pasted copy never passes it off as the
// request's answer.
func requestPayload(t *session.Tracker, r *session.Request, red redaction) copyable {
	p := copyable{what: "request #" + r.ID.String(), name: "inflight-request-" + fileSafe(r.ID.String()), isJSON: true}
	var b bytes.Buffer
	b.WriteByte('{')
	member := func(name string, raw []byte) {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:", name)
		if doc := bytes.TrimSpace(raw); len(doc) > 0 && json.Valid(doc) {
			b.Write(doc)
			return
		}
		// Bytes the store cut, or that were never JSON: kept as a string.
		s, _ := json.Marshal(string(raw))
		b.Write(s)
	}
	if raw, ok := t.RawRequest(r.ID); ok {
		if r.Sent.IsZero() {
			// Until the client wrote it, the store holds the params.
			member("method", jsonQuote(r.Method))
			member("params", raw)
		} else {
			member("request", raw)
		}
	} else {
		// The store lets go of the oldest bytes; what the tracker still
		// knows is the method.
		member("method", jsonQuote(r.Method))
	}
	if raw, ok := t.RawResponse(r.ID); ok {
		name := "response"
		if r.Late.Response {
			name = "responseAfterCancel"
		}
		member(name, raw)
	}
	b.WriteByte('}')
	p.body = indentedJSON(b.Bytes(), red)
	return p
}

// entryPayload is the entry of lg at abs: its bytes as indented JSON when
// they are JSON, else its text (a stderr line, a note, bytes the log cut).
func entryPayload(lg *session.ProtocolLog, abs int64, red redaction) (copyable, bool) {
	first := lg.Total() - int64(lg.Len())
	if abs < first || abs >= lg.Total() {
		return copyable{}, false // it has left the bounded log
	}
	e := lg.At(int(abs - first))
	p := copyable{what: fmt.Sprintf("log entry %d", abs+1), name: fmt.Sprintf("inflight-log-%d", abs+1), cut: e.Truncated}
	raw := bytes.TrimSpace(e.Raw)
	switch {
	case len(raw) > 0 && e.Truncated == 0 && json.Valid(raw):
		p.body, p.isJSON = indentedJSON(raw, red), true
	case len(raw) > 0:
		p.body = []byte(red.block(string(e.Raw)) + "\n")
	default:
		p.body = []byte(red.block(entryFacts(e)) + "\n")
	}
	return p, true
}

// entryFacts is an entry without bytes as one line of text.
func entryFacts(e session.LogEntry) string {
	facts := []string{e.Time.Format("15:04:05.000000"), logview.Direction(e).String()}
	switch {
	case e.IsState:
		facts = append(facts, "state "+e.From.String()+" → "+e.State.String())
	default:
		facts = append(facts, strings.ReplaceAll(e.Kind.String(), "_", " "))
		if e.Method != "" {
			facts = append(facts, e.Method)
		}
	}
	if !e.ID.IsZero() {
		facts = append(facts, "id "+e.ID.String())
	}
	if e.Status != 0 {
		facts = append(facts, fmt.Sprintf("HTTP %d", e.Status))
	}
	if e.Text != "" {
		facts = append(facts, e.Text)
	}
	return strings.Join(facts, " · ")
}

// indentedJSON is raw indented (bounded, as everywhere a server's JSON is
// indented), redacted, with every rune a terminal could act on written as
// a \u escape: still the same JSON, and inert in a pager or a paste.
func indentedJSON(raw []byte, red redaction) []byte {
	var buf bytes.Buffer
	if err := wire.IndentBounded(&buf, raw, "", "  ", wire.MaxIndentDepth); err != nil {
		buf.Reset()
		buf.Write(raw)
	}
	buf.WriteByte('\n')
	return termsafe.EscapeJSON(red.bytes(buf.Bytes()))
}

// payloadUse is what a key does with a payload: y copies it, o opens it
// in $PAGER, O in $EDITOR.
type payloadUse uint8

const (
	useCopy payloadUse = iota
	usePager
	useEditor
)

// payloadKey is the use of the payload msg asks for, one of k's Copy,
// Pager and Editor.
func payloadKey(msg tea.KeyPressMsg, k *keymap.KeyMap) payloadUse {
	switch {
	case key.Matches(msg, k.Copy):
		return useCopy
	case key.Matches(msg, k.Editor):
		return useEditor
	}
	return usePager
}

// openWith is o's use, or O's when editor.
func openWith(editor bool) payloadUse {
	if editor {
		return useEditor
	}
	return usePager
}

// usePayload is y, o or O on p (ok false: there was nothing there): the
// command that copies or opens it, with the status line saying what went
// where, or why nothing did.
func usePayload(exec func(tea.ExecCommand, tea.ExecCallback) tea.Cmd, use payloadUse, p copyable, ok bool) (tea.Cmd, notice) {
	switch {
	case use == useCopy:
		cmd, level, text := copyPayload(p, ok)
		return cmd, notice{level: level, text: text}
	case !ok:
		return nil, notice{level: levelInfo, text: "nothing selected to open"}
	}
	return openPayload(exec, p, use == useEditor), notice{}
}

// copyPayload is y on p (ok false: there was nothing to copy): it goes to
// the clipboard through the OSC 52 sequence Bubble Tea writes, and the
// status line says what went and that a terminal without OSC 52 takes
// nothing (the level and text returned).
func copyPayload(p copyable, ok bool) (tea.Cmd, statusLevel, string) {
	if !ok {
		return nil, levelInfo, "nothing selected to copy"
	}
	if len(p.body) > maxClipboard {
		return nil, levelWarn, fmt.Sprintf("%s is %s, too large for the clipboard: press o to open it in $PAGER", p.what, sizeText(len(p.body)))
	}
	// Short enough for 80 columns: whether it arrived, only the terminal
	// knows, and this says so.
	text := fmt.Sprintf("copied %s (%s) via OSC 52, if the terminal supports it", p.what, sizeText(len(p.body)))
	if os.Getenv("TMUX") != "" {
		text = fmt.Sprintf("copied %s (%s) via OSC 52, if tmux has set-clipboard on", p.what, sizeText(len(p.body)))
	}
	if len(p.body) > largeClipboard {
		text += "; some terminals cap its size"
	}
	if p.cut > 0 {
		text += fmt.Sprintf("; %d bytes of it were not kept", p.cut)
	}
	return tea.SetClipboard(string(p.body)), levelInfo, text
}

// openPayload is o (and O, editor) on p: it is shown in $PAGER (or
// $EDITOR), through a temporary file of mode 0600 that is removed when the
// program exits. The program runs with the terminal handed over (execute:
// tea.Exec, or a test's), and the TUI comes back as it was.
func openPayload(execute func(tea.ExecCommand, tea.ExecCallback) tea.Cmd, p copyable, editor bool) tea.Cmd {
	v := &viewer{p: p, editor: editor, getenv: os.Getenv, lookPath: exec.LookPath}
	return execute(v, v.done)
}

// viewer runs a pager or an editor on a payload. It is a tea.ExecCommand:
// Bubble Tea releases the terminal, calls Run, and restores the screen.
// Writing the file happens in Run, not in Update, which does no I/O.
type viewer struct {
	p      copyable
	editor bool
	// getenv and lookPath find the program (tests give their own).
	getenv   func(string) string
	lookPath func(string) (string, error)

	stdin          io.Reader
	stdout, stderr io.Writer
	// ran is the command line that ran; path the file it was given.
	ran  string
	path string
}

// SetStdin implements tea.ExecCommand.
func (v *viewer) SetStdin(r io.Reader) { v.stdin = r }

// SetStdout implements tea.ExecCommand.
func (v *viewer) SetStdout(w io.Writer) { v.stdout = w }

// SetStderr implements tea.ExecCommand.
func (v *viewer) SetStderr(w io.Writer) { v.stderr = w }

// program is the command line to run: $PAGER, else less, else more (or
// $VISUAL, else $EDITOR, else vi, else nano). A variable may hold
// arguments ("less -R"); they are split on spaces, with no shell.
func (v *viewer) program() ([]string, error) {
	vars, fallbacks, what := []string{"PAGER"}, []string{"less", "more"}, "pager"
	if v.editor {
		vars, fallbacks, what = []string{"VISUAL", "EDITOR"}, []string{"vi", "nano"}, "editor"
	}
	for _, name := range vars {
		if f := strings.Fields(v.getenv(name)); len(f) > 0 {
			return f, nil
		}
	}
	for _, name := range fallbacks {
		if _, err := v.lookPath(name); err == nil {
			return []string{name}, nil
		}
	}
	return nil, fmt.Errorf("no %s: set $%s", what, vars[len(vars)-1])
}

// Run writes the payload to a temporary file only its owner can read,
// runs the program on it, and removes it.
func (v *viewer) Run() error {
	args, err := v.program()
	if err != nil {
		return err
	}
	v.ran = strings.Join(args, " ")
	ext := ".txt"
	if v.p.isJSON {
		ext = ".json"
	}
	f, err := os.CreateTemp("", v.p.name+"-*"+ext) // CreateTemp makes it 0600
	if err != nil {
		return fmt.Errorf("temporary file: %w", err)
	}
	v.path = f.Name()
	defer os.Remove(v.path)
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("temporary file: %w", err)
	}
	if _, err := f.Write(v.p.body); err != nil {
		f.Close()
		return fmt.Errorf("temporary file: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("temporary file: %w", err)
	}
	cmd := exec.Command(args[0], append(args[1:], v.path)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = v.stdin, v.stdout, v.stderr
	return cmd.Run()
}

// done is the message for the model once the program exited.
func (v *viewer) done(err error) tea.Msg {
	return viewerDoneMsg{what: v.p.what, size: len(v.p.body), program: v.ran, editor: v.editor, err: err}
}

// viewerDoneMsg says the pager or editor exited.
type viewerDoneMsg struct {
	what    string
	size    int
	program string
	editor  bool
	err     error
}

// viewerDoneStatus is what the status line says once the pager or editor
// exited: what was shown where, or why it could not be (line makes the
// program's name safe for the line).
func viewerDoneStatus(msg viewerDoneMsg, line func(string) string) (statusLevel, string) {
	var exit *exec.ExitError
	switch {
	case msg.err != nil && msg.program == "":
		return levelError, fmt.Sprintf("could not open %s: %v", msg.what, msg.err)
	case errors.As(msg.err, &exit):
		return levelWarn, fmt.Sprintf("%s exited with status %d on %s", line(msg.program), exit.ExitCode(), msg.what)
	case msg.err != nil:
		return levelError, fmt.Sprintf("could not run %s on %s: %v", line(msg.program), msg.what, msg.err)
	case msg.editor:
		return levelInfo, fmt.Sprintf("opened %s (%s) in %s: a copy, since removed; edits are not used", msg.what, sizeText(msg.size), line(msg.program))
	}
	return levelInfo, fmt.Sprintf("showed %s (%s) in %s", msg.what, sizeText(msg.size), line(msg.program))
}

// sizeText is a byte count as a person reads it: "812 B", "1.2 kB".
func sizeText(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1f kB", float64(n)/1000)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1_000_000)
}

// fileSafe keeps the letters and digits of s, for a file name.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '_'
	}, s)
}

// jsonQuote is s as a JSON string.
func jsonQuote(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}
