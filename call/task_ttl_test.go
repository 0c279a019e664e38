package call

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"inflight/event"
	"inflight/redact"
	"inflight/session"
	"inflight/wire"
)

// A server's task TTL too large for inflight's clock (1e300 ms) is
// reported as the largest it keeps and said to be out of range: never as
// a negative number.
func TestTaskTTLOutOfRange(t *testing.T) {
	for _, ttl := range []string{"1e300", "1e400", "9223372036855"} {
		t.Run(ttl, func(t *testing.T) {
			t0 := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
			tr := session.NewTracker(session.DefaultConfig())
			info := event.ConnInfo{Transport: event.TransportStdio, Era: event.EraModern, ProtocolVersion: wire.VersionModern}
			tr.Apply(event.Event{Kind: event.Connected, Time: t0, Info: &info})
			r := tr.Begin(wire.MethodToolsCall, json.RawMessage(`{"name":"slow","arguments":{}}`), session.RequestOptions{}, t0)
			tr.Apply(event.Event{Kind: event.Sent, Time: t0, RequestID: r.ID, Raw: wire.Request(r.ID, r.Method, nil)})
			raw := []byte(`{"jsonrpc":"2.0","id":` + r.ID.String() + `,"result":{"resultType":"task","taskId":"t-1","status":"working","createdAt":"x","ttlMs":` + ttl + `}}`)
			msg, err := wire.Decode(raw)
			if err != nil {
				t.Fatal(err)
			}
			tr.Apply(event.Event{Kind: event.Received, Time: t0.Add(time.Millisecond), Raw: raw, Msg: msg})
			rep := ReportOf(info, tr, r, nil, t0.Add(time.Second))
			if rep.Task == nil {
				t.Fatalf("no task in the report: %+v", rep)
			}
			if rep.Task.TTLMs == nil || *rep.Task.TTLMs <= 0 || !rep.Task.TTLOutOfRange {
				got := "null"
				if rep.Task.TTLMs != nil {
					got = time.Duration(*rep.Task.TTLMs * int64(time.Millisecond)).String()
				}
				t.Fatalf("ttlMs %s, ttlOutOfRange %v: want the largest kept, said out of range", got, rep.Task.TTLOutOfRange)
			}
			j, _ := json.Marshal(rep.Task)
			if !bytes.Contains(j, []byte(`"ttlOutOfRange":true`)) {
				t.Errorf("the JSON does not say so: %s", j)
			}
			var out bytes.Buffer
			printCallSummary(&out, rep, redact.New(nil, nil, ""))
			if !strings.Contains(out.String(), "out of range") {
				t.Errorf("the summary does not say the TTL was out of range:\n%s", out.String())
			}
		})
	}
}
