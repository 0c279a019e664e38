package termsafe

import (
	"unicode/utf8"
)

// EscapeJSON returns JSON text with every rune a terminal could act on
// written as a \uXXXX escape: DEL, the C1 controls U+0080–U+009F (U+009B is
// a one-byte CSI), and the bidirectional controls U+061C, U+200E, U+200F,
// U+202A–U+202E and U+2066–U+2069. Go's encoder escapes C0 controls but
// leaves these raw, so a server's properly escaped "\u009b" would otherwise
// come out of --json, traces and reports as the raw control. Invalid UTF-8
// is written as \ufffd, as encoding/json reads it.
//
// In valid JSON such runes can only stand inside strings, where the escape
// means the same character: the result decodes to the same values. It
// returns b itself when nothing needed escaping (always so for ASCII text
// free of DEL), and a new slice otherwise.
func EscapeJSON(b []byte) []byte {
	i := 0
	for i < len(b) {
		c := b[i]
		if c < 0x7f {
			i++
			continue
		}
		if c == 0x7f {
			break
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 || jsonHazard(r) {
			break
		}
		i += size
	}
	if i == len(b) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	out = append(out, b[:i]...)
	for i < len(b) {
		c := b[i]
		if c < 0x7f {
			out = append(out, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			out = append(out, `\ufffd`...)
		case jsonHazard(r):
			out = append(out, '\\', 'u', hexDigits[r>>12&15], hexDigits[r>>8&15], hexDigits[r>>4&15], hexDigits[r&15])
		default:
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}

// jsonHazard reports the runes EscapeJSON escapes.
func jsonHazard(r rune) bool {
	return r == 0x7f || r >= 0x80 && r <= 0x9f || isBidi(r)
}

// isBidi reports the bidirectional embeddings, overrides, isolates and
// marks, which can make text read differently from what it is
// (CVE-2021-42574).
func isBidi(r rune) bool {
	return r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0x200e || r == 0x200f || r == 0x061c
}
