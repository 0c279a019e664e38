package help

import (
	"image/color"
	"strings"
	"testing"
	"time"

	"charm.land/lipgloss/v2"
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
		if !strings.Contains(v, env.Styles.Off.Render(words)) {
			t.Errorf("%q, which does not act now, is not dimmed", words)
		}
	}
	for _, words := range []string{"new request", "details", "protocol log"} {
		if strings.Contains(v, env.Styles.Off.Render(words)) || !strings.Contains(v, env.Styles.Help.FullDesc.Render(words)) {
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

// What acts now stands out from what does not, on either background: on a
// dark one its words are brighter, on a light one darker. bubbles' full
// help drew the keys that act in #4A4A4A and inflight those that do not in
// #8A8A8A, so on a dark terminal the dead keys were the bright ones.
func TestHelpDrawsWhatActsBrighter(t *testing.T) {
	for _, dark := range []bool{true, false} {
		st := look.NewStyles(dark)
		for _, c := range []struct {
			what     string
			now, off lipgloss.Style
		}{{"key", st.Help.FullKey, st.Off}, {"words", st.Help.FullDesc, st.Off}} {
			now, off := luminance(c.now.GetForeground()), luminance(c.off.GetForeground())
			lighter := now > off+0.15
			if !dark {
				lighter = now < off-0.15
			}
			if !lighter {
				t.Errorf("dark=%v: the %s of a key that acts (luminance %.2f) does not stand out from one that does not (%.2f)", dark, c.what, now, off)
			}
		}
		// The screen draws them so.
		keys := keymap.Default()
		keys.SetState(keymap.State{Mode: keymap.ModeList, HasSelection: true, HasRequests: true, Connected: true})
		env := screen.Env{Tracker: session.NewTracker(session.DefaultConfig()), Now: time.Unix(0, 0), Styles: st, Keys: &keys, Line: termsafe.Line, Block: termsafe.Block}
		v := Model{}.Show(keys, nil).View(env, 140, 40)
		if !strings.Contains(v, st.Help.FullDesc.Render("details")) || !strings.Contains(v, st.Off.Render("cancel with reason")) {
			t.Errorf("dark=%v: help does not draw with the styles compared", dark)
		}
	}
}

// luminance is c's relative luminance, 0 (black) to 1 (white).
func luminance(c color.Color) float64 {
	r, g, b, _ := c.RGBA()
	return (0.2126*float64(r) + 0.7152*float64(g) + 0.0722*float64(b)) / 0xffff
}

// A screen with its own intro (a view on a proxy) keeps its own words on
// a short terminal: its first and last lines, not the generic cancel text.
func TestHelpShortKeepsOwnIntro(t *testing.T) {
	keys := keymap.Default()
	keys.SetState(keymap.State{Mode: keymap.ModeList, HasSelection: true, HasRequests: true, Connected: true})
	env := screen.Env{Tracker: session.NewTracker(session.DefaultConfig()), Now: time.Unix(0, 0), Styles: look.NewStyles(true),
		Keys: &keys, Line: termsafe.Line, Block: termsafe.Block}
	intro := []string{"inflight watches the proxy P: the host's requests, marked ⇄.",
		"  On HTTP the host cancels by closing its request's stream (modern era) or",
		"  with notifications/cancelled (legacy). a cancel of an unknown",
		"  ID or of initialize, a legacy stream closed and not resumed, a request the",
		"  host left in flight when it went, what the server sends after its cancel.",
		"  The keys below act through the proxy; q or ctrl+c detaches, the proxy runs on.",
		""}
	tall := ansi.Strip(Model{}.Show(keys, intro).View(env, 120, 60))
	short := ansi.Strip(Model{}.Show(keys, intro).View(env, 80, 18))
	if !strings.Contains(tall, "On HTTP the host cancels") {
		t.Fatalf("a tall help lacks the intro:\n%s", tall)
	}
	if strings.Contains(short, "On HTTP the host cancels") || strings.Contains(short, "the cancel: notifications/cancelled") || !strings.Contains(short, "watches the proxy P") || !strings.Contains(short, "the proxy runs on") {
		t.Errorf("a short help with its own intro:\n%s", short)
	}
}
