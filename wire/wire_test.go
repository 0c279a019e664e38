package wire

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestParseID(t *testing.T) {
	tests := []struct {
		in      string
		raw     string // canonical form; "" means an error
		valid   bool
		integer bool
	}{
		{in: "7", raw: "7", valid: true, integer: true},
		{in: " 7 ", raw: "7", valid: true, integer: true},
		// Numbers as written (issue 14, item 11): none of these is the 7
		// or the 0 inflight sends.
		{in: "7.0", raw: "7.0"},
		{in: "7e0", raw: "7e0"},
		{in: "1E0", raw: "1E0"},
		{in: "70E-1", raw: "70E-1"},
		{in: "1e-400", raw: "1e-400"},
		{in: "-0", raw: "-0", valid: true, integer: true},
		{in: "-12", raw: "-12", valid: true, integer: true},
		{in: `"7"`, raw: `"7"`, valid: true},
		{in: `"a\u0062"`, raw: `"ab"`, valid: true},
		{in: "1.5", raw: "1.5"},
		{in: "1e400", raw: "1e400"},
		{in: "9007199254740993.0", raw: "9007199254740993.0"},
		{in: "null", raw: "null"},
		{in: "true", raw: "true"},
		{in: `{ "a" : 1 }`, raw: `{"a":1}`},
		{in: "[1, 2]", raw: "[1,2]"},
		// Not JSON, though strconv would take them.
		{in: "-Inf"}, {in: "-infinity"}, {in: "0x1p4"}, {in: "01"}, {in: "1."}, {in: ".5"},
		{in: "1e"}, {in: "+1"}, {in: "1_000"}, {in: "-"}, {in: ""}, {in: "nul"}, {in: `"unterminated`},
		{in: "{"}, {in: "7 8"},
	}
	for _, tc := range tests {
		id, err := ParseID([]byte(tc.in))
		if tc.raw == "" {
			if err == nil {
				t.Errorf("ParseID(%q) = %q, want an error", tc.in, id.Raw())
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseID(%q): %v", tc.in, err)
			continue
		}
		if id.Raw() != tc.raw || id.IsValid() != tc.valid {
			t.Errorf("ParseID(%q) = %q valid=%t, want %q valid=%t", tc.in, id.Raw(), id.IsValid(), tc.raw, tc.valid)
		}
		if _, ok := id.Int(); ok != tc.integer {
			t.Errorf("ParseID(%q).Int() ok=%t", tc.in, ok)
		}
	}
	if IntID(7) != mustParse(t, "7") || IntID(7) == mustParse(t, "7.0") || IntID(7) == mustParse(t, "7e0") ||
		IntID(0) == mustParse(t, "1e-400") || IntID(0) == mustParse(t, "-0") || StringID("7") == IntID(7) {
		t.Error("7 is the ID 7, and 7.0, 7e0, \"7\" are others; 1e-400 and -0 are not 0")
	}
	if StringID("7") != mustParse(t, `"\u0037"`) {
		t.Error(`a string ID is its value: "\u0037" is "7"`)
	}
	if (ID{}).String() != "-" || !(ID{}).IsZero() || NullID.IsValid() {
		t.Error("zero and null IDs")
	}
}

func mustParse(t *testing.T, s string) ID {
	t.Helper()
	id, err := ParseID([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestDecode(t *testing.T) {
	tests := []struct {
		in     string
		kind   Kind
		id     string
		method string
		errSub string
	}{
		{in: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, kind: KindRequest, id: "1", method: "tools/list"},
		{in: `{"jsonrpc":"2.0","id":"a","method":"x","params":null}`, kind: KindRequest, id: `"a"`, method: "x"},
		{in: `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2}}`, kind: KindNotification, method: NotifyProgress},
		{in: `{"jsonrpc":"2.0","id":1,"result":{}}`, kind: KindResult, id: "1"},
		{in: `{"jsonrpc":"2.0","id":1,"result":null}`, kind: KindResult, id: "1"},
		{in: `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"nope"}}`, kind: KindError, id: "1"},
		{in: `{"jsonrpc":"2.0","error":{"code":-32600,"message":"no id"}}`, kind: KindError, id: "null"},
		{in: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}`, kind: KindError, id: "null"},
		{in: "  {\"jsonrpc\":\"2.0\",\"id\":2.0,\"result\":{}}\r\n", kind: KindResult, id: "2.0"},

		{in: ``, errSub: "empty"},
		{in: `[{"jsonrpc":"2.0","method":"x"}]`, errSub: "batch"},
		{in: `"str"`, errSub: "not a JSON object"},
		{in: "\x00", errSub: `\x00`},
		{in: `{"jsonrpc":"2.0"`, errSub: "invalid JSON"},
		{in: `{"jsonrpc":"1.0","id":1,"result":{}}`, errSub: `"2.0"`},
		{in: `{"id":1,"result":{}}`, errSub: `"2.0"`},
		{in: `{"jsonrpc":"2.0","id":1}`, errSub: "neither"},
		{in: `{"jsonrpc":"2.0","id":1,"method":"x","result":{}}`, errSub: "both a method"},
		{in: `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}`, errSub: "both a result"},
		{in: `{"jsonrpc":"2.0","id":null,"method":"x"}`, errSub: "must not be null"},
		{in: `{"jsonrpc":"2.0","method":""}`, errSub: "empty"},
		{in: `{"jsonrpc":"2.0","method":5}`, errSub: "invalid JSON"},
		{in: `{"jsonrpc":"2.0","result":{}}`, errSub: "without an id"},
		{in: `{"jsonrpc":"2.0","id":1,"error":null}`, errSub: "must be an object"},
		{in: `{"jsonrpc":"2.0","id":1,"error":"boom"}`, errSub: "must be an object"},
		{in: `{"jsonrpc":"2.0","id":1,"error":{"code":"x"}}`, errSub: "malformed error"},
		{in: `{"jsonrpc":"2.0","id":-Inf,"result":{}}`, errSub: "invalid JSON"},

		// Member names are case-sensitive; encoding/json alone would match
		// these, Unicode folding ("ſ" is "s") included.
		{in: `{"JSONRPC":"2.0","Id":1,"Result":{}}`, errSub: "case-sensitive"},
		{in: `{"jsonrpc":"2.0","Id":1,"result":{}}`, errSub: `"Id" is not "id"`},
		{in: `{"jsonrpc":"2.0","METHOD":"notifications/progress","Params":{}}`, errSub: "case-sensitive"},
		{in: `{"jsonrpc":"2.0","method":"x","Params":{}}`, errSub: `"Params" is not "params"`},
		{in: `{"jsonrpc":"2.0","id":1,"reſult":{}}`, errSub: "case-sensitive"},
		{in: `{"jsonrpc":"2.0","id":1,"result":{},"Error":null}`, errSub: "case-sensitive"},
		// The same names spelt with escapes are the same names, and members
		// JSON-RPC does not define are ignored, whatever their case.
		{in: `{"json\u0072pc":"2\u002e0","\u0069d":1,"result":{}}`, kind: KindResult, id: "1"},
		{in: `{"jsonrpc":"2.0","id":1,"result":{"Id":2},"X-Trace":"a"}`, kind: KindResult, id: "1"},
	}
	for _, tc := range tests {
		m, err := Decode([]byte(tc.in))
		if tc.errSub != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errSub) {
				t.Errorf("Decode(%q) = %+v, %v; want an error containing %q", tc.in, m, err, tc.errSub)
			}
			continue
		}
		if err != nil {
			t.Errorf("Decode(%q): %v", tc.in, err)
			continue
		}
		if m.Kind != tc.kind || m.ID.Raw() != tc.id || m.Method != tc.method {
			t.Errorf("Decode(%q) = %s id %q method %q; want %s %q %q", tc.in, m.Kind, m.ID.Raw(), m.Method, tc.kind, tc.id, tc.method)
		}
	}
}

// TestDecodeDoesNotAlias: a Message must survive the reuse of the buffer it
// was decoded from (the stdio reader hands out its own buffer).
func TestDecodeDoesNotAlias(t *testing.T) {
	buf := []byte(`{"jsonrpc":"2.0","id":1,"result":{"a":"b"},"x":1}`)
	m, err := Decode(buf)
	if err != nil {
		t.Fatal(err)
	}
	for i := range buf {
		buf[i] = 'Z'
	}
	if string(m.Result) != `{"a":"b"}` {
		t.Errorf("result changed with the input buffer: %s", m.Result)
	}
	buf = []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`)
	m, _ = Decode(buf)
	for i := range buf {
		buf[i] = 'Z'
	}
	if string(m.Params) != `{"progressToken":"t","progress":1}` || m.Method != NotifyProgress {
		t.Errorf("params changed with the input buffer: %s", m.Params)
	}
}

func TestBuilders(t *testing.T) {
	req := Request(IntID(3), "tools/call", json.RawMessage(`{"name":"x"}`))
	if string(req) != `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x"}}` {
		t.Errorf("Request: %s", req)
	}
	n := Notification(NotifyCancelled, CancelledParams(StringID("a\"b"), "why \"not\""))
	m, err := Decode(n)
	if err != nil || m.Kind != KindNotification {
		t.Fatalf("Notification %s: %v", n, err)
	}
	c, err := DecodeCancelled(m.Params)
	if err != nil || c.RequestID != StringID("a\"b") || c.Reason != `why "not"` {
		t.Errorf("cancelled round trip %+v %v", c, err)
	}
	e := ErrorResponse(ID{}, CodeParseError, "bad")
	if m, err := Decode(e); err != nil || m.Kind != KindError || m.ID != NullID || m.Error.Code != CodeParseError {
		t.Errorf("ErrorResponse with no ID: %s %v", e, err)
	}
	r := ResultResponse(IntID(1), json.RawMessage(`{}`))
	if m, err := Decode(r); err != nil || m.Kind != KindResult {
		t.Errorf("ResultResponse: %s %v", r, err)
	}
}

func TestProgressAndMeta(t *testing.T) {
	p, err := DecodeProgress(json.RawMessage(`{"progressToken":"tok","progress":2.5,"total":10,"message":"half"}`))
	if err != nil || p.Token != StringID("tok") || p.Progress != 2.5 || p.Total == nil || *p.Total != 10 || p.Message != "half" {
		t.Errorf("DecodeProgress: %+v %v", p, err)
	}
	for _, bad := range []string{`{"progress":1}`, `{"progressToken":1}`, `[]`, `{"progressToken":-Inf,"progress":1}`} {
		if _, err := DecodeProgress(json.RawMessage(bad)); err == nil {
			t.Errorf("DecodeProgress(%s) accepted", bad)
		}
	}
	params, err := SetMeta(json.RawMessage(`{"name":"x","_meta":{"keep":1}}`), map[string]any{MetaProgressToken: json.RawMessage(`7`)})
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := MetaValue(params, "keep"); !ok || string(v) != "1" {
		t.Errorf("SetMeta lost a key: %s", params)
	}
	if v, ok := MetaValue(params, MetaProgressToken); !ok || string(v) != "7" {
		t.Errorf("SetMeta: %s", params)
	}
	if _, err := SetMeta(json.RawMessage(`[1]`), nil); err == nil {
		t.Error("SetMeta accepted an array")
	}
	if Target(MethodToolsCall, json.RawMessage(`{"name":"slow"}`)) != "slow" || Target(MethodResourcesRead, json.RawMessage(`{"uri":"a://b"}`)) != "a://b" {
		t.Error("Target")
	}
	if rt, ok := ResultType(json.RawMessage(`{"resultType":"complete"}`)); !ok || rt != ResultComplete {
		t.Error("ResultType")
	}
}

// reencode builds a message of m's kind from its decoded parts with the
// package's own builders.
func reencode(m Message) []byte {
	switch m.Kind {
	case KindRequest:
		return Request(m.ID, m.Method, m.Params)
	case KindNotification:
		return Notification(m.Method, m.Params)
	case KindResult:
		return ResultResponse(m.ID, m.Result)
	case KindError:
		return ErrorResponse(m.ID, m.Error.Code, m.Error.Message)
	}
	return nil
}

// FuzzDecode: Decode never panics, and whatever it accepts re-encodes to a
// message of the same kind, ID and method.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"a","progress":1,"total":2}}`,
		`{"jsonrpc":"2.0","id":"x","result":{"content":[]}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":{"a":[1,2]}}}`,
		`{"jsonrpc":"2.0","id":1e2,"result":null}`,
		`{"jsonrpc":"2.0","id":{"odd":true},"method":"m"}`,
		`[1]`, `{}`, `null`, "\ufeff{}", `{"jsonrpc":"2.0","id":1,"error":null}`,
		`{"JSONRPC":"2.0","Id":1,"Result":{}}`, `{"jsonrpc":"2.0","\u0069d":1,"result":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(data)
		if err != nil {
			return
		}
		if m.Kind == KindInvalid {
			t.Fatalf("accepted %q as an invalid kind", data)
		}
		if (m.Kind == KindRequest || m.IsResponse()) && m.ID.IsZero() {
			t.Fatalf("accepted %q as a %s without an ID", data, m.Kind)
		}
		out := reencode(m)
		if !json.Valid(out) {
			t.Fatalf("re-encoding %q gave invalid JSON %q", data, out)
		}
		m2, err := Decode(out)
		if err != nil {
			t.Fatalf("re-encoding %q gave %q, which does not decode: %v", data, out, err)
		}
		if m2.Kind != m.Kind || m2.ID != m.ID || m2.Method != m.Method {
			t.Fatalf("%q → %s %s %q; re-encoded %q → %s %s %q", data, m.Kind, m.ID, m.Method, out, m2.Kind, m2.ID, m2.Method)
		}
		if m.Kind == KindError && (m2.Error.Code != m.Error.Code || m2.Error.Message != m.Error.Message) {
			t.Fatalf("error %+v re-encoded as %+v", m.Error, m2.Error)
		}
		for _, raw := range [][]byte{m.Params, m.Result, m.Error.dataOrNil()} {
			if len(raw) > 0 && !json.Valid(raw) {
				t.Fatalf("%q kept invalid raw JSON %q", data, raw)
			}
		}
	})
}

func (e *Error) dataOrNil() json.RawMessage {
	if e == nil {
		return nil
	}
	return e.Data
}

// FuzzParseID: ParseID never panics; an accepted ID is canonical (parsing
// its Raw form gives it back) and always marshals to valid JSON.
func FuzzParseID(f *testing.F) {
	for _, s := range []string{"1", "-0", "7.0", "1e400", `"a"`, `"\u00e9"`, "null", "{}", "-Inf", "0x1p4", "01", "1.", "9007199254740993", "123456789012345678901234567890"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		id, err := ParseID(data)
		if err != nil {
			return
		}
		b, err := id.MarshalJSON()
		if err != nil || !json.Valid(b) {
			t.Fatalf("ParseID(%q) = %q, which is not JSON", data, b)
		}
		again, err := ParseID([]byte(id.Raw()))
		if err != nil || again != id {
			t.Fatalf("ParseID(%q) = %q, but ParseID of that = %q, %v", data, id.Raw(), again.Raw(), err)
		}
		if id.IsValid() && !bytes.HasPrefix(b, []byte(`"`)) {
			if _, ok := id.Int(); !ok {
				t.Fatalf("valid non-string ID %q is not an integer", b)
			}
		}
	})
}
