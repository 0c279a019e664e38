package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// decodeStd is the reference for Decode: the envelope unmarshalled by
// encoding/json (Decode's implementation before it walked the members by
// hand), plus the one rule encoding/json cannot express, exact member
// names. FuzzDecodeMatchesEncodingJSON holds Decode to it.
func decodeStd(data []byte) (Message, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return Message{}, errors.New("empty message")
	}
	if data[0] == '[' {
		return Message{}, ErrBatch
	}
	if data[0] != '{' {
		return Message{}, fmt.Errorf("not a JSON object")
	}
	var env struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  *string         `json:"method"`
		Params  json.RawMessage `json:"params"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(data, &env); err != nil {
		return Message{}, fmt.Errorf("invalid JSON: %w", err)
	}
	// The names: decode the object's keys one by one and compare them,
	// unescaped, with the envelope's.
	var members map[string]json.RawMessage
	if err := json.Unmarshal(data, &members); err != nil {
		return Message{}, err
	}
	for k := range members {
		for _, n := range envelopeNames {
			if k != n && strings.EqualFold(k, n) {
				return Message{}, fmt.Errorf("member %q is not %q", k, n)
			}
		}
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
			return Message{}, errors.New("both a method and a result or error")
		}
		if *env.Method == "" {
			return Message{}, errors.New(`"method" is empty`)
		}
		m.Method = *env.Method
		if len(env.Params) > 0 && string(env.Params) != "null" {
			m.Params = env.Params
		}
		if hasID {
			if m.ID == NullID {
				return Message{}, errors.New("request id must not be null")
			}
			m.Kind = KindRequest
		} else {
			m.Kind = KindNotification
		}
	case env.Result != nil && env.Error != nil:
		return Message{}, errors.New("both a result and an error")
	case env.Result != nil:
		if !hasID {
			return Message{}, errors.New("result without an id")
		}
		m.Kind = KindResult
		m.Result = env.Result
	case env.Error != nil:
		if t := bytes.TrimSpace(env.Error); len(t) == 0 || t[0] != '{' {
			return Message{}, errors.New(`"error" must be an object`)
		}
		var e Error
		if err := json.Unmarshal(env.Error, &e); err != nil {
			return Message{}, err
		}
		if !hasID {
			m.ID = NullID
		}
		m.Kind = KindError
		m.Error = &e
	default:
		return Message{}, errors.New("neither a method, a result nor an error")
	}
	return m, nil
}

// sameMessage reports whether two decoded messages are identical.
func sameMessage(a, b Message) bool {
	if a.Kind != b.Kind || a.ID != b.ID || a.Method != b.Method ||
		!bytes.Equal(a.Params, b.Params) || !bytes.Equal(a.Result, b.Result) || (a.Error == nil) != (b.Error == nil) {
		return false
	}
	return a.Error == nil || (a.Error.Code == b.Error.Code && a.Error.Message == b.Error.Message && bytes.Equal(a.Error.Data, b.Error.Data))
}

// decodeSeeds are messages whose decoding is easy to get wrong by hand:
// escapes, nulls, duplicates, nesting, strings holding quotes and braces,
// names in another case or spelt with escapes.
var decodeSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"a","progress":1,"total":2}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"content":[]}}`,
	`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":{"a":[1,2]}}}`,
	`{"jsonrpc":"2.0","id":1e2,"result":null}`,
	`{"jsonrpc":"2.0","id":{"odd":true},"method":"m"}`,
	`[1]`, `{}`, `null`, "\ufeff{}", `{"jsonrpc":"2.0","id":1,"error":null}`,
	`{"JSONRPC":"2.0","Id":1,"Result":{}}`,
	`{"jsonrpc":"2.0","METHOD":"notifications/progress","Params":{}}`,
	`{"jsonrpc":"2.0","id":1,"reſult":{}}`,
	`{"jsonrpc":"2.0","\u0069d":1,"result":{}}`,
	`{"jsonrpc":"2.0","\u0049d":1,"result":{}}`,
	`{"json\u0072pc":"2\u002e0","id":1,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"id":2,"result":{"a":"}\"]"}}`,
	`{"jsonrpc":"2.0","method":"x","method":null,"id":1,"result":[{"\\":"\\\\"}]}`,
	`{ "jsonrpc" : "2.0" , "id" : 7 , "result" : { "k" : [ 1 , 2 ] } }`,
	`{"jsonrpc":"2.0","method":"caf\u00e9","params":[1,{"x":"y"}]}`,
	"{\"jsonrpc\":\"2.0\",\"method\":\"bad\xffutf8\"}",
	`{"jsonrpc":"2.0","method":5}`, `{"jsonrpc":2.0,"id":1,"result":1}`, `{"jsonrpc":null,"id":1,"result":1}`,
	`{"jsonrpc":"2.0","id":1,"result":true,"x-extra":{"Id":1}}`,
	`{"jsonrpc":"2.0","id":-0,"result":false}`,
	// Invalid JSON after, or inside, what the walk has already picked out:
	// it is invalid JSON, whatever a member said before it.
	`{"jsonrpc":"2.0","Id":1,"result":{}` + "\x01" + `}`, `{"Id":1,"jsonrpc":"2.0","result":[1,]}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":01}}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}} x`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"message":"a\qb"}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"a":"\u00e9\ud800"},}`, `{"jsonrpc":"2.0","id":1 "result":1}`,
	`{"jsonrpc":"2.0","method":"notifications/message"}`, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":null}`,
	`{"jsonrpc":"2.0","method":"notifications/progres\u0073"}`,
	// Progress params read in the walk, or left to the slow path: a
	// duplicate params (the last wins), params before the method, a
	// params spelt with an escape, another method first, escapes inside.
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1},"params":{"progressToken":2,"progress":2}}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1},"params":[]}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1},"params":null}`,
	`{"params":{"progressToken":"a","progress":3,"total":4,"message":"m"},"method":"notifications/progress","jsonrpc":"2.0"}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","p\u0061rams":{"progressToken":1,"progress":1}}`,
	`{"jsonrpc":"2.0","method":"notifications/message","params":{"progressToken":1,"progress":1}}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1,"message":"caf\u00e9"}}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":"1"}}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1},"method":"notifications/progress"}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1,"total":2},"params":{"progressToken":1,"progress":5}}`,
}

// FuzzDecodeMatchesEncodingJSON: Decode accepts exactly what decodeStd
// accepts, and decodes it to the same message.
func FuzzDecodeMatchesEncodingJSON(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecodeLikeStd(t, data)
	})
}

// checkDecodeLikeStd holds Decode, DecodeOwned and DecodeLine to decodeStd;
// DecodeLine's progress, when it gives one, to DecodeProgress's.
func checkDecodeLikeStd(t *testing.T, data []byte) {
	t.Helper()
	want, werr := decodeStd(data)
	decoders := map[string]func([]byte) (Message, error){
		"Decode": Decode, "DecodeOwned": DecodeOwned,
		"DecodeLine": func(b []byte) (Message, error) { m, _, err := DecodeLine(b); return m, err },
	}
	for name, decode := range decoders {
		got, err := decode(bytes.Clone(data))
		if (err == nil) != (werr == nil) {
			t.Fatalf("%s(%q) error %v, encoding/json's %v", name, data, err, werr)
		}
		if err == nil && !sameMessage(got, want) {
			t.Fatalf("%s(%q) = %+v, encoding/json gives %+v", name, data, got, want)
		}
	}
	if m, p, err := DecodeLine(bytes.Clone(data)); err == nil && m.Method == NotifyProgress && m.Kind == KindNotification && m.Params != nil {
		dp, derr := DecodeProgress(m.Params)
		if (p != nil) != (derr == nil) || (p != nil && !sameProgress(*p, dp)) {
			t.Fatalf("DecodeLine(%q) progress %+v; DecodeProgress %+v, %v", data, p, dp, derr)
		}
	}
}

func TestDecodeMatchesEncodingJSON(t *testing.T) {
	for _, s := range decodeSeeds {
		checkDecodeLikeStd(t, []byte(s))
	}
}

// validSeeds are texts whose validity is easy to get wrong by hand: every
// escape, numbers at the edges of the grammar, literals cut short or run
// on, controls and non-UTF-8 bytes in strings, whitespace JSON does not
// allow, nesting at and past encoding/json's depth.
var validSeeds = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `1.5e+10`, `1E-2`, `-`, `01`, `1.`, `.5`, `1e`, `1e+`, `+1`, `0x1`, `-01`, `1.0e5.2`,
	`true`, `false`, `null`, `tru`, `nul`, `nulls`, `truefalse`, `True`, ` null `, "\tnull\r\n", "\vnull", "\u00a0null",
	`"\"\\\/\b\f\n\r\t\u00e9\uD800"`, `"\x"`, `"\u12"`, `"\u12g4"`, `"\`, `"abc`, "\"a\x01b\"", "\"a\x7fb\"", "\"bad\xffutf8\"",
	`{"a":1,}`, `{"a" 1}`, `{"a":1 "b":2}`, `{a:1}`, `{"a":}`, `{,}`, `{"a":1}}`, `{"a":1} {}`, `[1,,2]`, `[1 2]`, `[,]`, `[1,]`,
	`{"a":[1,{"b":[null,true,"}"]}],"c":{}}`, ` { "k" : [ 1 , 2 ] } `, `{"a":"\u0000"}`, ``, ` `, `[`, `{`, `]`, `}`,
}

// deepSeeds nest at and past encoding/json's depth (10 000): tested, not
// fuzzed (mutating 20 KB inputs slows the fuzzer a hundredfold).
var deepSeeds = []string{
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000),
	strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001),
	strings.Repeat("[", 9999) + `{"a":1}` + strings.Repeat("]", 9999),
	strings.Repeat("[", 10000) + `{"a":1}` + strings.Repeat("]", 10000),
}

// FuzzValidMatchesEncodingJSON: the validating walk Decode and
// DecodeProgress rely on accepts exactly what json.Valid accepts.
func FuzzValidMatchesEncodingJSON(f *testing.F) {
	for _, s := range append(validSeeds, decodeSeeds...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := validJSON(data), json.Valid(data); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid %v", data, got, want)
		}
	})
}

func TestValidMatchesEncodingJSON(t *testing.T) {
	for _, s := range append(append(validSeeds, deepSeeds...), decodeSeeds...) {
		if got, want := validJSON([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Errorf("validJSON(%.80q) = %v, json.Valid %v", s, got, want)
		}
	}
}
