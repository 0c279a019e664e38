// Package termsafe renders text that came from a server inert before it
// reaches a terminal: escape sequences (CSI, OSC — including OSC 52 clipboard
// writes and OSC 8 links — DCS and the rest), C0 and C1 control characters,
// DEL, bidirectional overrides and invalid UTF-8 are all shown as visible
// placeholders instead of being interpreted. Showing them, rather than
// dropping them, is deliberate: a debugger should let people see that a
// server sent an escape sequence.
package termsafe

import (
	"strings"
	"unicode/utf8"
)

// Line makes s safe for a single terminal line: newlines show as ⏎ and tabs
// as a space.
func Line(s string) string { return clean(s, false) }

// Block makes s safe for a multi-line region: newlines are kept, tabs become
// spaces, and everything else is as in Line.
func Block(s string) string { return clean(s, true) }

// IsSafe reports whether s would be unchanged by Line.
func IsSafe(s string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			return false
		}
		if placeholder(r, false) != "" {
			return false
		}
		i += size
	}
	return true
}

func clean(s string, multiline bool) string {
	if IsSafe(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r == utf8.RuneError && size <= 1 {
			b.WriteRune('\uFFFD')
			continue
		}
		if p := placeholder(r, multiline); p != "" {
			if p != "\x00keep" {
				b.WriteString(p)
			} else {
				b.WriteRune(r)
			}
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// placeholder returns the visible stand-in for a dangerous rune, "" for a
// rune that is safe as it is, or "\x00keep" for a rune kept in multi-line
// text.
func placeholder(r rune, multiline bool) string {
	switch {
	case r == '\n':
		if multiline {
			return "\x00keep"
		}
		return "⏎"
	case r == '\t':
		return " "
	case r == '\r':
		return "␍"
	case r == 0x1b:
		return "␛"
	case r < 0x20:
		// C0 controls as Unicode control pictures (U+2400 block).
		return string(rune(0x2400 + r))
	case r == 0x7f:
		return "␡"
	case r >= 0x80 && r <= 0x9f:
		// C1 controls: 0x9b is a one-byte CSI, 0x9d a one-byte OSC.
		return "\\u00" + hex2(byte(r))
	case isBidi(r):
		// Bidirectional embeddings, overrides and isolates can make text
		// read differently from what it is (CVE-2021-42574).
		return "\\u" + hex4(r)
	}
	return ""
}

const hexDigits = "0123456789abcdef"

func hex2(b byte) string { return string([]byte{hexDigits[b>>4], hexDigits[b&15]}) }

func hex4(r rune) string {
	return string([]byte{hexDigits[r>>12&15], hexDigits[r>>8&15], hexDigits[r>>4&15], hexDigits[r&15]})
}
