package wire

import (
	"bytes"
	"encoding/json"
)

// MaxIndentDepth is the nesting depth past which IndentBounded stops
// indenting. Real MCP payloads are a few levels deep; anything deeper is
// kept readable on one line.
const MaxIndentDepth = 32

// IndentBounded is json.Indent with a bound: values nested deeper than
// maxDepth are written compact, on the line of the value that holds them.
//
// Indenting costs as many bytes per line as the line is deep, so a value
// nested n deep grows to about n² bytes: a 20 KB answer nested 9 000 deep —
// which encoding/json accepts — would become 160 MB of spaces. Bounding the
// depth keeps the output within a few times the input.
//
// Like json.Indent, it reports invalid JSON and then writes nothing.
func IndentBounded(dst *bytes.Buffer, src []byte, prefix, indent string, maxDepth int) error {
	var compact bytes.Buffer
	if err := json.Compact(&compact, src); err != nil {
		return err
	}
	c := compact.Bytes()
	dst.Grow(len(c) + len(c)/4)
	newline := func(depth int) {
		dst.WriteByte('\n')
		dst.WriteString(prefix)
		for i := 0; i < depth; i++ {
			dst.WriteString(indent)
		}
	}
	depth := 0
	inString := false
	for i := 0; i < len(c); i++ {
		b := c[i]
		if inString {
			dst.WriteByte(b)
			switch b {
			case '\\':
				i++
				dst.WriteByte(c[i]) // compact JSON: an escape always has its next byte
			case '"':
				inString = false
			}
			continue
		}
		switch b {
		case '"':
			inString = true
			dst.WriteByte(b)
		case '{', '[':
			dst.WriteByte(b)
			depth++
			if i+1 < len(c) && (c[i+1] == '}' || c[i+1] == ']') {
				// An empty object or array stays on its line, as json.Indent
				// writes it.
				dst.WriteByte(c[i+1])
				i++
				depth--
				continue
			}
			if depth <= maxDepth {
				newline(depth)
			}
		case '}', ']':
			if depth <= maxDepth {
				newline(depth - 1)
			}
			depth--
			dst.WriteByte(b)
		case ',':
			dst.WriteByte(b)
			if depth <= maxDepth {
				newline(depth)
			}
		case ':':
			dst.WriteByte(b)
			if depth <= maxDepth {
				dst.WriteByte(' ')
			}
		default:
			dst.WriteByte(b)
		}
	}
	return nil
}
