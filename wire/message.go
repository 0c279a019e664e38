package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Kind says what a JSON-RPC message is.
type Kind uint8

// The kinds of JSON-RPC messages.
const (
	KindInvalid      Kind = iota
	KindRequest           // method and id
	KindNotification      // method, no id
	KindResult            // id and result
	KindError             // id (possibly null) and error
)

func (k Kind) String() string {
	switch k {
	case KindRequest:
		return "request"
	case KindNotification:
		return "notification"
	case KindResult:
		return "result"
	case KindError:
		return "error"
	}
	return "invalid"
}

// Error is a JSON-RPC error object.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// Message is a decoded JSON-RPC envelope. Params, Result and Error.Data keep
// their raw JSON so nothing the peer sent is lost or reinterpreted. A Message
// from Decode never aliases the buffer it was decoded from (one from
// DecodeOwned does, by request).
type Message struct {
	Kind   Kind
	ID     ID // zero for notifications
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  *Error

	// checked is the first byte of the Params Decode validated with the
	// whole message, so that ReadProgress does not validate them again;
	// nil for a Message built any other way, or whose Params were replaced.
	checked *byte
}

// IsResponse reports whether the message answers a request.
func (m *Message) IsResponse() bool { return m.Kind == KindResult || m.Kind == KindError }

// ErrBatch is returned for a JSON array: MCP has no batches since 2025-06-18.
var ErrBatch = errors.New("JSON-RPC batch (array) is not allowed in MCP")

// envelope holds the raw JSON value of each member of a JSON-RPC message,
// nil for a member that is absent. The slices alias the decoded buffer.
type envelope struct {
	jsonrpc, id, method, params, result, error []byte
}

// walk validates data, one JSON object (data[0] is '{'), and keeps the raw
// value of each envelope member (set), as validObject(data, 0, 1, env.set)
// would. Given pr, a "params" object is validated by a walk that reads its
// members as progress params into pr at the same time, unless the method
// already read is another: one pass over the bytes of a progress
// notification, where there were two. progressOf is the params value pr
// read, if it read one whole without leaving anything to encoding/json.
// (pr is not kept in env: escape analysis would then send it to the heap
// with env's slices.)
func (env *envelope) walk(data []byte, pr *progressReader) (end int, ok bool, progressOf []byte, err error) {
	i := skipSpace(data, 1)
	if i < len(data) && data[i] == '}' {
		return i + 1, true, nil, nil
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return i, false, nil, nil
		}
		nameEnd, ok := validString(data, i)
		if !ok {
			return nameEnd, false, nil, nil
		}
		name := data[i+1 : nameEnd-1]
		i = skipSpace(data, nameEnd)
		if i >= len(data) || data[i] != ':' {
			return i, false, nil, nil
		}
		start := skipSpace(data, i+1)
		if pr != nil && string(name) == "params" && start < len(data) && data[start] == '{' &&
			(env.method == nil || string(env.method) == `"`+NotifyProgress+`"`) {
			*pr = progressReader{}
			var slow error
			i, ok, slow = validObject(data, start, 2, pr.member)
			progressOf = nil
			if ok && slow == nil {
				progressOf = data[start:i]
			}
		} else {
			i, ok = validValue(data, start, 1)
		}
		if !ok {
			return i, false, nil, nil
		}
		if err == nil {
			err = env.set(name, data[start:i])
		}
		i = skipSpace(data, i)
		if i >= len(data) {
			return i, false, nil, nil
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return i + 1, true, progressOf, err
		default:
			return i, false, nil, nil
		}
	}
}

// Decode parses one JSON-RPC message. It is strict about the envelope (it must
// be an object with "jsonrpc":"2.0" and one consistent shape, its member
// names spelt exactly: "Id" is not "id") but keeps params, results and error
// data as raw JSON. The returned message copies what it keeps, so data may
// be reused by the caller.
//
// Decode is on the hot path (every message read), so the envelope is not
// unmarshalled by reflection: one hand-written walk over the top-level
// members validates the whole message as it picks out their raw values
// (validObject). It accepts and rejects what encoding/json would, with one
// deliberate difference, the exact member names (see
// FuzzDecodeMatchesEncodingJSON).
func Decode(data []byte) (Message, error) {
	m, _, err := decode(data, false, false)
	return m, err
}

// DecodeOwned is Decode for a buffer the caller hands over: the message's
// Params and Result alias data instead of copying it, so data must never
// change afterwards. The client's reader copies each line once, for the
// event's Raw, and decodes that copy: one allocation per message instead
// of two.
func DecodeOwned(data []byte) (Message, error) {
	m, _, err := decode(data, true, false)
	return m, err
}

// DecodeLine is what a transport's reader calls on each message it read
// and copied: DecodeOwned, and for a notifications/progress its params
// read as a Progress (nil when they are not valid progress params; the
// tracker says why). The params are read by the same walk that validates
// the message: the flood's profile had the second walk over them, after
// Decode's, costing more than the whole of Decode.
func DecodeLine(data []byte) (Message, *Progress, error) { return decode(data, true, true) }

func decode(data []byte, owned, wantProgress bool) (Message, *Progress, error) {
	var pr *progressReader
	var reader progressReader
	if wantProgress {
		pr = &reader
	}
	m, read, err := decodeMessage(data, owned, pr)
	if err != nil || !wantProgress || m.Kind != KindNotification || m.Method != NotifyProgress || m.Params == nil {
		return m, nil, err
	}
	if read {
		if p, total, hasTotal, ok := reader.result(); ok {
			return m, boxed(p, total, hasTotal), nil
		}
	}
	// Something the walk leaves to encoding/json (an escape, a null, a
	// type error): the slow path, as ReadProgress takes it.
	if p, err := m.ReadProgress(); err == nil {
		return m, p, nil
	}
	return m, nil, nil
}

// decodeMessage is Decode; given pr it also reads the message's params
// into it as it validates them, and reports whether pr read the params the
// message has (not when they are not an object, their name is spelt with
// escapes, the method was already known to be another, or a member was
// left to encoding/json).
func decodeMessage(data []byte, owned bool, pr *progressReader) (Message, bool, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return Message{}, false, errors.New("empty message")
	}
	if data[0] == '[' {
		return Message{}, false, ErrBatch
	}
	if data[0] != '{' {
		return Message{}, false, fmt.Errorf("not a JSON object (starts with %q)", printable(data[0]))
	}
	var env envelope
	end, valid, progressOf, err := env.walk(data, pr)
	if !valid || skipSpace(data, end) != len(data) {
		return Message{}, false, invalidJSON(data)
	}
	if err != nil {
		return Message{}, false, err
	}
	clone := bytes.Clone
	if owned {
		clone = func(b []byte) []byte { return b }
	}
	if err := checkVersion(env.jsonrpc); err != nil {
		return Message{}, false, err
	}
	var m Message
	hasID := env.id != nil
	if hasID {
		id, err := ParseID(env.id)
		if err != nil {
			return Message{}, false, err
		}
		m.ID = id
	}
	if err := env.classify(&m, hasID, clone); err != nil {
		return Message{}, false, err
	}
	// pr read the params that won, if it read the last of duplicates.
	read := pr != nil && len(env.params) > 0 && len(progressOf) > 0 && &progressOf[0] == &env.params[0]
	return m, read, nil
}

// invalidJSON says what is wrong with data, which is not one JSON value:
// only then is encoding/json's description paid for.
func invalidJSON(data []byte) error {
	var v json.RawMessage
	err := json.Unmarshal(data, &v)
	if err == nil {
		err = errors.New("invalid")
	}
	return fmt.Errorf("invalid JSON: %w", err)
}

// checkVersion refuses a "jsonrpc" member (raw JSON, nil when absent) that
// is not "2.0".
func checkVersion(jsonrpc []byte) error {
	if string(jsonrpc) == `"2.0"` {
		return nil
	}
	// Anything else, including "2.0" spelt with an escape, takes the slow
	// path.
	v, isString := decodeString(jsonrpc)
	if !isString && jsonrpc != nil && string(jsonrpc) != "null" {
		return fmt.Errorf(`"jsonrpc" must be the string "2.0", got %s`, clipRaw(jsonrpc))
	}
	if v != "2.0" {
		return fmt.Errorf(`"jsonrpc" must be "2.0", got %q`, v)
	}
	return nil
}

// classify sets m's kind and its method, params, result or error from the
// envelope's members (hasID: it has an id, in m.ID already), refusing a
// combination JSON-RPC does not allow. clone copies what m keeps.
func (env *envelope) classify(m *Message, hasID bool, clone func([]byte) []byte) error {
	// A null method is no method, as with encoding/json's *string.
	hasMethod := env.method != nil && string(env.method) != "null"
	hasResult, hasError := env.result != nil, env.error != nil
	switch {
	case hasMethod:
		if hasResult || hasError {
			return errors.New("message has both a method and a result or error")
		}
		method, isString := methodName(env.method)
		if !isString {
			return fmt.Errorf(`invalid JSON: "method" must be a string, got %s`, clipRaw(env.method))
		}
		if method == "" {
			return errors.New(`"method" is empty`)
		}
		m.Method = method
		if env.params != nil && string(env.params) != "null" {
			m.Params = clone(env.params)
			m.checked = &m.Params[0]
		}
		if hasID {
			if m.ID == NullID {
				return errors.New("request id must not be null")
			}
			m.Kind = KindRequest
		} else {
			m.Kind = KindNotification
		}
	case hasResult && hasError:
		return errors.New("response has both a result and an error")
	case hasResult:
		if !hasID {
			return errors.New("result without an id")
		}
		m.Kind = KindResult
		m.Result = clone(env.result)
	case hasError:
		// "error": null or a non-object would otherwise decode as an error
		// with code 0 and no message, hiding what the server really sent.
		if env.error[0] != '{' {
			return errors.New(`"error" must be an object`)
		}
		var e Error
		if err := json.Unmarshal(env.error, &e); err != nil {
			return fmt.Errorf("malformed error object: %w", err)
		}
		if !hasID {
			m.ID = NullID
		}
		m.Kind = KindError
		m.Error = &e
	default:
		return errors.New("message has neither a method, a result nor an error")
	}
	return nil
}

// set keeps the value of the member called name (still JSON-escaped);
// Decode's walk calls it for each member of the message. As with
// encoding/json, the last of duplicate members wins and unknown members are
// ignored. Unlike it, a name that is an envelope name in another case
// ("Id", "JSONRPC", or "reſult" by Unicode folding) is an error: JSON-RPC's
// names are case-sensitive, and a compliance debugger must not read such a
// message as valid.
func (env *envelope) set(name, value []byte) error {
	switch string(name) { // no allocation: the compiler compares in place
	case "jsonrpc":
		env.jsonrpc = value
	case "id":
		env.id = value
	case "method":
		env.method = value
	case "params":
		env.params = value
	case "result":
		env.result = value
	case "error":
		env.error = value
	default:
		return env.setOther(name, value)
	}
	return nil
}

// envelopeNames are the members of a JSON-RPC message.
var envelopeNames = [...]string{"jsonrpc", "id", "method", "params", "result", "error"}

// setOther handles the rare names: an escaped spelling of an envelope name
// ("\u0069d" is "id"), an envelope name in another case (an error), or a
// member JSON-RPC does not define (ignored).
func (env *envelope) setOther(name, value []byte) error {
	if unescaped, ok := unescapeName(name); ok {
		name = unescaped
		for _, n := range envelopeNames {
			if string(name) == n {
				return env.set(name, value)
			}
		}
	}
	for _, n := range envelopeNames {
		if bytes.EqualFold(name, []byte(n)) {
			return fmt.Errorf("member %q is not %q: JSON-RPC member names are case-sensitive", name, n)
		}
	}
	return nil
}

// methodName decodes a raw method value like decodeString, without
// allocating for the methods a busy server sends most: a flood is a
// million "notifications/progress", and each was a 22-byte string.
func methodName(raw []byte) (string, bool) {
	switch string(raw) { // compared in place, no allocation
	case `"` + NotifyProgress + `"`:
		return NotifyProgress, true
	case `"` + NotifyMessage + `"`:
		return NotifyMessage, true
	case `"` + NotifyCancelled + `"`:
		return NotifyCancelled, true
	case `"` + NotifyResourceUpdated + `"`:
		return NotifyResourceUpdated, true
	}
	return decodeString(raw)
}

func printable(b byte) string {
	if b >= 0x20 && b < 0x7f {
		return string(rune(b))
	}
	return fmt.Sprintf("\\x%02x", b)
}

// Request builds the JSON of a request with the given id, method and params
// (params may be nil).
func Request(id ID, method string, params json.RawMessage) []byte {
	var b bytes.Buffer
	b.Grow(64 + len(params))
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.WriteString(id.raw)
	b.WriteString(`,"method":`)
	writeString(&b, method)
	if len(params) > 0 {
		b.WriteString(`,"params":`)
		b.Write(params)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// Notification builds the JSON of a notification.
func Notification(method string, params json.RawMessage) []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","method":`)
	writeString(&b, method)
	if len(params) > 0 {
		b.WriteString(`,"params":`)
		b.Write(params)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// ResultResponse builds the JSON of a successful response.
func ResultResponse(id ID, result json.RawMessage) []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.WriteString(id.raw)
	b.WriteString(`,"result":`)
	b.Write(result)
	b.WriteByte('}')
	return b.Bytes()
}

// ErrorResponse builds the JSON of an error response.
func ErrorResponse(id ID, code int, message string) []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	if id.IsZero() {
		b.WriteString("null")
	} else {
		b.WriteString(id.raw)
	}
	fmt.Fprintf(&b, `,"error":{"code":%d,"message":`, code)
	writeString(&b, message)
	b.WriteString("}}")
	return b.Bytes()
}

func writeString(b *bytes.Buffer, s string) {
	enc, _ := json.Marshal(s)
	b.Write(enc)
}
