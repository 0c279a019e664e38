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
// never aliases the buffer it was decoded from.
type Message struct {
	Kind   Kind
	ID     ID // zero for notifications
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  *Error
}

// IsResponse reports whether the message answers a request.
func (m *Message) IsResponse() bool { return m.Kind == KindResult || m.Kind == KindError }

// envelope is the union of every field a JSON-RPC message may carry.
type envelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// ErrBatch is returned for a JSON array: MCP has no batches since 2025-06-18.
var ErrBatch = errors.New("JSON-RPC batch (array) is not allowed in MCP")

// Decode parses one JSON-RPC message. It is strict about the envelope (it must
// be an object with "jsonrpc":"2.0" and one consistent shape) but keeps
// params, results and error data as raw JSON. The returned message copies
// what it keeps, so data may be reused by the caller.
func Decode(data []byte) (Message, error) {
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
	if err := json.Unmarshal(data, &env); err != nil {
		return Message{}, fmt.Errorf("invalid JSON: %w", err)
	}
	if env.JSONRPC != "2.0" {
		return Message{}, fmt.Errorf(`"jsonrpc" must be "2.0", got %q`, env.JSONRPC)
	}
	var m Message
	hasID := len(env.ID) > 0
	if hasID {
		id, err := ParseID(env.ID)
		if err != nil {
			return Message{}, err
		}
		m.ID = id
	}
	switch {
	case env.Method != nil:
		if env.Result != nil || env.Error != nil {
			return Message{}, errors.New("message has both a method and a result or error")
		}
		if *env.Method == "" {
			return Message{}, errors.New(`"method" is empty`)
		}
		m.Method = *env.Method
		m.Params = nullToNil(env.Params)
		if hasID {
			if m.ID == NullID {
				return Message{}, errors.New("request id must not be null")
			}
			m.Kind = KindRequest
		} else {
			m.Kind = KindNotification
		}
	case env.Result != nil && env.Error != nil:
		return Message{}, errors.New("response has both a result and an error")
	case env.Result != nil:
		if !hasID {
			return Message{}, errors.New("result without an id")
		}
		m.Kind = KindResult
		m.Result = env.Result
	case env.Error != nil:
		// "error": null or a non-object would otherwise decode as an error
		// with code 0 and no message, hiding what the server really sent.
		if t := bytes.TrimSpace(env.Error); len(t) == 0 || t[0] != '{' {
			return Message{}, errors.New(`"error" must be an object`)
		}
		var e Error
		if err := json.Unmarshal(env.Error, &e); err != nil {
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

func nullToNil(r json.RawMessage) json.RawMessage {
	if len(r) == 0 || string(r) == "null" {
		return nil
	}
	return r
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
