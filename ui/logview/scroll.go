package logview

import (
	"sort"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"inflight/keymap"
	"inflight/ui/look"
	"inflight/ui/screen"
)

// scrollView is a window over an append-only sequence (the protocol log,
// stderr) whose oldest items may be dropped. It follows the newest items
// until the user scrolls; from then on it is anchored on the absolute
// position of its first row, so arriving items do not move what is being
// read.
type scrollView struct {
	follow bool
	top    int64 // absolute position of the first row when not following
	rows   int
}

// items is the sequence a scrollView shows: n items whose absolute
// positions (Total-based, so they survive eviction) abs returns, ascending.
type items struct {
	n   int
	abs func(i int) int64
}

// start is the index of the first visible item.
func (v *scrollView) start(it items) int {
	rows := max(1, v.rows)
	last := max(0, it.n-rows) // the first index of the bottom page
	if v.follow {
		return last
	}
	i := sort.Search(it.n, func(i int) bool { return it.abs(i) >= v.top })
	return min(i, last)
}

// scrollTo puts item i (clamped to the pages there are) at the top of the
// window; the bottom page follows the newest items again.
func (v *scrollView) scrollTo(i int, it items) {
	last := max(0, it.n-max(1, v.rows))
	i = min(max(i, 0), last)
	v.follow = i >= last
	if it.n > 0 {
		v.top = it.abs(i)
	}
}

// scrollKey moves the window; it reports whether the key was used.
func (v *scrollView) scrollKey(k *keymap.KeyMap, msg tea.KeyPressMsg, it items) bool {
	i, ok := moved(k, msg, v.start(it), v.rows, it.n)
	if !ok {
		return false
	}
	v.scrollTo(i, it)
	return true
}

// moved is index i after a movement key in a window of rows (a page is
// one row less, so that a line of context stays), with end as where the
// bottom key goes; ok is false for any other key. The caller clamps.
func moved(k *keymap.KeyMap, msg tea.KeyPressMsg, i, rows, end int) (int, bool) {
	page := max(1, rows-1)
	switch {
	case key.Matches(msg, k.Up):
		return i - 1, true
	case key.Matches(msg, k.Down):
		return i + 1, true
	case key.Matches(msg, k.PageUp):
		return i - page, true
	case key.Matches(msg, k.PageDown):
		return i + page, true
	case key.Matches(msg, k.Top):
		return 0, true
	case key.Matches(msg, k.Bottom):
		return end, true
	}
	return i, false
}

// wheelStep is how many rows a notch of the wheel moves: up is back, down
// is on, sideways is no row.
func wheelStep(msg tea.MouseWheelMsg) int {
	switch msg.Button {
	case tea.MouseWheelUp:
		return -look.WheelRows
	case tea.MouseWheelDown:
		return look.WheelRows
	}
	return 0
}

// run asks the root to run cmd, and asks nothing when there is none.
func run(cmd tea.Cmd) screen.Action {
	if cmd == nil {
		return nil
	}
	return screen.Run{Cmd: cmd}
}
