package attach

import (
	"errors"
	"strings"
	"testing"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"inflight/internal/testkit/screentest"

	"inflight/keymap"
	"inflight/session"
	"inflight/ui/screen"
	"inflight/wire"
)

func hostCall(state session.State) *session.Request {
	return &session.Request{ID: wire.IntID(2), Method: "tools/call", ByHost: true, State: state}
}

// statusOf is the status line an action asks for ("" for none).
func statusOf(act screen.Action) string {
	switch a := act.(type) {
	case screen.Status:
		return a.Text
	case screen.Batch:
		for _, one := range a {
			if s := statusOf(one); s != "" {
				return s
			}
		}
	}
	return ""
}

// actOf is the command an action asks the root to send the proxy.
func actOf(act screen.Action) (Act, bool) {
	switch a := act.(type) {
	case Act:
		return a, true
	case screen.Batch:
		for _, one := range a {
			if got, ok := actOf(one); ok {
				return got, true
			}
		}
	}
	return Act{}, false
}

// TestActKeys: each acting key on the host's call in flight asks the
// proxy for its act, saying so; d opens the prompt instead.
func TestActKeys(t *testing.T) {
	env := screentest.Env()
	in := Input{Mode: keymap.ModeList, Selected: hostCall(session.StateRunning)}
	for k, want := range map[string]string{"h": "hold", "D": "drop", "z": "cancel", "Z": "cancel-silent", "t": "race"} {
		m, act := New(Proxy{Name: "p", Acts: true}).Update(env, in, screentest.Press(k))
		got, ok := actOf(act)
		if !ok || got != (Act{Action: want, ID: wire.IntID(2)}) {
			t.Errorf("%s asked %+v (%v), want %s", k, got, ok, want)
		}
		if s := statusOf(act); s != "asked the proxy: "+want+" on #2…" {
			t.Errorf("%s said %q", k, s)
		}
		if m.Prompting() {
			t.Errorf("%s opened the prompt", k)
		}
	}
	m, act := New(Proxy{Name: "p", Acts: true}).Update(env, in, screentest.Press("d"))
	if act != nil || !m.Prompting() {
		t.Errorf("d: action %#v, prompting %v", act, m.Prompting())
	}
}

// TestActRefused: what keeps an act from being asked is said, and nothing
// is asked.
func TestActRefused(t *testing.T) {
	env := screentest.Env()
	own := hostCall(session.StateRunning)
	own.ByHost = false
	hostCancelled := hostCall(session.StateCancelRequested)
	hostCancelled.Cancel = &session.Cancel{Cause: session.CauseHost}
	for _, c := range []struct {
		name  string
		m     Model
		in    Input
		key   string
		words string
	}{
		{"watch only", New(Proxy{}), Input{Selected: hostCall(session.StateRunning)}, "h", "takes no commands"},
		{"ended", New(Proxy{Acts: true}).Ended(nil), Input{Selected: hostCall(session.StateRunning)}, "h", "the proxy ended"},
		{"no selection", New(Proxy{Acts: true}), Input{}, "h", "select one of the host's requests first"},
		{"not the host's", New(Proxy{Acts: true}), Input{Selected: own}, "h", "#2 is not the host's request"},
		{"nothing held", New(Proxy{Acts: true}), Input{Selected: hostCall(session.StateRunning)}, "u", "nothing of #2 is held"},
		{"held, cancel", New(Proxy{Acts: true}), Input{Selected: hostCall(session.StateRunning), Held: true}, "z", "release or drop it"},
		{"host cancelled", New(Proxy{Acts: true}), Input{Selected: hostCancelled}, "h", "the host cancelled #2 already"},
		{"settled", New(Proxy{Acts: true}), Input{Selected: hostCall(session.StateCompleted)}, "d", "#2 is not in flight (completed)"},
	} {
		c.in.Mode = keymap.ModeDetail
		m, act := c.m.Update(env, c.in, screentest.Press(c.key))
		if _, asked := actOf(act); asked || m.Prompting() || !strings.Contains(statusOf(act), c.words) {
			t.Errorf("%s: action %#v, prompting %v; want a status with %q", c.name, act, m.Prompting(), c.words)
		}
	}
	// A hold armed before the response came is taken back by u.
	_, act := New(Proxy{Acts: true}).Update(env, Input{Mode: keymap.ModeList, Selected: hostCall(session.StateRunning), Armed: true}, screentest.Press("u"))
	if got, ok := actOf(act); !ok || got.Action != "release" || !strings.Contains(statusOf(act), "take back") {
		t.Errorf("u on an armed hold: %#v", act)
	}
	// The refusal on a settled request with an HTTP proxy's ID fits an
	// 80-column status line whole ("› " before it).
	settled := hostCall(session.StateCompleted)
	settled.ID = wire.StringID("inflight-1·1")
	_, act = New(Proxy{Acts: true}).Update(env, Input{Mode: keymap.ModeList, Selected: settled}, screentest.Press("h"))
	if why := statusOf(act); !strings.Contains(why, "is not in flight (completed)") || lipgloss.Width("› "+why) > 80 {
		t.Errorf("the refusal on a settled request (%d cells): %q", lipgloss.Width("› "+why), why)
	}
	// A held response can be released even after the server answered.
	_, act = New(Proxy{Acts: true}).Update(env, Input{Mode: keymap.ModeList, Selected: hostCall(session.StateCompleted), Held: true}, screentest.Press("u"))
	if got, ok := actOf(act); !ok || got.Action != "release" {
		t.Errorf("u on a held response: %#v", act)
	}
}

// TestDelayPrompt: the prompt offers 30s, refuses what is not a duration
// above 0 and stays open saying why, asks for what was typed, closes on
// esc, and leaves on ctrl+c.
func TestDelayPrompt(t *testing.T) {
	env := screentest.Env()
	in := Input{Mode: keymap.ModeList, Selected: hostCall(session.StateRunning)}
	open := func() Model {
		m, _ := New(Proxy{Acts: true}).Update(env, in, screentest.Press("d"))
		return m.Sized(80)
	}
	m, act := open().Update(env, in, screentest.Press("enter"))
	if got, ok := actOf(act); !ok || got != (Act{Action: "delay", ID: wire.IntID(2), After: 30 * time.Second}) || m.Prompting() {
		t.Errorf("enter on nothing typed: %#v, prompting %v", act, m.Prompting())
	}

	m = open()
	for _, r := range "-2s" {
		m, _ = m.Update(env, in, screentest.Press(string(r)))
	}
	m, act = m.Update(env, in, screentest.Press("enter"))
	if act != nil || !m.Prompting() || !strings.Contains(ansi.Strip(m.View(env, 80, 20)), `"-2s" is not a duration above 0`) {
		t.Errorf("-2s: action %#v, prompting %v, view:\n%s", act, m.Prompting(), m.View(env, 80, 20))
	}

	m = open()
	for _, r := range "500ms" {
		m, _ = m.Update(env, in, screentest.Press(string(r)))
	}
	// q is text here: it does not leave.
	if _, act := m.Update(env, in, screentest.Press("q")); act == (Leave{}) {
		t.Error("q in the prompt left")
	}
	m, act = m.Update(env, in, screentest.Press("enter"))
	if got, ok := actOf(act); !ok || got.After != 500*time.Millisecond || !strings.Contains(statusOf(act), "delay 500ms on #2") {
		t.Errorf("500ms: %#v", act)
	}
	if v := m.View(env, 80, 20); v != "" {
		t.Errorf("a closed prompt draws %q", v)
	}

	if m, act = open().Update(env, in, screentest.Press("esc")); act != nil || m.Prompting() {
		t.Errorf("esc: %#v, prompting %v", act, m.Prompting())
	}
	if _, act = open().Update(env, in, screentest.Press("ctrl+c")); act != (Leave{}) {
		t.Errorf("ctrl+c in the prompt: %#v", act)
	}
	if st := open().KeyState(keymap.State{Mode: keymap.ModeList}, false); st.Mode != keymap.ModePrompt {
		t.Errorf("the prompt's keys are the list's (%v)", st.Mode)
	}
}

// TestKeysLeftToTheRoot: keys typed into something else, keys on screens
// where the view answers nothing differently, and the keys it does not
// answer are Unused; q and ctrl+c leave.
func TestKeysLeftToTheRoot(t *testing.T) {
	env := screentest.Env()
	m := New(Proxy{Acts: true})
	r := hostCall(session.StateRunning)
	for _, c := range []struct {
		in  Input
		key string
	}{
		{Input{Mode: keymap.ModeList, Typing: true, Selected: r}, "q"},
		{Input{Mode: keymap.ModeLog, Typing: true}, "h"},
		{Input{Mode: keymap.ModeHelp}, "q"},
		{Input{Mode: keymap.ModeStderr}, "c"},
		{Input{Mode: keymap.ModeLog, Selected: r}, "h"},
		{Input{Mode: keymap.ModeList, Selected: r}, "enter"},
	} {
		if _, act := m.Update(env, c.in, screentest.Press(c.key)); act != (screen.Unused{}) {
			t.Errorf("%s in %+v: %#v, want Unused", c.key, c.in, act)
		}
	}
	for _, in := range []Input{{Mode: keymap.ModeList}, {Mode: keymap.ModeLog}, {Mode: keymap.ModeList, Typing: true}} {
		k := "q"
		if in.Typing {
			k = "ctrl+c"
		}
		if _, act := m.Update(env, in, screentest.Press(k)); act != (Leave{}) {
			t.Errorf("%s in %+v: %#v, want Leave", k, in, act)
		}
	}
}

// TestSendingKeysRefused: the keys that would send, cancel or reconnect
// say why they do nothing here, the log's included.
func TestSendingKeysRefused(t *testing.T) {
	env := screentest.Env()
	r := hostCall(session.StateRunning)
	for _, c := range []struct {
		m     Model
		in    Input
		key   string
		words string
	}{
		{New(Proxy{Acts: true}), Input{Mode: keymap.ModeList, Selected: r}, "c", "z cancels it upstream (Z: the host keeps waiting)"},
		{New(Proxy{Acts: true}), Input{Mode: keymap.ModeList, Selected: hostCall(session.StateCompleted)}, "c", "not in flight (completed): there is nothing to cancel"},
		{New(Proxy{Acts: true}).Ended(nil), Input{Mode: keymap.ModeList, Selected: r}, "c", "the proxy ended: nothing acts on it now"},
		{New(Proxy{}), Input{Mode: keymap.ModeDetail, Selected: r}, "C", "this view only watches it"},
		{New(Proxy{}), Input{Mode: keymap.ModeLog}, "c", "it cannot cancel"},
		{New(Proxy{}), Input{Mode: keymap.ModeList}, "X", "the host's to cancel and time out"},
		{New(Proxy{}), Input{Mode: keymap.ModeList}, "n", "it sends no requests"},
		{New(Proxy{}), Input{Mode: keymap.ModeList}, "R", "nothing to reconnect"},
		{New(Proxy{}).Ended(nil), Input{Mode: keymap.ModeList}, "R", "run inflight attach again"},
	} {
		if _, act := c.m.Update(env, c.in, screentest.Press(c.key)); !strings.Contains(statusOf(act), c.words) {
			t.Errorf("%s in %v: %#v, want %q", c.key, c.in.Mode, act, c.words)
		}
	}
}

// TestBanner: the banner tells a proxy that ended from a stream that
// stopped short and from one that broke.
func TestBanner(t *testing.T) {
	env := screentest.Env()
	for _, c := range []struct {
		m     Model
		words string
	}{
		{New(Proxy{}).ServerGone().Ended(nil), "the proxy ended"},
		{New(Proxy{}).Ended(nil), "stopped before the proxy's end"},
		{New(Proxy{}).ServerGone().Ended(errors.New("reset by peer")), "stream broke (reset by peer)"},
	} {
		if b := ansi.Strip(c.m.Banner(env, 200)); !strings.Contains(b, c.words) {
			t.Errorf("banner %q, want %q", b, c.words)
		}
	}
}

// TestKeyState: acting keys are on while the proxy takes commands and
// runs; the keys that send or cancel are off.
func TestKeyState(t *testing.T) {
	on := keymap.State{Mode: keymap.ModeList, Connected: true, AnyActive: true, SelectedActive: true}
	if st := New(Proxy{Acts: true}).KeyState(on, false); !st.Acting || st.Connected || st.AnyActive || st.SelectedActive {
		t.Errorf("acting proxy: %+v", st)
	}
	if st := New(Proxy{Acts: true}).Ended(nil).KeyState(on, false); st.Acting {
		t.Error("an ended proxy's keys act")
	}
	if st := New(Proxy{}).KeyState(on, false); st.Acting {
		t.Error("a watch-only proxy's keys act")
	}
}

// Help on an ended proxy does not promise keys that act through it: none
// does any more.
func TestHelpIntroOfAnEndedProxy(t *testing.T) {
	env := screentest.Env()
	live := strings.Join(New(Proxy{Acts: true}).HelpIntro(env), "\n")
	if !strings.Contains(live, "The keys below act through the proxy") {
		t.Fatalf("a live proxy's help intro: %q", live)
	}
	ended := strings.Join(New(Proxy{Acts: true}).Ended(nil).HelpIntro(env), "\n")
	if strings.Contains(ended, "act through the proxy;") || !strings.Contains(ended, "The proxy ended") {
		t.Errorf("an ended proxy's help intro: %q", ended)
	}
}

// The proxy's keys are offered on a host request in flight or held, not
// on a finished one (h there only says it is not in flight), nor once the
// proxy ended.
func TestActingKeysOnlyWhereTheyAct(t *testing.T) {
	m := New(Proxy{Acts: true})
	for _, c := range []struct {
		st     keymap.State
		held   bool
		ended  bool
		acting bool
	}{
		{keymap.State{Mode: keymap.ModeList, HasSelection: true, SelectedActive: true}, false, false, true},
		{keymap.State{Mode: keymap.ModeList, HasSelection: true}, true, false, true},
		{keymap.State{Mode: keymap.ModeList, HasSelection: true}, false, false, false},
		{keymap.State{Mode: keymap.ModeList, HasSelection: true, SelectedActive: true}, false, true, false},
	} {
		mm := m
		if c.ended {
			mm = mm.Ended(nil)
		}
		if got := mm.KeyState(c.st, c.held).Acting; got != c.acting {
			t.Errorf("in flight %v, held %v, ended %v: acting %v, want %v", c.st.SelectedActive, c.held, c.ended, got, c.acting)
		}
	}
}
