package wire

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// A hand-written walk over the members of a JSON object, for the hot paths
// (every message's envelope, every progress notification's params), where
// encoding/json's reflection cost most of the time. This first walk trusts
// its input to be valid JSON: callers use it on bytes the validating walk
// below (validObject) already accepted.

// eachMember calls fn with the raw name (still JSON-escaped, without its
// quotes) and the raw value of every member of obj, in order, stopping at
// the first error. obj must be one JSON object already validated.
func eachMember(obj []byte, fn func(name, value []byte) error) error {
	i := skipSpace(obj, 0) + 1 // after '{'
	for {
		i = skipSpace(obj, i)
		if i >= len(obj) || obj[i] == '}' {
			return nil
		}
		end := skipString(obj, i)
		name := obj[i+1 : end-1]
		i = skipSpace(obj, end) + 1 // past ':'
		start := skipSpace(obj, i)
		i = skipValue(obj, start)
		if err := fn(name, obj[start:i]); err != nil {
			return err
		}
		i = skipSpace(obj, i)
		if i < len(obj) && obj[i] == ',' {
			i++
		}
	}
}

// unescapeName decodes a raw member name that holds an escape ("\u0069d"
// is "id"); ok is false when there was nothing to decode.
func unescapeName(raw []byte) (name []byte, ok bool) {
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw, false
	}
	quoted := append(append([]byte{'"'}, raw...), '"')
	s, isString := decodeString(quoted)
	if !isString {
		return raw, false
	}
	return []byte(s), true
}

// decodeString decodes raw when it is a JSON string, reporting whether it
// was one. Strings with nothing to unescape or replace (no backslash, ASCII
// only) are copied without encoding/json; the others get its treatment,
// invalid UTF-8 turned into U+FFFD included.
func decodeString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	inner := raw[1 : len(raw)-1]
	plain := true
	for _, b := range inner {
		if b == '\\' || b >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	if plain {
		return string(inner), true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// clipRaw bounds a raw value quoted in an error message.
func clipRaw(raw []byte) []byte {
	if len(raw) > 64 {
		return append(raw[:64:64], "…"...)
	}
	return raw
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index just past the string that starts at data[i]
// (a '"') in valid JSON.
func skipString(data []byte, i int) int {
	i++
	for {
		j := bytes.IndexByte(data[i:], '"')
		if j < 0 {
			return len(data)
		}
		i += j
		// The quote ends the string unless an odd number of backslashes
		// escapes it.
		k := i
		for data[k-1] == '\\' {
			k--
		}
		i++
		if (i-1-k)%2 == 0 {
			return i
		}
	}
}

// skipValue returns the index just past the value that starts at data[i]
// in valid JSON.
func skipValue(data []byte, i int) int {
	if i >= len(data) {
		return i
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for i < len(data) {
			switch data[i] {
			case '"':
				i = skipString(data, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	// A number, true, false or null: it ends where the object goes on.
	for i < len(data) {
		switch data[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return i
		}
		i++
	}
	return i
}

// The validating walk. The profile of `inflight call` on a flood
// (internal/testkit/floodpeer, BenchmarkCallInProcess) put 36 % of the client's CPU
// in encoding/json.Valid: once for the whole line in Decode, and again for
// the params in DecodeProgress, before the walks above went over the same
// bytes a third time. encoding/json's scanner is a state machine with a
// function call per byte; this walk validates JSON's grammar as it skips
// each value, so a line is validated exactly once, by the pass that
// extracts its members. It accepts exactly what json.Valid accepts
// (FuzzValidMatchesEncodingJSON), including its two lenient points: bytes
// that are not UTF-8 are allowed in strings, and nesting stops at
// encoding/json's depth of 10 000.

// maxDepth is encoding/json's bound on nesting (its scanner's
// maxNestingDepth): deeper input is invalid for json.Valid, so for us too.
const maxDepth = 10000

// plainString marks the bytes that stand for themselves inside a JSON
// string: everything but the quote, the backslash and control characters.
var plainString = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// validJSON reports whether data is exactly one JSON value, optionally
// surrounded by JSON whitespace: json.Valid, without its per-byte calls.
func validJSON(data []byte) bool {
	i := skipSpace(data, 0)
	end, ok := validValue(data, i, 0)
	return ok && skipSpace(data, end) == len(data)
}

// validValue returns the index just past the JSON value that starts at
// data[i], and whether it is one; depth is how many containers enclose it.
func validValue(data []byte, i, depth int) (int, bool) {
	if i >= len(data) {
		return i, false
	}
	switch data[i] {
	case '"':
		return validString(data, i)
	case '{':
		end, ok, _ := validObject(data, i, depth+1, nil)
		return end, ok
	case '[':
		return validArray(data, i, depth+1)
	case 't':
		return validLiteral(data, i, "true")
	case 'f':
		return validLiteral(data, i, "false")
	case 'n':
		return validLiteral(data, i, "null")
	}
	return validNumber(data, i)
}

// validObject validates the object that starts at data[i] (a '{') at
// nesting depth depth, calling fn (when not nil) with the raw name (still
// escaped, without its quotes) and the raw value of every member, in
// order. An error from fn does not stop the walk: the first one is
// returned once the object is known to be valid, so that invalid JSON is
// always reported as such, whatever a member said before it.
func validObject(data []byte, i, depth int, fn func(name, value []byte) error) (end int, ok bool, err error) {
	if depth > maxDepth {
		return i, false, nil
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return i + 1, true, nil
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return i, false, nil
		}
		nameEnd, ok := validString(data, i)
		if !ok {
			return nameEnd, false, nil
		}
		name := data[i+1 : nameEnd-1]
		i = skipSpace(data, nameEnd)
		if i >= len(data) || data[i] != ':' {
			return i, false, nil
		}
		start := skipSpace(data, i+1)
		if i, ok = validValue(data, start, depth); !ok {
			return i, false, nil
		}
		if fn != nil && err == nil {
			err = fn(name, data[start:i])
		}
		i = skipSpace(data, i)
		if i >= len(data) {
			return i, false, nil
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return i + 1, true, err
		default:
			return i, false, nil
		}
	}
}

// validArray validates the array that starts at data[i] (a '[').
func validArray(data []byte, i, depth int) (int, bool) {
	if depth > maxDepth {
		return i, false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return i + 1, true
	}
	for {
		var ok bool
		if i, ok = validValue(data, i, depth); !ok {
			return i, false
		}
		i = skipSpace(data, i)
		if i >= len(data) {
			return i, false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case ']':
			return i + 1, true
		default:
			return i, false
		}
	}
}

// validString returns the index just past the string that starts at
// data[i] (a '"') and whether it is a valid JSON string.
func validString(data []byte, i int) (int, bool) {
	i++
	for i < len(data) {
		c := data[i]
		if plainString[c] {
			i++
			continue
		}
		switch c {
		case '"':
			return i + 1, true
		case '\\':
			if i+1 >= len(data) {
				return i, false
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(data) || !isHex(data[i+2]) || !isHex(data[i+3]) || !isHex(data[i+4]) || !isHex(data[i+5]) {
					return i, false
				}
				i += 6
			default:
				return i, false
			}
		default: // a control character
			return i, false
		}
	}
	return i, false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// validLiteral checks that data[i:] starts with lit (true, false, null).
// What follows it is the enclosing value's business: "nulls" fails there.
func validLiteral(data []byte, i int, lit string) (int, bool) {
	if len(data)-i < len(lit) || string(data[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}

// validNumber returns the index just past the number that starts at
// data[i] and whether one does, by JSON's grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(data []byte, i int) (int, bool) {
	if i < len(data) && data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case i < len(data) && data[i] >= '1' && data[i] <= '9':
		i = skipDigits(data, i+1)
	default:
		return i, false
	}
	if i < len(data) && data[i] == '.' {
		j := skipDigits(data, i+1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		j := skipDigits(data, i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}

func skipDigits(data []byte, i int) int {
	for i < len(data) && data[i] >= '0' && data[i] <= '9' {
		i++
	}
	return i
}

// ValidValue returns the index just past the JSON value that starts at
// data[i], and whether it is one: for a reader of a format that carries
// messages inside its own JSON (a trace line's "msg"), which must find
// where the message ends and know it is valid without a second pass.
func ValidValue(data []byte, i int) (end int, ok bool) { return validValue(data, i, 0) }
