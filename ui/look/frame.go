package look

import (
	"image/color"
	"reflect"
	"sync"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/textarea"
	"charm.land/bubbles/v2/textinput"
	"charm.land/lipgloss/v2"

	"inflight/termsafe"
)

// Every frame goes through one choke point before it reaches the terminal
// (View): termsafe.Frame, which keeps only the SGR attributes of our own
// styles and draws everything else inert. The views sanitise each server
// string themselves too (m.line, m.block), and the hostile tests check that
// they do; the choke point is there so that a view that forgets — as the
// composer's field names once did — still cannot put a server's escape
// sequence, control character or bidi override on the screen.
//
// Why a choke point and not a type for sanitised text: the views build
// their text with lipgloss, the bubbles components (help, text inputs, the
// viewport) and ansi.Truncate, all of which take and return string, so a
// sanitised-text type would be converted back to string at nearly every
// call — and each conversion is a place to forget. The frame is the one
// string every view ends in.

// FrameFilter learns our styling once, from every style inflight and the
// bubbles components it uses can draw with, in both the dark and the light
// palette.
var FrameFilter = sync.OnceValue(func() *termsafe.Frame {
	var samples []string
	for _, dark := range []bool{true, false} {
		samples = styleSamples(samples, reflect.ValueOf(NewStyles(dark)))
		samples = styleSamples(samples, reflect.ValueOf(help.DefaultStyles(dark)))
		samples = styleSamples(samples, reflect.ValueOf(textinput.DefaultStyles(dark)))
		samples = styleSamples(samples, reflect.ValueOf(textarea.DefaultStyles(dark)))
	}
	return termsafe.NewFrame(samples...)
})

var (
	styleType = reflect.TypeOf(lipgloss.Style{})
	colorType = reflect.TypeOf((*color.Color)(nil)).Elem()
)

// styleSamples renders every lipgloss.Style in v (a struct, walked
// recursively) and every colour as a cursor draws it (foreground, reverse).
func styleSamples(out []string, v reflect.Value) []string {
	switch {
	case v.Type() == styleType:
		st := v.Interface().(lipgloss.Style)
		return append(out, st.Render("x"), st.Inline(true).Reverse(true).Render("x"))
	case v.Kind() == reflect.Interface && v.Type().Implements(colorType):
		if !v.IsNil() {
			c := v.Interface().(color.Color)
			out = append(out, lipgloss.NewStyle().Foreground(c).Inline(true).Reverse(true).Render("x"),
				lipgloss.NewStyle().Background(c).Render("x"))
		}
		return out
	case v.Kind() == reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				out = styleSamples(out, v.Field(i))
			}
		}
	}
	return out
}
