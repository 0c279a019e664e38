package trace

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"inflight/wire"
)

// parseFast decodes a line as encoding/json would decode it into a
// Record, for the lines Writer writes — every member known, strings with
// nothing to unescape, numbers and IDs plain — and reports false for
// anything else, which the caller leaves to encoding/json: so its result,
// when it has one, is encoding/json's (FuzzParseFastMatchesEncodingJSON).
// Opening a replay reads every line of a trace, a million of them for a
// flood; encoding/json's reflection and validation were most of the time.
//
// The line is copied once, and the record's strings and message are
// views of that copy, which nothing writes: one allocation a line
// rather than one a field.
func parseFast(line []byte) (Record, bool) {
	var rec Record
	p := fastParser{data: bytes.Clone(line)}
	if !p.object(&rec) {
		return Record{}, false
	}
	return rec, true
}

type fastParser struct {
	data []byte
	i    int
}

func (p *fastParser) space() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// next reports whether the next byte, after whitespace, is c, and moves
// past it if so.
func (p *fastParser) next(c byte) bool {
	p.space()
	if p.i < len(p.data) && p.data[p.i] == c {
		p.i++
		return true
	}
	return false
}

// object reads the whole line as one object of known members.
func (p *fastParser) object(rec *Record) bool {
	if !p.next('{') {
		return false
	}
	if p.next('}') {
		p.space()
		return p.i == len(p.data)
	}
	for {
		name, ok := p.str()
		if !ok || !p.next(':') {
			return false
		}
		p.space()
		if !p.member(rec, name) {
			return false
		}
		if p.next(',') {
			continue
		}
		if !p.next('}') {
			return false
		}
		p.space()
		return p.i == len(p.data)
	}
}

// member reads the value of the member called name into rec.
func (p *fastParser) member(rec *Record, name string) bool {
	switch name {
	case "ms":
		return p.float(&rec.MS)
	case "lastMs":
		return p.float(&rec.LastMS)
	case "rttMs":
		return p.float(&rec.RTT)
	case "msg":
		return p.raw(&rec.Msg)
	case "id":
		return p.id(&rec.ID)
	case "parent":
		return p.id(&rec.Parent)
	case "conversation":
		return p.id(&rec.Conversation)
	case "owner":
		return p.id(&rec.Owner)
	}
	if f := intField(rec, name); f != nil {
		return p.int(f)
	}
	if f := boolField(rec, name); f != nil {
		return p.bool(f)
	}
	if f := stringField(rec, name); f != nil {
		s, ok := p.str()
		*f = s
		return ok
	}
	// A member Record does not have, or names that match one only
	// case-insensitively (as encoding/json matches them): its business.
	return false
}

func stringField(rec *Record, name string) *string {
	switch name {
	case "dir":
		return &rec.Dir
	case "by":
		return &rec.By
	case "event":
		return &rec.Event
	case "raw":
		return &rec.Raw
	case "text":
		return &rec.Text
	case "error":
		return &rec.Error
	case "contentType":
		return &rec.ContentType
	case "signal":
		return &rec.Signal
	case "reason":
		return &rec.Reason
	case "state":
		return &rec.State
	case "from":
		return &rec.From
	case "method":
		return &rec.Method
	case "target":
		return &rec.Target
	case "code":
		return &rec.Code
	case "checkStatus":
		return &rec.CheckStatus
	case "transport":
		return &rec.Transport
	case "era":
		return &rec.Era
	case "protocolVersion":
		return &rec.ProtocolVersion
	case "server":
		return &rec.Server
	case "sessionId":
		return &rec.SessionID
	case "violation":
		return &rec.Violation
	case "verdict":
		return &rec.Verdict
	case "injected":
		return &rec.Injected
	}
	return nil
}

func intField(rec *Record, name string) *int {
	switch name {
	case "truncated":
		return &rec.Truncated
	case "dropped":
		return &rec.Dropped
	case "status":
		return &rec.Status
	case "coalesced":
		return &rec.Coalesced
	case "round":
		return &rec.Round
	case "end":
		return &rec.End
	}
	return nil
}

func boolField(rec *Record, name string) *bool {
	switch name {
	case "compacted":
		return &rec.Compacted
	case "internal":
		return &rec.Internal
	case "byClient":
		return &rec.ByClient
	case "lost":
		return &rec.Lost
	case "resumed":
		return &rec.Resumed
	}
	return nil
}

// str reads a string with nothing to unescape: no backslash, no control
// byte, valid UTF-8. Its text is a view of the parser's own copy.
func (p *fastParser) str() (string, bool) {
	p.space()
	if p.i >= len(p.data) || p.data[p.i] != '"' {
		return "", false
	}
	start := p.i + 1
	ascii := true
	for j := start; j < len(p.data); j++ {
		c := p.data[j]
		switch {
		case c == '"':
			b := p.data[start:j]
			if !ascii && !utf8.Valid(b) {
				return "", false
			}
			p.i = j + 1
			if len(b) == 0 {
				return "", true
			}
			return unsafe.String(&b[0], len(b)), true
		case c == '\\' || c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return "", false
}

// number reads the bytes of a JSON number.
func (p *fastParser) number() ([]byte, bool) {
	start := p.i
	end, ok := wire.ValidValue(p.data, p.i)
	if !ok || start >= len(p.data) || (p.data[start] != '-' && (p.data[start] < '0' || p.data[start] > '9')) {
		return nil, false
	}
	p.i = end
	return p.data[start:end], true
}

func (p *fastParser) float(f *float64) bool {
	b, ok := p.number()
	if !ok {
		return false
	}
	v, err := strconv.ParseFloat(unsafe.String(&b[0], len(b)), 64)
	*f = v
	return err == nil
}

func (p *fastParser) int(n *int) bool {
	b, ok := p.number()
	if !ok {
		return false
	}
	v, err := strconv.Atoi(unsafe.String(&b[0], len(b)))
	*n = v
	return err == nil
}

func (p *fastParser) bool(v *bool) bool {
	switch {
	case bytes.HasPrefix(p.data[p.i:], []byte("true")):
		*v, p.i = true, p.i+4
	case bytes.HasPrefix(p.data[p.i:], []byte("false")):
		*v, p.i = false, p.i+5
	default:
		return false
	}
	return true
}

// raw reads any valid JSON value but null (which leaves a RawMessage nil
// in encoding/json, a case left to it).
func (p *fastParser) raw(m *json.RawMessage) bool {
	start := p.i
	end, ok := wire.ValidValue(p.data, p.i)
	if !ok || p.data[start] == 'n' {
		return false
	}
	p.i = end
	*m = p.data[start:end:end]
	return true
}

// id reads an integer or a string ID with nothing to unescape.
func (p *fastParser) id(id **wire.ID) bool {
	start := p.i
	if p.i < len(p.data) && p.data[p.i] == '"' {
		if _, ok := p.str(); !ok {
			return false
		}
	} else if _, ok := p.number(); !ok {
		return false
	}
	v, err := wire.ParseID(p.data[start:p.i])
	if err != nil {
		return false
	}
	*id = &v
	return true
}
