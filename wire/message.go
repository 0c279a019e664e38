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
func Decode(data []byte) (Message, error) { return decode(data, false) }

// DecodeOwned is Decode for a buffer the caller hands over: the message's
// Params and Result alias data instead of copying it, so data must never
// change afterwards. The client's reader copies each line once, for the
// event's Raw, and decodes that copy: one allocation per message instead
// of two.
func DecodeOwned(data []byte) (Message, error) { return decode(data, true) }

func decode(data []byte, owned bool) (Message, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return Message{}, errors.New("empty message")
	}
	if data[0] == '[' {
		return Message{}, ErrBatch
	}
	if data[0] != '{' {
		return Message{}, fmt.Errorf("not a JSON object (starts with %q)", printable(data[0]))
	}
	var env envelope
	end, valid, err := validObject(data, 0, 1, env.set)
	if !valid || skipSpace(data, end) != len(data) {
		// Only now pay for encoding/json's description of what is wrong.
		var v json.RawMessage
		err := json.Unmarshal(data, &v)
		if err == nil {
			err = errors.New("invalid")
		}
		return Message{}, fmt.Errorf("invalid JSON: %w", err)
	}
	if err != nil {
		return Message{}, err
	}
	clone := bytes.Clone
	if owned {
		clone = func(b []byte) []byte { return b }
	}
	if string(env.jsonrpc) != `"2.0"` {
		// Anything else, including "2.0" spelt with an escape, takes the
		// slow path.
		v, isString := decodeString(env.jsonrpc)
		if !isString && env.jsonrpc != nil && string(env.jsonrpc) != "null" {
			return Message{}, fmt.Errorf(`"jsonrpc" must be the string "2.0", got %s`, clipRaw(env.jsonrpc))
		}
		if v != "2.0" {
			return Message{}, fmt.Errorf(`"jsonrpc" must be "2.0", got %q`, v)
		}
	}
	var m Message
	hasID := env.id != nil
	if hasID {
		id, err := ParseID(env.id)
		if err != nil {
			return Message{}, err
		}
		m.ID = id
	}
	// A null method is no method, as with encoding/json's *string.
	hasMethod := env.method != nil && string(env.method) != "null"
	hasResult, hasError := env.result != nil, env.error != nil
	switch {
	case hasMethod:
		if hasResult || hasError {
			return Message{}, errors.New("message has both a method and a result or error")
		}
		method, isString := methodName(env.method)
		if !isString {
			return Message{}, fmt.Errorf(`invalid JSON: "method" must be a string, got %s`, clipRaw(env.method))
		}
		if method == "" {
			return Message{}, errors.New(`"method" is empty`)
		}
		m.Method = method
		if env.params != nil && string(env.params) != "null" {
			m.Params = clone(env.params)
			m.checked = &m.Params[0]
		}
		if hasID {
			if m.ID == NullID {
				return Message{}, errors.New("request id must not be null")
			}
			m.Kind = KindRequest
		} else {
			m.Kind = KindNotification
		}
	case hasResult && hasError:
		return Message{}, errors.New("response has both a result and an error")
	case hasResult:
		if !hasID {
			return Message{}, errors.New("result without an id")
		}
		m.Kind = KindResult
		m.Result = clone(env.result)
	case hasError:
		// "error": null or a non-object would otherwise decode as an error
		// with code 0 and no message, hiding what the server really sent.
		if env.error[0] != '{' {
			return Message{}, errors.New(`"error" must be an object`)
		}
		var e Error
		if err := json.Unmarshal(env.error, &e); err != nil {
			return Message{}, fmt.Errorf("malformed error object: %w", err)
		}
		if !hasID {
			m.ID = NullID
		}
		m.Kind = KindError
		m.Error = &e
	default:
		return Message{}, errors.New("message has neither a method, a result nor an error")
	}
	return m, nil
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
