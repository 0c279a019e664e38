package ui

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"inflight/event"
	"inflight/session"
	"inflight/wire"
)

// clipboardOf runs cmd's tree and returns what it asks the terminal to put
// on the clipboard (tea.SetClipboard's message is Bubble Tea's own type).
func clipboardOf(t *testing.T, cmd tea.Cmd) (string, bool) {
	t.Helper()
	if cmd == nil {
		return "", false
	}
	msg := cmd()
	if batch, ok := msg.(tea.BatchMsg); ok {
		for _, c := range batch {
			if s, ok := clipboardOf(t, c); ok {
				return s, true
			}
		}
		return "", false
	}
	if msg != nil && reflect.TypeOf(msg).Name() == "setClipboardMsg" {
		return reflect.ValueOf(msg).String(), true
	}
	return "", false
}

// press delivers a key to Update and returns the command it made, without
// running it.
func (h *harness) press(name string) tea.Cmd {
	h.t.Helper()
	_, cmd := h.m.Update(keyMsg(name))
	return cmd
}

// answeredCall sends tools/call slow as request 2 and answers it.
func answeredCall(h *harness, params string) {
	h.connect()
	h.run(h.m.send(wire.MethodToolsCall, json.RawMessage(params), session.RequestOptions{}))
	h.sentEvent(2)
	h.answer(2, `{"resultType":"complete","content":[{"type":"text","text":"slow finished"}]}`)
}

// y in the list and in the detail copies the selected request: the bytes
// that went out and the answer, as one JSON document, and the status line
// says what went, how big it is, and that OSC 52 may not be supported.
func TestCopySelectedRequest(t *testing.T) {
	t.Setenv("TMUX", "")
	for _, screen := range []string{"list", "detail"} {
		t.Run(screen, func(t *testing.T) {
			h := newHarness(t, 120, 35)
			answeredCall(h, `{"name":"slow","arguments":{"seconds":1}}`)
			if screen == "detail" {
				h.key("enter")
			}
			got, ok := clipboardOf(t, h.press("y"))
			if !ok {
				t.Fatalf("y made no clipboard command; status %q", h.m.status.text)
			}
			var doc struct {
				Request  wire.Message    `json:"request"`
				Response json.RawMessage `json:"response"`
			}
			if err := json.Unmarshal([]byte(got), &doc); err != nil {
				t.Fatalf("the copy is not JSON (%v):\n%s", err, got)
			}
			if doc.Request.Method != wire.MethodToolsCall || !strings.Contains(string(doc.Request.Params), `"seconds": 1`) ||
				!strings.Contains(string(doc.Response), "slow finished") {
				t.Errorf("the copy is not request #2 and its answer:\n%s", got)
			}
			if !strings.Contains(got, "\n  ") {
				t.Errorf("the copy is not indented:\n%s", got)
			}
			want := "copied request #2 (" + sizeText(len(got)) + ") via OSC 52, if the terminal supports it"
			if h.m.status.text != want {
				t.Errorf("status %q, want %q", h.m.status.text, want)
			}
		})
	}
}

// Inside tmux the status line names what tmux needs; a response after the
// cancel is never passed off as the answer; secrets are masked, and a
// rune a terminal would act on is escaped, in what leaves.
func TestCopyIsRedactedInertAndSaysWhere(t *testing.T) {
	t.Setenv("TMUX", "/tmp/tmux-0/default,1,0")
	h := newHarness(t, 120, 35)
	h.m.opts.Redact = func(s string) string { return strings.ReplaceAll(s, "s3cret", "[redacted]") }
	h.m.opts.RedactBytes = redactBytesWith(h.m.opts.Redact)
	h.connect()
	// Typed by the user, not yet written: the store holds the params as
	// they were typed.
	h.run(h.m.send(wire.MethodToolsCall, json.RawMessage(`{"name":"slow","arguments":{"token":"s3cret","note":"\u009b31m"}}`), session.RequestOptions{}))
	got, ok := clipboardOf(t, h.press("y"))
	if !ok {
		t.Fatal("no clipboard command")
	}
	if strings.Contains(got, "s3cret") || !strings.Contains(got, "[redacted]") {
		t.Errorf("the secret left:\n%s", got)
	}
	if strings.ContainsRune(got, '\u009b') || !strings.Contains(got, `\u009b`) {
		t.Errorf("a C1 control left raw:\n%q", got)
	}
	if !strings.Contains(got, `"method": "tools/call"`) || !strings.Contains(got, `"params"`) {
		t.Errorf("an unsent request is not its method and params:\n%s", got)
	}
	if !strings.HasSuffix(h.m.status.text, "via OSC 52, if tmux has set-clipboard on") {
		t.Errorf("status %q", h.m.status.text)
	}

	// Cancelled, then answered late.
	h.sentEvent(2)
	h.run(h.m.cancel(wire.IntID(2), "user", session.CauseUser))
	h.cancelSent(2, event.SignalNotification)
	h.advance(100 * time.Millisecond)
	h.answer(2, `{"resultType":"complete","content":[]}`)
	got, _ = clipboardOf(t, h.press("y"))
	if !strings.Contains(got, `"responseAfterCancel"`) || strings.Contains(got, `"response":`) {
		t.Errorf("a late answer is copied as the response:\n%s", got)
	}
}

// In the log, y copies the selected entry, and in the entry view the open
// one (whose viewport takes every other key); while the filter has focus
// y is typed into it.
func TestCopyLogEntry(t *testing.T) {
	h := newHarness(t, 120, 35)
	answeredCall(h, `{"name":"slow","arguments":{}}`)
	h.key("l")
	lg := h.m.tracker.Log()
	// The newest entry is the request's change of state, which has no
	// bytes: its facts are copied as a line of text.
	got, ok := clipboardOf(t, h.press("y"))
	if !ok || !strings.HasSuffix(got, " · local · state pending → completed · id 2\n") {
		t.Fatalf("y in the log copied %q (ok %v)", got, ok)
	}
	if !strings.HasPrefix(h.m.status.text, "copied log entry ") {
		t.Errorf("status %q", h.m.status.text)
	}
	// Above it, the answer.
	h.key("up")
	got, ok = clipboardOf(t, h.press("y"))
	if !ok || !json.Valid([]byte(got)) || !strings.Contains(got, "slow finished") {
		t.Fatalf("y on the answer copied %q (ok %v)", got, ok)
	}

	h.key("up", "enter")
	openAbs, open := h.m.screens.logv.OpenEntry()
	if !open {
		t.Fatal("enter did not open the entry")
	}
	opened := lg.At(int(openAbs - (lg.Total() - int64(lg.Len()))))
	got, ok = clipboardOf(t, h.press("y"))
	if !ok || !json.Valid([]byte(got)) {
		t.Fatalf("y in the entry view copied %q (ok %v)", got, ok)
	}
	var a, b any
	_ = json.Unmarshal([]byte(got), &a)
	_ = json.Unmarshal(opened.Raw, &b)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("the entry view copied\n%s\nnot the open entry\n%s", got, opened.Raw)
	}

	h.key("esc", "/")
	if _, ok := clipboardOf(t, h.press("y")); ok {
		t.Error("y while filtering copied instead of typing")
	}
	if h.m.screens.logv.Filter() != "y" {
		t.Errorf("filter %q, want the y typed", h.m.screens.logv.Filter())
	}
}

// o hands the terminal to $PAGER with the same text in a file only its
// owner can read, removed when the pager exits; the status line says
// what was shown where. The command tea.Exec would run is run here.
func TestOpenInPager(t *testing.T) {
	dir := t.TempDir()
	seen := filepath.Join(dir, "seen")
	script := filepath.Join(dir, "pager")
	// It records its arguments, the file's mode and the file.
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"$@\" > "+seen+".args\nstat -c %a \"$2\" > "+seen+".mode\ncat \"$2\" > "+seen+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PAGER", script+" --flag")
	h := newHarness(t, 120, 35)
	var ran tea.ExecCommand
	var done tea.ExecCallback
	h.m.pager.exec = func(c tea.ExecCommand, fn tea.ExecCallback) tea.Cmd {
		ran, done = c, fn
		return nil
	}
	answeredCall(h, `{"name":"slow","arguments":{}}`)
	want, _ := clipboardOf(t, h.press("y"))
	h.run(h.press("o"))
	if ran == nil {
		t.Fatal("o asked for no program")
	}
	err := ran.Run()
	if err != nil {
		t.Fatalf("the pager failed: %v", err)
	}
	got, _ := os.ReadFile(seen)
	if string(got) != want {
		t.Errorf("the pager got\n%s\nwant what y copies\n%s", got, want)
	}
	if mode, _ := os.ReadFile(seen + ".mode"); strings.TrimSpace(string(mode)) != "600" {
		t.Errorf("the file's mode was %s, want 600", mode)
	}
	args, _ := os.ReadFile(seen + ".args")
	file := strings.TrimPrefix(strings.TrimSpace(string(args)), "--flag ")
	if !strings.HasPrefix(string(args), "--flag ") || !strings.HasSuffix(file, ".json") {
		t.Errorf("the pager's arguments: %q", args)
	}
	if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the file %s is still there (%v)", file, err)
	}
	h.send(done(err))
	if want := "showed request #2 (" + sizeText(len(want)) + ") in " + script + " --flag"; h.m.status.text != want {
		t.Errorf("status %q, want %q", h.m.status.text, want)
	}

	// A pager that fails says so.
	t.Setenv("PAGER", "false")
	h.run(h.press("o"))
	err = ran.Run()
	h.send(done(err))
	if h.m.status.text != "false exited with status 1 on request #2" {
		t.Errorf("status %q", h.m.status.text)
	}
}

// Without $PAGER, less, then more; O opens $VISUAL, else $EDITOR, else vi.
func TestViewerProgram(t *testing.T) {
	found := func(names ...string) func(string) (string, error) {
		return func(n string) (string, error) {
			for _, f := range names {
				if f == n {
					return "/usr/bin/" + n, nil
				}
			}
			return "", errors.New("not found")
		}
	}
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	for _, tc := range []struct {
		name   string
		editor bool
		env    map[string]string
		found  []string
		want   string
	}{
		{"PAGER with arguments", false, map[string]string{"PAGER": "less -R"}, nil, "less -R"},
		{"blank PAGER, less", false, map[string]string{"PAGER": "  "}, []string{"less", "more"}, "less"},
		{"no less, more", false, nil, []string{"more"}, "more"},
		{"no pager at all", false, nil, nil, "error: no pager: set $PAGER"},
		{"VISUAL first", true, map[string]string{"VISUAL": "code -w", "EDITOR": "nano"}, nil, "code -w"},
		{"EDITOR", true, map[string]string{"EDITOR": "nano"}, nil, "nano"},
		{"vi", true, nil, []string{"vi"}, "vi"},
		{"no editor", true, nil, nil, "error: no editor: set $EDITOR"},
	} {
		v := &viewer{editor: tc.editor, getenv: env(tc.env), lookPath: found(tc.found...)}
		args, err := v.program()
		got := strings.Join(args, " ")
		if err != nil {
			got = "error: " + err.Error()
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// y and o on a screen with nothing selected say so, and the keys are
// listed only where they act.
func TestCopyKeysFollowState(t *testing.T) {
	h := newHarness(t, 120, 35)
	if h.m.keys.Copy.Enabled() || h.m.keys.Pager.Enabled() {
		t.Error("y and o are enabled with no request")
	}
	h.connect()
	if !h.m.keys.Copy.Enabled() || !h.m.keys.Pager.Enabled() || !h.m.keys.Editor.Enabled() {
		t.Error("y, o and O are disabled on a selected request")
	}
	h.key("s")
	if h.m.keys.Copy.Enabled() {
		t.Error("y is enabled on the stderr screen, where it does nothing")
	}
}
