package schemaform

// maxReadDepth is how deep (in JSON nesting: an object, an array) a
// schema is read. jsonschema-go decodes every level of a schema again
// for each level above it (each subschema's UnmarshalJSON decodes its
// whole subtree into a map as well), so its cost grows with the square
// of the depth: a schema nested a few thousand levels froze the form for
// seconds. Read first cuts what lies deeper, in one pass, so that its
// cost is at most this many times the schema's size. A form shows only
// the top level's properties (a nested object is typed as JSON), and 32
// levels leave 15 nested objects to check a value against.
const maxReadDepth = 32

// cutDeep returns raw with every object or array that begins deeper than
// depth levels replaced by an empty one ({} is the schema that allows
// anything), and how many levels deeper than depth raw went (0: nothing
// was cut, and raw is returned as it is). raw must be valid JSON
// (json.Valid): the scan trusts its strings and brackets. It is one pass,
// with no recursion, whatever the nesting.
func cutDeep(raw []byte, depth int) (out []byte, deeper int) {
	maxSeen := deepest(raw)
	if maxSeen <= depth {
		return raw, 0
	}
	out = make([]byte, 0, len(raw))
	level, skipFrom := 0, -1 // skipFrom: the level whose value is being left out
	inString, escaped := false, false
	for _, c := range raw {
		if inString {
			if skipFrom < 0 {
				out = append(out, c)
			}
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			level++
			if level == depth+1 && skipFrom < 0 {
				skipFrom = level
				out = append(out, c, closing(c))
				continue
			}
		case '}', ']':
			level--
			if skipFrom >= 0 && level < skipFrom {
				skipFrom = -1
				continue
			}
		}
		if skipFrom < 0 {
			out = append(out, c)
		}
	}
	return out, maxSeen - depth
}

// deepest is how deep raw (valid JSON) nests its objects and arrays.
func deepest(raw []byte) int {
	level, most := 0, 0
	inString, escaped := false, false
	for _, c := range raw {
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString && c == '"':
			inString = false
		case inString:
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			level++
			most = max(most, level)
		case c == '}' || c == ']':
			level--
		}
	}
	return most
}

func closing(open byte) byte {
	if open == '{' {
		return '}'
	}
	return ']'
}
