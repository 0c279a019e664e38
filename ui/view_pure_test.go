package ui

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"charm.land/bubbles/v2/viewport"

	"inflight/event"
	"inflight/ui/detail"
	"inflight/wire"
)

// TestViewChangesNothing holds View to rendering: on every screen, the
// whole model (the tracker, the sub-views, the bubbles components inside
// them, everything reachable from it) is deep-copied, View is called twice,
// and the model must equal its copy. A View that sets a size, scrolls, or
// fills a cache fails here with the path of the field it changed.
func TestViewChangesNothing(t *testing.T) {
	for _, sc := range []struct {
		name string
		// w, h is the window; setup brings the model to the screen.
		w, h  int
		setup func(h *harness)
	}{
		{"list", 80, 24, func(h *harness) {}},
		{"list-scrolled-up", 80, 12, func(h *harness) { h.key("g", "down") }},
		{"list-narrow", 40, 10, func(h *harness) {}},
		{"detail-late-response", 80, 24, func(h *harness) {
			h.m.screens.list = h.m.screens.list.Select(wire.IntID(3), false)
			h.key("enter")
		}},
		{"detail-running", 140, 40, func(h *harness) { h.key("enter") }},
		{"detail-scrolled", 60, 14, func(h *harness) { h.key("enter", "down", "down", "G") }},
		{"log", 80, 24, func(h *harness) { h.key("l") }},
		{"log-moved", 80, 24, func(h *harness) { h.key("l", "up", "up") }},
		{"log-filter", 80, 24, func(h *harness) { h.key("l", "/"); h.typeText("progress") }},
		{"log-entry", 80, 24, func(h *harness) { h.key("l", "up", "enter") }},
		{"stderr", 80, 24, func(h *harness) { h.key("s") }},
		{"help", 80, 24, func(h *harness) { h.key("?") }},
		{"help-from-detail", 140, 40, func(h *harness) { h.key("enter", "?") }},
		{"quit-prompt", 80, 24, func(h *harness) { h.key("q") }},
		{"reason-prompt", 80, 24, func(h *harness) { h.key("C"); h.typeText("because") }},
		{"composer-pick", 80, 24, func(h *harness) { h.key("n") }},
		{"composer-form", 80, 24, func(h *harness) { h.key("n", "enter"); h.typeText("3") }},
		{"composer-json", 140, 40, func(h *harness) { h.key("n", "enter", "ctrl+e") }},
		{"composer-kinds", 80, 24, func(h *harness) { h.key("n", "right", "right") }},
		{"connection-lost", 80, 24, func(h *harness) {
			h.events(event.Event{Kind: event.TransportClosed, Err: fmt.Errorf("the server exited: exit status 2")})
		}},
	} {
		t.Run(sc.name, func(t *testing.T) {
			h := everyState(t, sc.w, sc.h)
			sc.setup(h)
			before := deepCopy(reflect.ValueOf(h.m).Elem())
			first := h.screen()
			if diff := deepDiff(before, reflect.ValueOf(h.m).Elem(), "Model"); diff != "" {
				t.Fatalf("View changed the model: %s", diff)
			}
			// The clock moves between frames; a frame still changes nothing,
			// and the same instant draws the same screen.
			if second := h.screen(); second != first {
				t.Fatalf("two frames at one instant differ:\n%s\n----\n%s", first, second)
			}
			h.now = h.now.Add(150 * time.Millisecond)
			_ = h.m.View()
			if diff := deepDiff(before, reflect.ValueOf(h.m).Elem(), "Model"); diff != "" {
				t.Fatalf("View changed the model a frame later: %s", diff)
			}
		})
	}
}

// The check itself must see a change, or the test above proves nothing.
func TestDeepDiffSeesChanges(t *testing.T) {
	h := everyState(t, 80, 24)
	h.key("enter")
	m := reflect.ValueOf(h.m).Elem()
	for _, c := range []struct {
		name   string
		change func()
	}{
		{"list window", func() {
			h.m.screens.list = h.m.screens.list.Layout(h.m.env(), h.m.screens.listInput(h.m.conn.state, &h.m.feed, h.m.opts.Attach, h.m.opts.Redact), h.m.size.width, 3)
		}},
		{"viewport height", func() {
			h.m.screens.detail = h.m.screens.detail.Layout(h.m.env(), detail.Input{Dark: h.m.theme.dark, Chop: h.m.pager.chop}, h.m.size.width, h.m.chrome().bodyHeight(h.m.size.height)+1)
		}},
		{"viewport scroll", func() { h.m.screens.detail, _ = h.m.screens.detail.Update(h.m.env(), keyMsg("down")) }},
		{"filter width", func() { h.m.screens.logv = h.m.screens.logv.Layout(h.m.env(), 3, 24) }},
		{"a request in the tracker", func() { h.m.tracker.At(0).Notifications++ }},
		{"a cache entry", func() {
			// The list's summary of #1 (tools/list, completed) moves to
			// another key: one entry of a map inside a screen changes.
			if h.m.screens.list.Summary(wire.IntID(1)) == "" {
				t.Fatal("no summary of #1 to move")
			}
			h.m.screens.list = h.m.screens.list.Renamed(wire.IntID(1), wire.IntID(999))
		}},
	} {
		before := deepCopy(m)
		c.change()
		if deepDiff(before, m, "Model") == "" {
			t.Errorf("deepDiff missed a change of the %s", c.name)
		}
	}
}

// deepCopy copies v and everything it reaches, unexported fields too,
// keeping pointer aliasing (two pointers to one thing stay two pointers to
// one copy). Functions and channels are copied as references.
func deepCopy(v reflect.Value) snapshot {
	c := copier{memo: map[ptrKey]reflect.Value{}, back: map[uintptr]reflect.Value{}}
	out := reflect.New(v.Type()).Elem()
	c.into(out, open(v))
	return snapshot{v: out, back: c.back}
}

// snapshot is a deep copy, and for each pointer in it the original it
// copies (to find an entry of a map keyed by pointers in the original).
type snapshot struct {
	v    reflect.Value
	back map[uintptr]reflect.Value
}

type ptrKey struct {
	p uintptr
	t reflect.Type
}

type copier struct {
	memo map[ptrKey]reflect.Value
	back map[uintptr]reflect.Value // a copy's pointer → the original
}

// open makes an addressable value usable whatever the field it came from
// was exported or not.
func open(v reflect.Value) reflect.Value {
	if v.CanAddr() {
		return reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
	}
	return v
}

// opaque reports whether a type is compared and copied as it is: the
// memoising cache inside bubbles' textarea is filled by its own View (a
// cache of wrapped lines, not state the model keeps).
func opaque(t reflect.Type) bool { return strings.Contains(t.PkgPath(), "memoization") }

// textareaBuffer reports whether a field belongs to the rendering bubbles'
// textarea does on every View: textarea.Model.View puts its text into a
// viewport it holds by pointer (its render buffer, which also clears the
// buffer's highlights), so only that viewport's size and scroll position
// are state to compare.
func textareaBuffer(t reflect.Type, path string) bool {
	if t != reflect.TypeOf(viewport.Model{}) || !strings.HasSuffix(path[:strings.LastIndex(path, ".")], ".json.viewport") {
		return false
	}
	switch path[strings.LastIndex(path, ".")+1:] {
	case "width", "height", "yOffset", "xOffset":
		return false
	}
	return true
}

func (c *copier) into(dst, src reflect.Value) {
	switch src.Kind() {
	case reflect.Array:
		for i := 0; i < src.Len(); i++ {
			c.into(open(dst.Index(i)), open(src.Index(i)))
		}
	case reflect.Struct:
		if opaque(src.Type()) {
			dst.Set(src)
			return
		}
		for i := 0; i < src.NumField(); i++ {
			c.into(open(dst.Field(i)), open(src.Field(i)))
		}
	case reflect.Slice:
		if src.IsNil() {
			return
		}
		s := reflect.MakeSlice(src.Type(), src.Len(), src.Len())
		for i := 0; i < src.Len(); i++ {
			c.into(open(s.Index(i)), open(src.Index(i)))
		}
		dst.Set(s)
	case reflect.Map:
		if src.IsNil() {
			return
		}
		mp := reflect.MakeMapWithSize(src.Type(), src.Len())
		it := src.MapRange()
		for it.Next() {
			k := reflect.New(src.Type().Key()).Elem()
			c.into(k, addressable(it.Key()))
			val := reflect.New(src.Type().Elem()).Elem()
			c.into(val, addressable(it.Value()))
			mp.SetMapIndex(k, val)
		}
		dst.Set(mp)
	case reflect.Pointer:
		if src.IsNil() {
			return
		}
		key := ptrKey{src.Pointer(), src.Type()}
		if p, ok := c.memo[key]; ok {
			dst.Set(p)
			return
		}
		p := reflect.New(src.Type().Elem())
		c.memo[key] = p
		c.back[p.Pointer()] = src
		if opaque(src.Type().Elem()) {
			p = src // shared, as it is
			c.memo[key] = p
		} else {
			c.into(p.Elem(), open(src.Elem()))
		}
		dst.Set(p)
	case reflect.Interface:
		if src.IsNil() {
			return
		}
		val := reflect.New(src.Elem().Type()).Elem()
		c.into(val, addressable(src.Elem()))
		dst.Set(val)
	default:
		dst.Set(src)
	}
}

// addressable copies a value that is not addressable (a map's key or
// value, an interface's content) into one that is, so that open works on
// its fields.
func addressable(v reflect.Value) reflect.Value {
	a := reflect.New(v.Type()).Elem()
	a.Set(v)
	return a
}

// deepDiff says where a and b differ ("" when they do not): functions and
// channels must be the same ones; everything else is compared by value.
func deepDiff(a snapshot, b reflect.Value, path string) string {
	return (&differ{seen: map[[2]uintptr]bool{}, back: a.back}).diff(open(a.v), open(b), path)
}

type differ struct {
	seen map[[2]uintptr]bool
	back map[uintptr]reflect.Value
}

func (d *differ) diff(a, b reflect.Value, path string) string {
	if a.Type() != b.Type() {
		return fmt.Sprintf("%s: type %s became %s", path, a.Type(), b.Type())
	}
	switch a.Kind() {
	case reflect.Array:
		for i := 0; i < a.Len(); i++ {
			if s := d.diff(open(a.Index(i)), open(b.Index(i)), fmt.Sprintf("%s[%d]", path, i)); s != "" {
				return s
			}
		}
	case reflect.Struct:
		if opaque(a.Type()) {
			return ""
		}
		for i := 0; i < a.NumField(); i++ {
			p := path + "." + a.Type().Field(i).Name
			if textareaBuffer(a.Type(), p) {
				continue
			}
			if s := d.diff(open(a.Field(i)), open(b.Field(i)), p); s != "" {
				return s
			}
		}
	case reflect.Slice:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return fmt.Sprintf("%s: length %d became %d", path, a.Len(), b.Len())
		}
		for i := 0; i < a.Len(); i++ {
			if s := d.diff(open(a.Index(i)), open(b.Index(i)), fmt.Sprintf("%s[%d]", path, i)); s != "" {
				return s
			}
		}
	case reflect.Map:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return fmt.Sprintf("%s: %d entries became %d", path, a.Len(), b.Len())
		}
		it := a.MapRange()
		for it.Next() {
			k := it.Key()
			if k.Kind() == reflect.Pointer && !k.IsNil() {
				// The copy's key stands for the original's.
				if orig, ok := d.back[k.Pointer()]; ok {
					k = orig.Convert(k.Type())
				}
			}
			bv := b.MapIndex(k)
			if !bv.IsValid() {
				return fmt.Sprintf("%s[%v]: gone", path, it.Key())
			}
			if s := d.diff(addressable(it.Value()), addressable(bv), fmt.Sprintf("%s[%v]", path, it.Key())); s != "" {
				return s
			}
		}
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return path + ": nil changed"
			}
			return ""
		}
		if opaque(a.Type().Elem()) {
			return ""
		}
		pair := [2]uintptr{a.Pointer(), b.Pointer()}
		if d.seen[pair] {
			return ""
		}
		d.seen[pair] = true
		return d.diff(open(a.Elem()), open(b.Elem()), path)
	case reflect.Interface:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return path + ": nil changed"
			}
			return ""
		}
		return d.diff(addressable(a.Elem()), addressable(b.Elem()), path)
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		if a.Pointer() != b.Pointer() {
			return path + ": replaced"
		}
	case reflect.Float32, reflect.Float64:
		if math.Float64bits(a.Float()) != math.Float64bits(b.Float()) {
			return fmt.Sprintf("%s: %v became %v", path, a.Float(), b.Float())
		}
	case reflect.Complex64, reflect.Complex128:
		if a.Complex() != b.Complex() {
			return fmt.Sprintf("%s: %v became %v", path, a.Complex(), b.Complex())
		}
	case reflect.String:
		if a.String() != b.String() {
			return fmt.Sprintf("%s: %.60q became %.60q", path, a.String(), b.String())
		}
	case reflect.Bool:
		if a.Bool() != b.Bool() {
			return fmt.Sprintf("%s: %v became %v", path, a.Bool(), b.Bool())
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if a.Int() != b.Int() {
			return fmt.Sprintf("%s: %d became %d", path, a.Int(), b.Int())
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if a.Uint() != b.Uint() {
			return fmt.Sprintf("%s: %d became %d", path, a.Uint(), b.Uint())
		}
	}
	return ""
}
