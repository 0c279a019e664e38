package wire

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// A hand-written walk over the members of a JSON object, for the hot paths
// (every message's envelope, every progress notification's params), where
// encoding/json's reflection cost most of the time. The walk trusts its
// input to be valid JSON: callers check it with json.Valid first, which
// allocates nothing.

// eachMember calls fn with the raw name (still JSON-escaped, without its
// quotes) and the raw value of every member of obj, in order, stopping at
// the first error. obj must be one JSON object that json.Valid accepted.
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
