package trace

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// appendRecord appends rec as encoding/json's Encoder (HTML escaping off)
// would write it, without the message (Write splices that in itself) and
// without the newline, and reports false for what it leaves to
// encoding/json: a time that is not a finite number, which encoding/json
// refuses. The profile of `call --trace` on a flood had the Encoder's
// reflection at 15 % of the CPU, for records that are a handful of
// fields (an HTTP exchange, rarer and nested, is left to it too); FuzzAppendRecordMatchesEncodingJSON holds this to the same
// bytes.
func appendRecord(b []byte, rec *Record) ([]byte, bool) {
	if !finite(rec.MS) || !finite(rec.LastMS) || !finite(rec.RTT) || rec.HTTP != nil {
		return b, false
	}
	b = append(b, `{"ms":`...)
	b = appendFloat(b, rec.MS)
	b = append(b, `,"dir":`...)
	b = appendString(b, rec.Dir)
	b = appendField(b, `,"by":`, rec.By)
	if rec.ID != nil {
		b = append(b, `,"id":`...)
		raw, _ := rec.ID.MarshalJSON() // the canonical JSON of the ID, never an error
		b = append(b, raw...)
	}
	b = appendBool(b, `,"compacted":true`, rec.Compacted)
	b = appendField(b, `,"event":`, rec.Event)
	b = appendBool(b, `,"internal":true`, rec.Internal)
	b = appendField(b, `,"raw":`, rec.Raw)
	b = appendInt(b, `,"truncated":`, rec.Truncated)
	b = appendInt(b, `,"dropped":`, rec.Dropped)
	b = appendField(b, `,"text":`, rec.Text)
	b = appendField(b, `,"error":`, rec.Error)
	b = appendInt(b, `,"status":`, rec.Status)
	b = appendField(b, `,"contentType":`, rec.ContentType)
	b = appendField(b, `,"signal":`, rec.Signal)
	b = appendField(b, `,"reason":`, rec.Reason)
	if rec.RTT != 0 {
		b = append(b, `,"rttMs":`...)
		b = appendFloat(b, rec.RTT)
	}
	b = appendBool(b, `,"byClient":true`, rec.ByClient)
	b = appendBool(b, `,"lost":true`, rec.Lost)
	if rec.Owner != nil {
		b = append(b, `,"owner":`...)
		raw, _ := rec.Owner.MarshalJSON()
		b = append(b, raw...)
	}
	b = appendBool(b, `,"resumed":true`, rec.Resumed)
	b = appendField(b, `,"state":`, rec.State)
	b = appendField(b, `,"from":`, rec.From)
	b = appendField(b, `,"method":`, rec.Method)
	b = appendField(b, `,"target":`, rec.Target)
	b = appendField(b, `,"code":`, rec.Code)
	b = appendField(b, `,"checkStatus":`, rec.CheckStatus)
	b = appendField(b, `,"transport":`, rec.Transport)
	b = appendField(b, `,"era":`, rec.Era)
	b = appendField(b, `,"protocolVersion":`, rec.ProtocolVersion)
	b = appendField(b, `,"server":`, rec.Server)
	b = appendField(b, `,"sessionId":`, rec.SessionID)
	b = appendField(b, `,"violation":`, rec.Violation)
	b = appendInt(b, `,"coalesced":`, rec.Coalesced)
	if rec.LastMS != 0 {
		b = append(b, `,"lastMs":`...)
		b = appendFloat(b, rec.LastMS)
	}
	b = appendField(b, `,"verdict":`, rec.Verdict)
	b = appendField(b, `,"injected":`, rec.Injected)
	if rec.Parent != nil {
		b = append(b, `,"parent":`...)
		raw, _ := rec.Parent.MarshalJSON()
		b = append(b, raw...)
	}
	b = appendInt(b, `,"round":`, rec.Round)
	if rec.Conversation != nil {
		b = append(b, `,"conversation":`...)
		raw, _ := rec.Conversation.MarshalJSON()
		b = append(b, raw...)
	}
	b = appendInt(b, `,"end":`, rec.End)
	return append(b, '}'), true
}

func finite(f float64) bool { return !math.IsInf(f, 0) && !math.IsNaN(f) }

// appendField appends an omitempty string member.
func appendField(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	return appendString(append(b, key...), s)
}

// appendBool appends an omitempty bool member (member is its text).
func appendBool(b []byte, member string, v bool) []byte {
	if !v {
		return b
	}
	return append(b, member...)
}

// appendInt appends an omitempty int member.
func appendInt(b []byte, key string, n int) []byte {
	if n == 0 {
		return b
	}
	return strconv.AppendInt(append(b, key...), int64(n), 10)
}

// appendFloat formats f as encoding/json does: like ES6, 'f' unless the
// magnitude calls for an exponent, whose leading zero is dropped.
func appendFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const hexDigits = "0123456789abcdef"

// appendString quotes s as encoding/json does with HTML escaping off:
// quote, backslash and control characters escaped, bytes that are not
// UTF-8 replaced by \ufffd, U+2028 and U+2029 escaped.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
