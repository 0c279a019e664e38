package trace

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"inflight/event"
	"inflight/wire"
)

// parseSeeds are lines of every shape: what Writer writes for each kind
// of record, and what it never writes but a reader may meet (escapes,
// nulls, members in another case, numbers of another form, garbage).
func parseSeeds(t testing.TB) [][]byte {
	var buf bytes.Buffer
	w := NewWriter(&buf, time.Unix(0, 0), nil)
	id, parent := wire.IntID(7), wire.StringID("conv-1")
	call := wire.Request(id, "tools/call", []byte(`{"name":"slow", "arguments": {"n":[1,2.5e3,true,null]}}`))
	msg, _ := wire.Decode(call)
	_ = w.Event(event.Event{Kind: event.Sent, Time: time.Unix(0, 1500), RequestID: id, Raw: call, Msg: msg})
	for _, s := range recordSeeds {
		_ = w.Write(Record{MS: 1.5, Dir: DirLocal, Event: EventNote, Text: s, Error: s, ID: &parent})
	}
	_ = w.Write(Record{MS: 2, Dir: DirLocal, Event: EventState, ID: &id, State: "cancel_requested", From: "running", Method: "tools/call",
		Target: "slow", Reason: "user", Parent: &parent, Round: 2, Conversation: &id, Truncated: 3, Dropped: 4, Status: 200,
		Coalesced: 5, LastMS: 9.25, End: 1 << 40, Compacted: true, Internal: true, ByClient: true, Lost: true, Verdict: "late",
		Injected: "delay 30s", Code: "c", CheckStatus: "PASS", Transport: "stdio", Era: "modern", ProtocolVersion: "v",
		Server: "s", SessionID: "x", Violation: "v", ContentType: "text/plain", Signal: "stream_closed", By: "host", Raw: "r",
		Owner: &parent, Resumed: true, RTT: 0.125})
	_ = w.Close()
	seeds := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
	for _, s := range []string{
		`{"ms":1,"dir":"in","msg":null,"event":"x"}`,
		`{"MS":1,"dir":"in","event":"x"}`,
		`{"ms":1e2,"dir":"in","event":"x","status":1e2}`,
		`{"ms":-0,"dir":"in","event":"x","status":-0}`,
		`{"ms":01,"dir":"in","event":"x"}`,
		`{"ms":1,"dir":"in","event":"x","id":"a\"b"}`,
		`{"ms":1,"dir":"in","event":"x","id":1.50}`,
		`{"ms":1,"dir":"in","event":"x","id":null}`,
		`{"ms":1,"dir":"in","event":"x","id":{"a":1}}`,
		`{"ms":1,"dir":"in","event":"x","internal":"yes"}`,
		`{"ms":1,"dir":"in","event":"x","owner":null,"resumed":false}`,
		`{"ms":1,"dir":"in","event":"x","owner":"a\u0062","resumed":1}`,
		`{"ms":1,"dir":"in","event":"x","text":"caf\u00e9"}`,
		`{"ms":1,"dir":"in","event":"x"} trailing`,
		`{"ms":1,"dir":"in","event":"x",}`,
		`{"ms":1,"dir":"in","msg":{"jsonrpc":"2.0","method":"m"}, "msg" : [1 , 2] }`,
		`{"ms":1,"dir":"in","msg":{"unterminated":"x}`,
		` { "ms" : 1 , "dir" : "in" , "event" : "x" } `,
		`{"ms":1,"dir":"in","event":"\u0078","unknown":1}`,
		`{}`, `[]`, `"x"`, `{"ms":1,"dir":"in","event":"bad` + "\xff" + `"}`,
		`{"ms":99999999999999999999999999,"dir":"in","event":"x","truncated":99999999999999999999}`,
	} {
		seeds = append(seeds, []byte(s))
	}
	return seeds
}

// checkParse: where parseFast decodes a line, encoding/json decodes it to
// the same record; where encoding/json refuses it, parseFast leaves it.
func checkParse(t *testing.T, line []byte) {
	t.Helper()
	fast, ok := parseFast(line)
	if !ok {
		return
	}
	var std Record
	if err := json.Unmarshal(line, &std); err != nil {
		t.Fatalf("parseFast decoded %q, which encoding/json refuses: %v", line, err)
	}
	if !reflect.DeepEqual(fast, std) {
		t.Fatalf("%q:\nparseFast     %+v\nencoding/json %+v", line, fast, std)
	}
}

// TestParseFastMatchesEncodingJSON runs the fuzz target's seeds, and
// checks that the lines Writer writes do take the fast path.
func TestParseFastMatchesEncodingJSON(t *testing.T) {
	seeds := parseSeeds(t)
	fast := 0
	for _, s := range seeds {
		checkParse(t, s)
		if _, ok := parseFast(s); ok {
			fast++
		}
	}
	if fast < len(recordSeeds)/2 {
		t.Errorf("only %d of the lines took the fast path", fast)
	}
	if _, ok := parseFast(seeds[0]); !ok {
		t.Errorf("a message line Writer wrote left to encoding/json: %s", seeds[0])
	}
}

// FuzzParseFastMatchesEncodingJSON: the fast path decodes exactly what
// encoding/json decodes, or leaves the line to it.
func FuzzParseFastMatchesEncodingJSON(f *testing.F) {
	for _, s := range parseSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line []byte) { checkParse(t, line) })
}

// TestReaderOffsets: a reader says where each line begins, and one
// opened at such a place reads on from that line, counting lines as the
// first did.
func TestReaderOffsets(t *testing.T) {
	data := "{\"ms\":1,\"dir\":\"in\",\"event\":\"a\"}\r\n\n  \n{\"ms\":2,\"dir\":\"in\",\"event\":\"b\"}\nnot a record\n{\"ms\":3,\"dir\":\"in\",\"event\":\"c\"}"
	r := NewReader(bytes.NewReader([]byte(data)))
	type mark struct {
		off  int64
		line int
	}
	var marks []mark
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		marks = append(marks, mark{r.Offset(), r.Line()})
		if err == nil && !bytes.HasPrefix([]byte(data[r.Offset():]), []byte(`{"ms":`)) {
			t.Errorf("record %q: offset %d points at %q", rec.Event, r.Offset(), data[r.Offset():])
		}
	}
	at := func(s string) int64 { return int64(strings.Index(data, s)) }
	want := []mark{{0, 1}, {at(`{"ms":2`), 4}, {at("not a"), 5}, {at(`{"ms":3`), 6}}
	if !reflect.DeepEqual(marks, want) {
		t.Fatalf("marks %v, want %v", marks, want)
	}
	r2 := NewReaderAt(strings.NewReader(data[at("not a"):]), at("not a"), 4)
	if _, err := r2.Next(); err == nil || r2.Line() != 5 || r2.Offset() != at("not a") {
		t.Errorf("from line 5: err %v, line %d, offset %d", err, r2.Line(), r2.Offset())
	}
	if rec, err := r2.Next(); err != nil || rec.Event != "c" || r2.Line() != 6 || r2.Offset() != at(`{"ms":3`) {
		t.Errorf("then %q %v, line %d, offset %d", rec.Event, err, r2.Line(), r2.Offset())
	}
}
