package keymap

import (
	"testing"

	"charm.land/bubbles/v2/key"
)

// TestNoTwoActiveBindingsShareAKey checks every screen: a key must mean one
// thing wherever it is enabled.
func TestNoTwoActiveBindingsShareAKey(t *testing.T) {
	for _, mode := range []Mode{ModeList, ModeDetail, ModeLog, ModeStderr, ModeHelp, ModePrompt, ModeComposer, ModeAnswer} {
		k := Default()
		k.SetState(State{Mode: mode, HasSelection: true, SelectedActive: true, SelectedTimed: true, SelectedCancelling: true, HasRequests: true, AnyActive: true, Connected: true, Lost: true, HasStderr: true, SelectedAsks: true, Replaying: true, HasAuth: true, Acting: true})
		seen := map[string]string{}
		for _, b := range k.All() {
			if !b.Enabled() {
				continue
			}
			for _, name := range b.Keys() {
				if other, dup := seen[name]; dup {
					t.Errorf("mode %d: key %q is bound to both %q and %q", mode, name, other, b.Help().Desc)
				}
				seen[name] = b.Help().Desc
			}
		}
	}
}

// TestWaterfallKeysClashWithNone: drawn as a waterfall, the list keeps
// its keys on the selection (c, enter, +, -, …), the proxy's acting keys
// stay as they are, and the waterfall's own keys share a key with none of
// them, nor with the replay scrubber's.
func TestWaterfallKeysClashWithNone(t *testing.T) {
	k := Default()
	k.SetState(State{Mode: ModeList, Waterfall: true, Acting: true, HasSelection: true, SelectedActive: true, SelectedTimed: true, SelectedCancelling: true,
		HasRequests: true, AnyActive: true, Connected: true, Lost: true, HasStderr: true, SelectedAsks: true, HasAuth: true})
	seen := map[string]string{}
	for _, b := range k.All() {
		if !b.Enabled() {
			continue
		}
		for _, name := range b.Keys() {
			if other, dup := seen[name]; dup {
				t.Errorf("key %q is bound to both %q and %q", name, other, b.Help().Desc)
			}
			seen[name] = b.Help().Desc
		}
	}
	own := []key.Binding{k.Waterfall, k.ZoomIn, k.ZoomOut, k.PanLeft, k.PanRight, k.FitAll, k.FollowNow, k.Summary}
	for _, b := range own {
		if !b.Enabled() {
			t.Errorf("%q disabled in the waterfall", b.Help().Desc)
		}
		for _, name := range b.Keys() {
			switch name {
			case "[", "]", ",", ".", "0", "$", "<", ">", "space":
				t.Errorf("%q takes %q, which the replay scrubber keeps", b.Help().Desc, name)
			}
		}
	}
	if k.FilterList.Enabled() || k.ClearFinished.Enabled() {
		t.Error("f or x enabled in the waterfall, which draws every request")
	}
	if !k.Cancel.Enabled() || !k.Detail.Enabled() || !k.Longer.Enabled() || !k.Hold.Enabled() {
		t.Error("the list's keys on the selection are off in the waterfall")
	}
	k.SetState(State{Mode: ModeList, HasSelection: true, HasRequests: true})
	if !k.Waterfall.Enabled() || k.Waterfall.Help().Desc != "waterfall" {
		t.Errorf("v in the list: enabled %v, %q; want it to open the waterfall", k.Waterfall.Enabled(), k.Waterfall.Help().Desc)
	}
	own = []key.Binding{k.ZoomIn, k.ZoomOut, k.PanLeft, k.PanRight, k.FitAll, k.FollowNow, k.Summary}
	for _, b := range own {
		if b.Enabled() {
			t.Errorf("%q enabled in the list", b.Help().Desc)
		}
	}
	if !k.FilterList.Enabled() {
		t.Error("f disabled in the list")
	}
}

// TestActingKeysClashWithNone: the keys of inflight attach that act
// through the proxy share no key with any binding, whatever else is on.
func TestActingKeysClashWithNone(t *testing.T) {
	for _, mode := range []Mode{ModeList, ModeDetail, ModeLog} {
		k := Default()
		k.SetState(State{Mode: mode, Acting: true, HasSelection: true, SelectedActive: true, SelectedTimed: true, SelectedCancelling: true,
			HasRequests: true, AnyActive: true, Connected: true, Lost: true, HasStderr: true, SelectedAsks: true, HasEntry: true})
		seen := map[string]string{}
		for _, b := range k.All() {
			if !b.Enabled() {
				continue
			}
			for _, name := range b.Keys() {
				if other, dup := seen[name]; dup {
					t.Errorf("mode %d: key %q is bound to both %q and %q", mode, name, other, b.Help().Desc)
				}
				seen[name] = b.Help().Desc
			}
		}
		if on := k.Hold.Enabled(); on != (mode != ModeLog) {
			t.Errorf("mode %d: hold enabled %v", mode, on)
		}
	}
	k := Default()
	k.SetState(State{Mode: ModeList, HasSelection: true, SelectedActive: true, Connected: true})
	for _, b := range []key.Binding{k.Delay, k.Hold, k.Release, k.Drop, k.CancelUp, k.CancelSilent, k.Race} {
		if b.Enabled() {
			t.Errorf("%q enabled outside a view that acts through a proxy", b.Help().Desc)
		}
	}
}

func TestKeysFollowState(t *testing.T) {
	k := Default()
	k.SetState(State{Mode: ModeList, HasSelection: true, Connected: true})
	for _, b := range []key.Binding{k.Cancel, k.CancelReason, k.CancelAll, k.Longer, k.Shorter, k.Reconnect} {
		if b.Enabled() {
			t.Errorf("%q enabled with nothing in flight and the connection up", b.Help().Desc)
		}
	}
	if !k.New.Enabled() || !k.Detail.Enabled() || !k.Reissue.Enabled() {
		t.Error("n, enter or r disabled on a connected list with a selection")
	}
	k.SetState(State{Mode: ModeList, HasSelection: true, SelectedActive: true, SelectedTimed: true, AnyActive: true, Connected: true})
	for _, b := range []key.Binding{k.Cancel, k.CancelReason, k.CancelAll, k.Longer, k.Shorter} {
		if !b.Enabled() {
			t.Errorf("%q disabled on a running request", b.Help().Desc)
		}
	}
	k.SetState(State{Mode: ModeList, Lost: true})
	if !k.Reconnect.Enabled() || k.New.Enabled() {
		t.Error("after a lost connection R must act and n must not")
	}
	k.SetState(State{Mode: ModeLog, Filtering: true})
	if k.Quit.Enabled() || k.Up.Enabled() || !k.ClearFilter.Enabled() {
		t.Error("while typing a filter, q and the arrows belong to the input")
	}
}

func TestHelpListsOnlyEnabledKeys(t *testing.T) {
	k := Default()
	k.SetState(State{Mode: ModeList, Connected: true})
	for _, b := range k.ShortHelp() {
		if b.Enabled() && b.Help().Key == "" {
			t.Errorf("enabled binding without help text: %v", b.Keys())
		}
	}
}

// TestAnswerKeyFollowsState: a answers only what waits for the user, and
// the answer form types text (q and ? are letters there).
func TestAnswerKeyFollowsState(t *testing.T) {
	k := Default()
	k.SetState(State{Mode: ModeList, HasSelection: true, SelectedActive: true, Connected: true})
	if k.Answer.Enabled() {
		t.Error("a enabled on a request that asks nothing")
	}
	k.SetState(State{Mode: ModeList, HasSelection: true, SelectedActive: true, Connected: true, SelectedAsks: true})
	if !k.Answer.Enabled() {
		t.Error("a disabled on a request waiting for the user")
	}
	if h := k.Detail.Help(); h.Key != "enter" || h.Desc != "answer" {
		t.Errorf("enter on a row waiting for the user opens the answer form; its help says %q %q", h.Key, h.Desc)
	}
	k.SetState(State{Mode: ModeList, HasSelection: true, SelectedIncoming: true, SelectedAsks: true})
	if h := k.Detail.Help(); !k.Detail.Enabled() || h.Desc != "answer" {
		t.Errorf("enter on a server's question that waits answers it; its help says %q (enabled %v)", h.Desc, k.Detail.Enabled())
	}
	k.SetState(State{Mode: ModeList, HasSelection: true, SelectedActive: true, Connected: true})
	if h := k.Detail.Help(); h.Desc != "details" {
		t.Errorf("enter on a row that asks nothing opens its detail; its help says %q", h.Desc)
	}
	k.SetState(State{Mode: ModeAnswer, HasSelection: true, SelectedAsks: true})
	if k.Quit.Enabled() || k.Help.Enabled() || k.Answer.Enabled() || !k.Back.Enabled() {
		t.Error("in the answer form only esc (and ctrl+c) of the main keys act")
	}
}

// ScreenHelp lists every key of the screen, saying which act now: on a
// finished selection, c is listed and does not act; n acts.
func TestScreenHelpListsTheScreensKeys(t *testing.T) {
	k := Default()
	k.SetState(State{Mode: ModeList, HasSelection: true, HasRequests: true, Connected: true})
	found := map[string]bool{}
	for _, col := range k.ScreenHelp() {
		for _, b := range col {
			found[b.Help().Desc] = b.Now
		}
	}
	for desc, now := range map[string]bool{"cancel": false, "cancel with reason": false, "timeout +10s": false, "new request": true, "details": true} {
		if got, ok := found[desc]; !ok || got != now {
			t.Errorf("%q: listed %v, acting now %v; want listed, acting now %v", desc, ok, got, now)
		}
	}
	if _, ok := found["reconnect"]; ok {
		t.Error("R is listed on a connection that is not lost")
	}
	if k.Cancel.Enabled() {
		t.Error("ScreenHelp enabled c on the key map itself")
	}
}

// TestReplayKeysOnlyInAReplay: the scrubber's keys act on every screen
// that draws the run, in a replay only, and never while a filter is typed.
func TestReplayKeysOnlyInAReplay(t *testing.T) {
	k := Default()
	scrubber := func() []key.Binding { return k.ReplayHelp() }
	k.SetState(State{Mode: ModeList, HasSelection: true, HasRequests: true, Connected: true})
	for _, b := range scrubber() {
		if b.Enabled() {
			t.Errorf("%q enabled outside a replay", b.Help().Desc)
		}
	}
	for _, mode := range []Mode{ModeList, ModeDetail, ModeLog, ModeStderr, ModeAuth} {
		k.SetState(State{Mode: mode, Replaying: true})
		for _, b := range scrubber() {
			if !b.Enabled() {
				t.Errorf("mode %d: %q disabled in a replay", mode, b.Help().Desc)
			}
		}
	}
	for _, s := range []State{{Mode: ModeLog, Replaying: true, Filtering: true}, {Mode: ModeHelp, Replaying: true}, {Mode: ModePrompt, Replaying: true}} {
		k.SetState(s)
		for _, b := range scrubber() {
			if b.Enabled() {
				t.Errorf("%+v: %q enabled", s, b.Help().Desc)
			}
		}
	}
	if len(scrubber()) != 9 {
		t.Errorf("%d scrubber keys", len(scrubber()))
	}
}
