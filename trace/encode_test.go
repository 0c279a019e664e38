package trace

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"inflight/wire"
)

// encodeStd is appendRecord's reference: what Write did before, and still
// does for what appendRecord leaves to it.
func encodeStd(t testing.TB, rec *Record) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rec); err != nil {
		t.Fatalf("encoding/json: %v", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// recordSeeds are strings encoding/json escapes in its own way: quotes,
// backslashes, every control character, HTML characters (not escaped
// here), bytes that are not UTF-8, U+2028 and U+2029, C1 controls.
var recordSeeds = []string{
	"", "plain", `q"uote\back`, "\x00\x01\b\f\n\r\t\x1f\x7f", "<a&b>", "bad\xff\xfe utf8 \xe2\x82", "\u2028\u2029",
	"caf\u00e9 \U0001F600", "\u0085\u009b[31m", "\u202e bidi",
}

func checkRecord(t *testing.T, rec *Record) {
	t.Helper()
	got, ok := appendRecord(nil, rec)
	if !ok {
		t.Fatalf("appendRecord refused %+v", rec)
	}
	if want := encodeStd(t, rec); !bytes.Equal(got, want) {
		t.Fatalf("appendRecord:\n%s\nencoding/json:\n%s", got, want)
	}
}

// FuzzAppendRecordMatchesEncodingJSON: the hand encoder writes the bytes
// encoding/json's Encoder writes, for every field and every string.
func FuzzAppendRecordMatchesEncodingJSON(f *testing.F) {
	for i, s := range recordSeeds {
		f.Add(s, float64(i)*1.25, i-3, i%2 == 0)
	}
	f.Add("x", 1e21, 1<<40, true)
	f.Add("x", 1e-7, -1, false)
	f.Add("x", -0.000001, 0, true)
	f.Add("x", 123456789.123, 7, false)
	f.Fuzz(func(t *testing.T, s string, ms float64, n int, flag bool) {
		if math.IsInf(ms, 0) || math.IsNaN(ms) {
			if _, ok := appendRecord(nil, &Record{MS: ms}); ok {
				t.Fatalf("appendRecord wrote a non-finite time %v", ms)
			}
			return
		}
		id := wire.StringID(s)
		num0 := wire.IntID(int64(n) + 1)
		full := Record{MS: ms, Dir: s, ID: &id, Compacted: flag, Event: s, Internal: !flag, Raw: s, Truncated: n,
			Text: s, Error: s, Status: n, ContentType: s, Signal: s, Reason: s, ByClient: flag, Lost: !flag,
			State: s, From: s, Method: s, Target: s, Code: s, CheckStatus: s, Transport: s, Era: s,
			ProtocolVersion: s, Server: s, SessionID: s, Violation: s, Coalesced: n, LastMS: ms / 3, Dropped: n, Verdict: s, Injected: s, Parent: &num0, End: n,
			Owner: &num0, Resumed: flag, RTT: ms / 7}
		checkRecord(t, &full)
		num := wire.IntID(int64(n))
		checkRecord(t, &Record{MS: ms, Dir: DirIn, ID: &num, Internal: flag, Truncated: n})
		checkRecord(t, &Record{MS: ms, Dir: s, Text: s})
		checkRecord(t, &Record{ID: &wire.ID{}})
	})
}

func TestAppendRecordMatchesEncodingJSON(t *testing.T) {
	for i, s := range recordSeeds {
		id := wire.StringID(s)
		checkRecord(t, &Record{MS: float64(i) * 0.001, Dir: s, ID: &id, Event: s, Text: s, Error: s, Reason: s,
			Truncated: i, Status: 200 + i, Internal: i%2 == 0, Coalesced: i, LastMS: 1e-7 * float64(i)})
	}
	for _, ms := range []float64{0, -0.0, 1e20, 1e21, 1e-6, 9.99e-7, 123.456, -5, 1.5e300} {
		checkRecord(t, &Record{MS: ms, Dir: DirLocal, LastMS: ms})
	}
}

// BenchmarkWriteProgress is one traced progress notification, as `call
// --trace` writes a flood's.
func BenchmarkWriteProgress(b *testing.B) {
	ev := received(12, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":12345,"total":300000,"message":"working"}}`, wire.ID{})
	p, err := ev.Msg.ReadProgress()
	if err != nil {
		b.Fatal(err)
	}
	ev.Progress = p
	w := NewWriter(discard{}, t0, nil)
	b.ReportAllocs()
	for b.Loop() {
		if err := w.Event(ev); err != nil {
			b.Fatal(err)
		}
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// Every field of Record is written by the hand encoder: one added to the
// struct and forgotten in appendRecord would vanish from traces silently
// (Dropped did, once). Each field is set in turn, by reflection, and the
// bytes compared with encoding/json's.
func TestAppendRecordWritesEveryField(t *testing.T) {
	typ := reflect.TypeOf(Record{})
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Name == "Msg" {
			continue // spliced in by Write itself
		}
		if f.Name == "HTTP" {
			// An exchange is left to encoding/json (TestHTTPRecordRoundTrip).
			if _, ok := appendRecord(nil, &Record{HTTP: &HTTP{Method: "GET"}}); ok {
				t.Errorf("appendRecord wrote an HTTP exchange itself")
			}
			continue
		}
		var rec Record
		v := reflect.ValueOf(&rec).Elem().Field(i)
		switch v.Kind() {
		case reflect.String:
			v.SetString("x")
		case reflect.Int:
			v.SetInt(7)
		case reflect.Float64:
			v.SetFloat(1.5)
		case reflect.Bool:
			v.SetBool(true)
		case reflect.Pointer:
			id := wire.IntID(3)
			v.Set(reflect.ValueOf(&id))
		default:
			t.Fatalf("field %s of kind %s: teach this test (and appendRecord) about it", f.Name, v.Kind())
		}
		t.Run(f.Name, func(t *testing.T) { checkRecord(t, &rec) })
	}
}
