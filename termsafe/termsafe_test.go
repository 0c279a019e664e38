package termsafe

import (
	"strings"
	"testing"
)

// inert reports whether s contains nothing a terminal would interpret.
func inert(s string) bool {
	for _, r := range s {
		if r < 0x20 && r != '\n' || r == 0x7f || (r >= 0x80 && r <= 0x9f) ||
			(r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			return false
		}
	}
	return true
}

func TestLineRendersEachHazardInert(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"plain text is untouched", "slow finished in 2s", "slow finished in 2s"},
		{"CSI colour", "\x1b[31mred\x1b[0m", "␛[31mred␛[0m"},
		{"CSI cursor movement and clear screen", "\x1b[2J\x1b[H", "␛[2J␛[H"},
		{"OSC 52 clipboard write", "\x1b]52;c;ZXZpbA==\x07", "␛]52;c;ZXZpbA==␇"},
		{"OSC 8 hyperlink", "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\", "␛]8;;https://evil.example␛\\click␛]8;;␛\\"},
		{"OSC window title", "\x1b]0;pwned\x07", "␛]0;pwned␇"},
		{"DCS", "\x1bP1$r\x1b\\", "␛P1$r␛\\"},
		{"C0 bell backspace NUL", "a\x07b\x08c\x00", "a␇b␈c␀"},
		{"carriage return overwrite", "safe\rEVIL", "safe␍EVIL"},
		{"DEL", "a\x7fb", "a␡b"},
		{"C1 one-byte CSI", "a\u009b31mb", `a\u009b31mb`},
		{"C1 one-byte OSC", "a\u009d52;c;x\u009cb", `a\u009d52;c;x\u009cb`},
		{"bidi override", "user\u202Egnp.exe", `user\u202egnp.exe`},
		{"bidi isolate", "a\u2067b\u2069", `a\u2067b\u2069`},
		{"newline in a single line", "one\ntwo", "one⏎two"},
		{"tab", "a\tb", "a b"},
		{"invalid UTF-8", "a\xffb", "a\uFFFDb"},
		{"wide characters are kept", "進捗 50%", "進捗 50%"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Line(c.in)
			if got != c.want {
				t.Fatalf("Line(%q) = %q, want %q", c.in, got, c.want)
			}
			if !inert(got) || strings.Contains(got, "\n") {
				t.Fatalf("Line(%q) = %q is not inert", c.in, got)
			}
		})
	}
}

func TestBlockKeepsNewlines(t *testing.T) {
	got := Block("line one\n\x1b[31mline two\x1b[0m\n")
	want := "line one\n␛[31mline two␛[0m\n"
	if got != want {
		t.Fatalf("Block = %q, want %q", got, want)
	}
}

func TestIsSafe(t *testing.T) {
	if !IsSafe("hello, 世界") {
		t.Fatal("plain text reported unsafe")
	}
	for _, s := range []string{"\x1b[0m", "\u009b", "\u202e", "a\nb", "\xff"} {
		if IsSafe(s) {
			t.Fatalf("IsSafe(%q) = true", s)
		}
	}
}

func FuzzLine(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b]52;c;AAAA\x07", "\u009b2J", "\u202e", "\xff\xfe", "a\r\nb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Line(s)
		if !inert(out) || strings.ContainsAny(out, "\n\x1b") {
			t.Fatalf("Line(%q) = %q is not inert", s, out)
		}
		if Line(out) != out {
			t.Fatalf("Line is not idempotent on %q", s)
		}
		blk := Block(s)
		if !inert(blk) {
			t.Fatalf("Block(%q) = %q is not inert", s, blk)
		}
	})
}
