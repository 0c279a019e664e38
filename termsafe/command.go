package termsafe

import (
	"strings"
	"unicode/utf8"
)

// CommandLine is a command and its arguments as one line a person can read
// and paste into a POSIX shell, with nothing in it a terminal would act on:
// each word is quoted by Arg. It is what "connected to <target>" shows for
// a stdio server.
func CommandLine(command string, args []string) string {
	words := make([]string, 0, 1+len(args))
	words = append(words, Arg(command))
	for _, a := range args {
		words = append(words, Arg(a))
	}
	return strings.Join(words, " ")
}

// Arg quotes one shell word for display. A plain word is shown as it is; a
// word with spaces or shell syntax goes in single quotes; a word holding a
// control character, DEL, a C1 or bidirectional control, or invalid UTF-8
// is written in the shell's ANSI-C quoting ($'…'), where ESC reads \e, a
// newline \n, U+202E \u202e and a stray byte \xff — so the line is inert on
// a terminal and still the same word when pasted into bash or zsh.
func Arg(a string) string {
	if a == "" {
		return "''"
	}
	hazard := false
	for i := 0; i < len(a); {
		r, size := utf8.DecodeRuneInString(a[i:])
		if r == utf8.RuneError && size <= 1 || r < 0x20 || jsonHazard(r) {
			hazard = true
			break
		}
		i += size
	}
	if hazard {
		return ansiC(a)
	}
	if strings.ContainsAny(a, " \t\n'\"\\$`;&|<>()*?[]#~!{}") {
		return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return a
}

// ansiC writes a in $'…' quoting.
func ansiC(a string) string {
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(a); {
		r, size := utf8.DecodeRuneInString(a[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(a[i]))
		case r == 0x1b:
			b.WriteString(`\e`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\'' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			b.WriteString(`\x`)
			b.WriteString(hex2(byte(r)))
		case jsonHazard(r):
			b.WriteString(`\u`)
			b.WriteString(hex4(r))
		default:
			b.WriteRune(r)
		}
		i += size
	}
	b.WriteByte('\'')
	return b.String()
}
