package termsafe

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// ours stands for the program's own styles: bold accent text, a selected
// row's background, a reverse-video cursor.
var ours = []string{
	"\x1b[1;38;2;90;63;192mTitle\x1b[m",
	"\x1b[48;2;46;42;71mselected\x1b[m",
	"\x1b[7mc\x1b[m",
	"\x1b[38;5;240mdim\x1b[0m",
}

// hostile is every kind of sequence issue 14 saw reach the terminal, as a
// server string a view forgot to sanitise would put it in the frame.
var hostile = map[string]string{
	"OSC 8 hyperlink":        "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\",
	"OSC 52 clipboard":       "\x1b]52;c;ZXZpbA==\x07",
	"blink":                  "\x1b[5mblink\x1b[25m",
	"foreign background":     "\x1b[41mred\x1b[49m",
	"blink with our bold":    "\x1b[1;5mx",
	"conceal":                "\x1b[8mhidden",
	"raw C1 CSI":             "\u009b31mred",
	"raw C1 OSC":             "\u009d0;title\u009c",
	"bidi override":          "user\u202Egnp.exe",
	"bidi isolate":           "a\u2067b\u2069",
	"CR rewrites the line":   "safe\rEVIL",
	"backspaces":             "abc\x08\x08\x08XYZ",
	"DCS":                    "\x1bP1$r\x1b\\",
	"cursor movement":        "\x1b[2J\x1b[H",
	"private mode":           "\x1b[?1049l",
	"SGR with intermediates": "\x1b[1 m",
	"BEL":                    "ding\x07",
	"DEL":                    "a\x7fb",
	"invalid UTF-8":          "a\xff\xfeb",
}

func TestFrameKeepsOurStylingAndNewlines(t *testing.T) {
	f := NewFrame(ours...)
	frame := strings.Join(ours, "\n") + "\n  plain ✓ ⊘ █ 進捗\n\x1b[1mbold\x1b[m \x1b[1;7mboth\x1b[m"
	if got := f.Clean(frame); got != frame {
		t.Fatalf("Clean changed our own frame:\n got %q\nwant %q", got, frame)
	}
}

func TestFrameRendersEverythingElseInert(t *testing.T) {
	f := NewFrame(ours...)
	for name, h := range hostile {
		t.Run(name, func(t *testing.T) {
			frame := ours[1] + " | " + h + " | " + ours[0] + "\nnext line"
			got := f.Clean(frame)
			if !strings.HasPrefix(got, ours[1]+" | ") || !strings.HasSuffix(got, " | "+ours[0]+"\nnext line") {
				t.Fatalf("our styling around it was not kept: %q", got)
			}
			mid := strings.TrimSuffix(strings.TrimPrefix(got, ours[1]+" | "), " | "+ours[0]+"\nnext line")
			if !inert(mid) || strings.ContainsAny(mid, "\x1b\n") {
				t.Fatalf("Clean(%q) left %q", h, mid)
			}
		})
	}
}

func FuzzFrame(f *testing.F) {
	for _, h := range hostile {
		f.Add(h)
	}
	for _, s := range ours {
		f.Add(s)
	}
	fr := NewFrame(ours...)
	f.Fuzz(func(t *testing.T, s string) {
		out := fr.Clean(s)
		// Whatever is left of an ESC must be an SGR of ours.
		for i := 0; i < len(out); i++ {
			if out[i] == 0x1b {
				_, n, ok := parseSGR(out[i:])
				if !ok || !fr.Allows(out[i:i+n]) {
					t.Fatalf("Clean(%q) = %q keeps a foreign escape at %d", s, out, i)
				}
				i += n - 1
			}
		}
		if !inert(strings.Map(func(r rune) rune {
			if r == 0x1b {
				return 'E'
			}
			return r
		}, out)) {
			t.Fatalf("Clean(%q) = %q is not inert", s, out)
		}
		if fr.Clean(out) != out {
			t.Fatalf("Clean is not idempotent on %q", s)
		}
	})
}

func TestEscapeJSON(t *testing.T) {
	// What Go's encoder makes of a server's properly escaped controls.
	var v any
	if err := json.Unmarshal([]byte(`{"a":"\u009b31m \u202e \u0085 \u061c \u200e \u2066 \u007f x","n":1}`), &v); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(v)
	if inert(string(raw)) {
		t.Fatalf("the premise changed: Go now escapes these itself: %s", raw)
	}
	got := EscapeJSON(raw)
	if !inert(string(got)) || strings.Contains(string(got), "\x7f") {
		t.Fatalf("EscapeJSON left a control: %q", got)
	}
	want := `{"a":"\u009b31m \u202e \u0085 \u061c \u200e \u2066 \u007f x","n":1}`
	if string(got) != want {
		t.Fatalf("EscapeJSON = %s, want %s", got, want)
	}
	var back any
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	if b1, b2 := mustJSON(t, v), mustJSON(t, back); b1 != b2 {
		t.Fatalf("the value changed: %s vs %s", b1, b2)
	}
	plain := []byte(`{"a":"ascii, é, 進捗 and \u001b"}`)
	if out := EscapeJSON(plain); &out[0] != &plain[0] {
		t.Fatal("EscapeJSON copied text that needed nothing")
	}
	if got := string(EscapeJSON([]byte("\"a\xffb\""))); got != `"a\ufffdb"` {
		t.Fatalf("invalid UTF-8: %s", got)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestNumbersAreBounded(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{
		{3, "3"}, {2.5, "2.5"}, {0.125, "0.125"}, {-0.0001, "-0.0001"}, {1e-300, "1e-300"}, {0.0005, "0.001"}, {1e15, "1000000000000000"},
		{1e308, "1e+308"}, {-1.5e300, "-1.5e+300"}, {1e6, "1000000"}, {521367, "521367"},
	} {
		if got := Number(c.v); got != c.want {
			t.Errorf("Number(%g) = %q, want %q", c.v, got, c.want)
		}
	}
	if got := Fixed(1e308, 3); got != "1e+308" {
		t.Errorf("Fixed(1e308) = %q", got)
	}
	if got := Fixed(5.4836, 3); got != "5.484" {
		t.Errorf("Fixed(5.4836) = %q", got)
	}
	for _, c := range []struct {
		ms   float64
		want string
	}{{12.5, "12.5ms"}, {3200, "3.20s"}, {1e308, "1e+308ms (out of range)"}, {-5, "-5ms (out of range)"}} {
		if got := Millis(c.ms); got != c.want {
			t.Errorf("Millis(%g) = %q, want %q", c.ms, got, c.want)
		}
	}
	for _, c := range []struct {
		v, total float64
		want     string
		ok       bool
	}{{1, 4, "25%", true}, {1e308, 1, "100%", true}, {1, 1e-300, "100%", true}, {5, 0, "", false}, {-3, 10, "0%", true}} {
		got, _, ok := Percent(c.v, c.total)
		if got != c.want || ok != c.ok {
			t.Errorf("Percent(%g, %g) = %q, %v; want %q, %v", c.v, c.total, got, ok, c.want, c.ok)
		}
	}
}

func TestCommandLine(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"server.py", "--port", "8080"}, "python3 server.py --port 8080"},
		{[]string{"a b", "it's"}, `python3 'a b' 'it'\''s'`},
		{[]string{"--name=\x1b]0;pwned\x07"}, `python3 $'--name=\e]0;pwned\x07'`},
		{[]string{"x\u202Ey", "\u009b2J", "\xff"}, `python3 $'x\u202ey' $'\u009b2J' $'\xff'`},
		{[]string{"line\nbreak", ""}, `python3 $'line\nbreak' ''`},
	} {
		got := CommandLine("python3", c.args)
		if got != c.want {
			t.Errorf("CommandLine(%q) = %s, want %s", c.args, got, c.want)
		}
		if !inert(got) {
			t.Errorf("CommandLine(%q) = %q is not inert", c.args, got)
		}
	}
}

func TestSGRAttributes(t *testing.T) {
	for params, want := range map[string]string{
		"":                     "[]",
		"0":                    "[0]",
		"1;38;2;90;63;192":     "[1 38;2;90;63;192]",
		"48;5;240;1":           "[48;5;240 1]",
		"38;2;1":               "[38 2 1]", // cut short: taken number by number
		"5;41":                 "[5 41]",
		"1;":                   "[1 ]",
		"38;5;1;48;2;1;2;3;22": "[38;5;1 48;2;1;2;3 22]",
	} {
		if got := fmt.Sprint(sgrAttributes(params)); got != want {
			t.Errorf("sgrAttributes(%q) = %s, want %s", params, got, want)
		}
	}
}
