package urlhost

import (
	"strings"
	"testing"
)

func TestOf(t *testing.T) {
	for _, c := range []struct {
		raw                    string
		name, written, userinf string
	}{
		{"https://accounts.google.com@evil.example/authorize", "evil.example", "", "accounts.google.com"},
		{"https://\u0430pple.com/login", "xn--pple-43d.com", "\u0430pple.com", ""},
		{"https://Example.COM:8443/x", "example.com:8443", "", ""},
		{"https://bücher.example/", "xn--bcher-kva.example", "bücher.example", ""},
		{"https://\uff41pple.com/", "apple.com", "\uff41pple.com", ""}, // fullwidth a folds to a
		{"https://m\u00fcnchen.de\u3002example/", "xn--mnchen-3ya.de.example", "m\u00fcnchen.de\u3002example", ""},
		{"https://[::1]:8080/", "[::1]:8080", "", ""},
		{"mailto:x@y", "", "", ""},
		{"not a url", "", "", ""},
	} {
		h := Of(c.raw)
		if h.Name != c.name || h.Written != c.written || h.UserInfo != c.userinf {
			t.Errorf("Of(%q) = %+v, want name %q written %q userinfo %q", c.raw, h, c.name, c.written, c.userinf)
		}
	}
}

// TestPunycodeVectors: labels from RFC 3492 section 7.1 and known hosts.
func TestPunycodeVectors(t *testing.T) {
	for in, want := range map[string]string{
		"\u0430pple":        "pple-43d",
		"bücher":            "bcher-kva",
		"他们为什么不说中文":         "ihqwcrb4cv8a8dqg056pqjye",
		"ليهمابتكلموشعربي؟": "egbpdaj6bu4bxfgehfvwxn",
	} {
		if got := punycode(in); got != want {
			t.Errorf("punycode(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNote(t *testing.T) {
	for raw, want := range map[string]string{
		"https://accounts.google.com@evil.example/authorize": "the part before @ (accounts.google.com) is not the host",
		"https://\u0430pple.com":                             "written \u0430pple.com, not all ASCII: letters of another script can look like Latin ones",
		"https://example.com":                                "",
	} {
		if got := Of(raw).Note(); got != want {
			t.Errorf("Of(%q).Note() = %q, want %q", raw, got, want)
		}
	}
}

// A password before @ is a secret: the note names the part before @ by
// its user name alone.
func TestNoteKeepsAPasswordOut(t *testing.T) {
	h := Of("https://accounts.google.com:hunter2secret@evil.example/authorize")
	if h.Name != "evil.example" {
		t.Fatalf("host %q", h.Name)
	}
	if n := h.Note(); strings.Contains(n, "hunter2secret") || !strings.Contains(n, "accounts.google.com") {
		t.Errorf("note %q", n)
	}
}
