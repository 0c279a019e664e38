package wire

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

var progressSeeds = []string{
	`{"progressToken":"tok","progress":2.5,"total":10,"message":"half"}`,
	`{"progressToken":1,"progress":1}`,
	` { "progressToken" : 7 , "progress" : -0 , "total" : 1e3 } `,
	`{"progressToken":1,"progress":1,"message":"caf\u00e9 \"q\""}`,
	`{"progressToken":null,"progress":1}`,
	`{"progressToken":1,"progress":null}`,
	`{"progressToken":1,"progress":"1"}`,
	`{"progressToken":1,"progress":1e400}`,
	`{"progressToken":1,"progress":1,"total":null}`,
	`{"progressToken":1,"progress":1,"total":2,"total":null}`,
	`{"progressToken":1,"progress":1,"message":null}`,
	`{"progressToken":1,"progress":1,"message":5}`,
	`{"ProgressToken":1,"PROGRESS":1}`,
	`{"progressToken":1,"progress":1,"PROGRESS":"x","Total":"y"}`,
	`{"progre\u0073sToken":1,"progress":1}`,
	`{"progressToken":{"a":[1,"}"]},"progress":1,"extra":[true,false,null]}`,
	`{"progressToken":-Inf,"progress":1}`,
	`{"progress":1}`, `{"progressToken":1}`, `[]`, `null`, `{}`, `"x"`, ``, `{`,
	"{\"progressToken\":1,\"progress\":1,\"message\":\"bad\xffutf8\"}",
	// Invalid JSON the validating walk must refuse where it reads: in a
	// value it extracts, in one it skips, after the object.
	`{"progressToken":1,"progress":01}`, `{"progressToken":1,"progress":1.}`, `{"progressToken":1,"progress":1,"total":-}`,
	`{"progressToken":1,"progress":1,"x":[1,]}`, `{"progressToken":1,"progress":1,"x":{"a":tru}}`,
	`{"progressToken":1,"progress":1,"message":"a\qb"}`, "{\"progressToken\":1,\"progress\":1,\"message\":\"tab\there\"}",
	`{"progressToken":1,"progress":1,"message":"\u12G4"}`, `{"progressToken":1,"progress":1} x`, `{"progressToken":1,"progress":1}}`,
	`{"progressToken":1,"progress":1,}`, `{"progressToken" 1,"progress":1}`, `{"progressToken":1 "progress":1}`,
	`{"progressToken":"\ud800","progress":1}`,
	// Integers the fast number path reads, and the edges where it hands
	// over to ParseFloat.
	`{"progressToken":1,"progress":-0,"total":0}`, `{"progressToken":1,"progress":999999999999999,"total":1000000000000000}`,
	`{"progressToken":1,"progress":-999999999999999,"total":9007199254740993}`, `{"progressToken":1,"progress":12.0,"total":1e2}`, "\t{\"progressToken\":1,\"progress\":1}\r\n",
}

// FuzzDecodeProgressFast: DecodeProgress, whatever path it takes, accepts
// exactly what the encoding/json path accepts and reads the same values.
func FuzzDecodeProgressFast(f *testing.F) {
	for _, s := range progressSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkProgressLikeStd(t, data)
	})
}

func TestDecodeProgressMatchesEncodingJSON(t *testing.T) {
	for _, s := range progressSeeds {
		checkProgressLikeStd(t, []byte(s))
	}
	// The common shape takes the fast path.
	for _, checked := range []bool{false, true} {
		if _, _, _, ok := decodeProgressFast([]byte(progressSeeds[0]), checked); !ok {
			t.Errorf("well-formed progress took the slow path (checked %v)", checked)
		}
	}
}

// checkProgressLikeStd holds both readers to encoding/json: DecodeProgress
// on the bytes, and Message.ReadProgress on the params of a whole message
// carrying them (validated once, by Decode) when they make one.
func checkProgressLikeStd(t *testing.T, data []byte) {
	t.Helper()
	got, err := DecodeProgress(json.RawMessage(data))
	want, werr := decodeProgressStd(json.RawMessage(data))
	if (err == nil) != (werr == nil) {
		t.Fatalf("DecodeProgress(%q) error %v, encoding/json's %v", data, err, werr)
	}
	if err == nil && !sameProgress(got, want) {
		t.Fatalf("DecodeProgress(%q) = %+v, encoding/json gives %+v", data, got, want)
	}
	line := append(append([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":`), data...), '}')
	// DecodeLine reads the params in the walk that validates the line.
	if msg, p, lerr := DecodeLine(bytes.Clone(line)); lerr == nil && msg.Params != nil {
		if (p != nil) != (werr == nil) {
			t.Fatalf("DecodeLine(%q): progress %+v, encoding/json's error %v", line, p, werr)
		}
		if p != nil && !sameProgress(*p, want) {
			t.Fatalf("DecodeLine(%q) = %+v, encoding/json gives %+v", line, *p, want)
		}
	}
	for _, decode := range []func([]byte) (Message, error){Decode, DecodeOwned} {
		msg, merr := decode(line)
		if merr != nil || msg.Params == nil {
			continue // not an object, or null: no params to read
		}
		p, rerr := msg.ReadProgress()
		if (rerr == nil) != (werr == nil) {
			t.Fatalf("ReadProgress of %q: error %v, encoding/json's %v", line, rerr, werr)
		}
		if rerr == nil && !sameProgress(*p, want) {
			t.Fatalf("ReadProgress of %q = %+v, encoding/json gives %+v", line, *p, want)
		}
	}
}

func sameProgress(got, want Progress) bool {
	same := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) } // -0 is not 0
	return got.Token == want.Token && same(got.Progress, want.Progress) && got.Message == want.Message &&
		(got.Total == nil) == (want.Total == nil) && (got.Total == nil || same(*got.Total, *want.Total))
}

// TestReadProgressTrustsOnlyDecode: params are walked without validation
// only while they are the bytes Decode validated; params put in a Message
// by hand, or replaced after Decode, are validated.
func TestReadProgressTrustsOnlyDecode(t *testing.T) {
	bad := json.RawMessage(`{"progressToken":1,"progress":1,"x":[1,}`)
	if _, err := (&Message{Kind: KindNotification, Method: NotifyProgress, Params: bad}).ReadProgress(); err == nil {
		t.Error("hand-built params that are not JSON were read")
	}
	msg, err := Decode([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	if p, err := msg.ReadProgress(); err != nil || p.Progress != 1 || p.Total != nil {
		t.Fatalf("ReadProgress = %+v, %v", p, err)
	}
	msg.Params = bad
	if _, err := msg.ReadProgress(); err == nil {
		t.Error("params replaced after Decode were trusted as validated")
	}
	msg2, _ := Decode([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"a","progress":2,"total":4}}`))
	p, err := msg2.ReadProgress()
	if err != nil || p.Token != StringID("a") || p.Total == nil || *p.Total != 4 {
		t.Fatalf("ReadProgress = %+v, %v", p, err)
	}
}

// TestDecodeProgressNamesAreExact: the schema's names, in its case, are the
// only ones read; a name spelt with escapes is the name it spells.
func TestDecodeProgressNamesAreExact(t *testing.T) {
	if _, err := DecodeProgress(json.RawMessage(`{"ProgressToken":1,"PROGRESS":1}`)); err == nil {
		t.Error("other-case names were taken for progressToken and progress")
	}
	p, err := DecodeProgress(json.RawMessage(`{"progressToken":1,"progress":1,"PROGRESS":"x","Total":"y"}`))
	if err != nil || p.Progress != 1 || p.Total != nil {
		t.Errorf("other-case members were read: %+v, %v", p, err)
	}
	p, err = DecodeProgress(json.RawMessage(`{"progre\u0073sToken":"a","progress":2}`))
	if err != nil || p.Progress != 2 {
		t.Errorf("an escaped spelling of progressToken was not read: %+v, %v", p, err)
	}
}

// BenchmarkDecodeLine is the client's reader on one progress line: the
// envelope and the progress params in one walk.
func BenchmarkDecodeLine(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":12345,"total":300000,"message":"working"}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, p, err := DecodeLine(line); err != nil || p == nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadProgress is the client's decode of every progress
// notification's params, already validated by Decode.
func BenchmarkReadProgress(b *testing.B) {
	msg, err := Decode([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":12345,"total":300000,"message":"working"}}`))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := msg.ReadProgress(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeProgress is the tracker's (now the client's) second decode
// of every progress notification.
func BenchmarkDecodeProgress(b *testing.B) {
	params := json.RawMessage(`{"progressToken":1,"progress":12345,"total":300000,"message":"working"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeProgress(params); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeProgressEncodingJSON is the same by encoding/json alone.
func BenchmarkDecodeProgressEncodingJSON(b *testing.B) {
	params := json.RawMessage(`{"progressToken":1,"progress":12345,"total":300000,"message":"working"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeProgressStd(params); err != nil {
			b.Fatal(err)
		}
	}
}
