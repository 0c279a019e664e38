package help

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"inflight/keymap"
	"inflight/session"
	"inflight/termsafe"
	"inflight/ui/look"
	"inflight/ui/screen"
)

// helpOver is help opened over the list in state st.
func helpOver(st keymap.State) (Model, screen.Env) {
	keys := keymap.Default()
	keys.SetState(st)
	env := screen.Env{Tracker: session.NewTracker(session.DefaultConfig()), Now: time.Unix(0, 0), Styles: look.NewStyles(true),
		Keys: &keys, Line: termsafe.Line, Block: termsafe.Block}
	return Model{}.Show(keys, nil), env
}

// The list's selection is finished: c, C, + and - do nothing now, and help
// lists them all the same, dimmed; the keys that act are not.
func TestHelpListsEveryKeyOfTheScreen(t *testing.T) {
	m, env := helpOver(keymap.State{Mode: keymap.ModeList, HasSelection: true, HasRequests: true, Connected: true})
	v := m.View(env, 140, 40)
	plain := ansi.Strip(v)
	for _, words := range []string{"cancel with reason", "timeout +10s", "timeout -10s", "stop watching", "answer"} {
		if !strings.Contains(plain, words) {
			t.Errorf("help hides %q:\n%s", words, plain)
		}
		if !strings.Contains(v, env.Styles.Dim.Render(words)) {
			t.Errorf("%q, which does not act now, is not dimmed", words)
		}
	}
	for _, words := range []string{"new request", "details", "protocol log"} {
		if strings.Contains(v, env.Styles.Dim.Render(words)) || !strings.Contains(v, env.Styles.Help.FullDesc.Render(words)) {
			t.Errorf("%q acts now and is drawn dimmed", words)
		}
	}
	// A proxy's view that only watches has no cancel of its own to learn.
	m, env = helpOver(keymap.State{Mode: keymap.ModeList, HasSelection: true, HasRequests: true, Watching: true})
	if plain := ansi.Strip(m.View(env, 140, 40)); strings.Contains(plain, "cancel with reason") || strings.Contains(plain, "new request") {
		t.Errorf("a watching view's help lists keys that send:\n%s", plain)
	}
}

// At 80 columns help wraps its words rather than cutting them, in the
// short intro of a short terminal as in the full one.
func TestHelpWrapsTheIntro(t *testing.T) {
	m, env := helpOver(keymap.State{Mode: keymap.ModeList, HasSelection: true, HasRequests: true, Connected: true, SelectedActive: true})
	for _, size := range []struct{ w, h int }{{80, 20}, {80, 60}} {
		v := ansi.Strip(m.View(env, size.w, size.h))
		for _, l := range strings.Split(v, "\n") {
			if ansi.StringWidth(l) > size.w {
				t.Errorf("%dx%d: a line is wider than the screen: %q", size.w, size.h, l)
			}
			if strings.Contains(l, "…") {
				t.Errorf("%dx%d: a line is cut: %q", size.w, size.h, l)
			}
		}
		flat := strings.Join(strings.Fields(v), " ")
		for _, words := range []string{"the stream closed (modern HTTP)", "is ⚑ flagged"} {
			if !strings.Contains(flat, words) && size.h < 30 {
				t.Errorf("%dx%d: the short intro lacks %q:\n%s", size.w, size.h, words, v)
			}
		}
		if size.h >= 60 && !strings.Contains(flat, "modern (2026-07-28) Streamable HTTP: the request's stream is closed.") {
			t.Errorf("%dx%d: the intro lacks its words:\n%s", size.w, size.h, v)
		}
	}
}
