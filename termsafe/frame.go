package termsafe

import (
	"strings"
	"unicode/utf8"
)

// Frame is the last pass over a whole screen before it is drawn: the one
// choke point every view of the TUI goes through, so that a server string
// a view forgot to sanitise is still drawn inert.
//
// A screen holds the program's own styling, so Frame cannot render every
// escape inert as Line does. It keeps exactly one kind of escape sequence:
// SGR (ESC [ … m) whose every attribute is one the program's own styles
// use, learnt from samples of them. Everything else — OSC (window titles,
// OSC 8 hyperlinks, OSC 52 clipboard writes), DCS and the other string
// sequences, any other CSI (cursor movement, erasing), an SGR with an
// attribute the styles never use (blink, conceal, another background
// colour), raw C1 controls such as the one-byte CSI U+009B, C0 controls
// (CR, backspace, BEL), DEL, bidirectional controls and invalid UTF-8 — is
// shown as a visible placeholder, as Block shows it. Newlines are kept.
//
// A Frame is immutable once built and safe for concurrent use.
type Frame struct {
	sgr map[string]bool
}

// NewFrame returns a Frame that keeps the SGR attributes found in samples
// (strings rendered with the program's styles) and the reset.
func NewFrame(samples ...string) *Frame {
	f := &Frame{sgr: map[string]bool{"": true, "0": true}}
	for _, s := range samples {
		for i := 0; i < len(s); i++ {
			if s[i] != 0x1b {
				continue
			}
			if params, n, ok := parseSGR(s[i:]); ok {
				for _, a := range sgrAttributes(params) {
					f.sgr[a] = true
				}
				i += n - 1
			}
		}
	}
	return f
}

// Allows reports whether the SGR sequence seq (ESC [ params m) would be
// kept.
func (f *Frame) Allows(seq string) bool {
	params, n, ok := parseSGR(seq)
	return ok && n == len(seq) && f.allowed(params)
}

func (f *Frame) allowed(params string) bool {
	return eachSGRAttribute(params, func(a string) bool { return f.sgr[a] })
}

// Clean returns s with everything but newlines, printable text and the
// allowed SGR sequences rendered inert. It returns s itself when nothing
// needed changing.
func (f *Frame) Clean(s string) string {
	// Find the first byte that needs a look; most of a screen is plain
	// text and the program's own styling.
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= 0x20 && c < 0x7f || c == '\n' {
			i++
			continue
		}
		if c == 0x1b {
			if params, n, ok := parseSGR(s[i:]); ok && f.allowed(params) {
				i += n
				continue
			}
			break
		}
		if c >= 0x80 {
			r, size := utf8.DecodeRuneInString(s[i:])
			if (r != utf8.RuneError || size > 1) && placeholder(r, true) == "" {
				i += size
				continue
			}
		}
		break
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		switch {
		case c >= 0x20 && c < 0x7f || c == '\n':
			b.WriteByte(c)
			i++
		case c == 0x1b:
			if params, n, ok := parseSGR(s[i:]); ok && f.allowed(params) {
				b.WriteString(s[i : i+n])
				i += n
				continue
			}
			b.WriteString("␛")
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			i += size
			if r == utf8.RuneError && size <= 1 {
				b.WriteRune('\uFFFD')
				continue
			}
			if p := placeholder(r, true); p != "" && p != "\x00keep" {
				b.WriteString(p)
				continue
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}

// parseSGR reads an SGR sequence at the start of s: ESC [, parameters made
// of digits, ';' and ':' only, and 'm'. It returns the parameters and the
// sequence's length.
func parseSGR(s string) (params string, n int, ok bool) {
	if len(s) < 3 || s[0] != 0x1b || s[1] != '[' {
		return "", 0, false
	}
	for j := 2; j < len(s) && j < 2+128; j++ {
		switch c := s[j]; {
		case c >= '0' && c <= '9' || c == ';' || c == ':':
		case c == 'm':
			return s[2:j], j + 1, true
		default:
			return "", 0, false
		}
	}
	return "", 0, false
}

// eachSGRAttribute calls fn with each attribute of SGR parameters: each
// number, with the extended colours (38, 48, 58 followed by 5;n or
// 2;r;g;b) taken whole, so that "1;38;2;90;63;192" gives "1" and
// "38;2;90;63;192". Empty parameters give one empty attribute (the reset).
// The attributes are substrings of params, so nothing is allocated (a
// screen holds hundreds of sequences). It stops when fn returns false, and
// reports whether fn always returned true.
func eachSGRAttribute(params string, fn func(string) bool) bool {
	if params == "" {
		return fn("")
	}
	// fields are the ';'-separated parameters, walked by index.
	next := func(i int) int { // the end of the field starting at i
		if j := strings.IndexByte(params[i:], ';'); j >= 0 {
			return i + j
		}
		return len(params)
	}
	for i := 0; i <= len(params); {
		end := next(i)
		field := params[i:end]
		if (field == "38" || field == "48" || field == "58") && end < len(params) {
			kindEnd := next(end + 1)
			take := 0
			switch params[end+1 : kindEnd] {
			case "5":
				take = 1
			case "2":
				take = 3
			}
			j := kindEnd
			for k := 0; k < take && j < len(params); k++ {
				j = next(j + 1)
			}
			if take > 0 && j > kindEnd && strings.Count(params[kindEnd:j], ";") == take {
				end = j
				field = params[i:end]
			}
		}
		if !fn(field) {
			return false
		}
		i = end + 1
	}
	return true
}

// sgrAttributes is eachSGRAttribute's attributes as a slice.
func sgrAttributes(params string) []string {
	var out []string
	eachSGRAttribute(params, func(a string) bool {
		out = append(out, a)
		return true
	})
	return out
}
