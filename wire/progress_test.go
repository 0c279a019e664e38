package wire

import (
	"encoding/json"
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
	if _, ok := decodeProgressFast([]byte(progressSeeds[0])); !ok {
		t.Error("well-formed progress took the slow path")
	}
}

func checkProgressLikeStd(t *testing.T, data []byte) {
	t.Helper()
	got, err := DecodeProgress(json.RawMessage(data))
	want, werr := decodeProgressStd(json.RawMessage(data))
	if (err == nil) != (werr == nil) {
		t.Fatalf("DecodeProgress(%q) error %v, encoding/json's %v", data, err, werr)
	}
	if err != nil {
		return
	}
	same := got.Token == want.Token && got.Progress == want.Progress && got.Message == want.Message &&
		(got.Total == nil) == (want.Total == nil) && (got.Total == nil || *got.Total == *want.Total)
	if !same {
		t.Fatalf("DecodeProgress(%q) = %+v, encoding/json gives %+v", data, got, want)
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
