package trace

import (
	"bytes"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"inflight/event"
	"inflight/redact"
	"inflight/wire"
)

// An exchange goes into a trace and comes back whole, its credentials
// masked: by name (a header or query parameter that says it holds one,
// whatever its value) and by value (the target's own secrets, wherever
// they appear, the bodies and events included).
func TestHTTPRecordRoundTrip(t *testing.T) {
	start := time.Date(2026, 7, 28, 10, 0, 0, 0, time.UTC)
	x := &event.HTTPExchange{Start: start, Responded: start.Add(3 * time.Millisecond), End: start.Add(10 * time.Millisecond),
		Method: "POST", URL: "http://h/mcp?token=abc&x=1", Proto: "HTTP/1.1",
		RequestHeaders: []event.Header{{Name: "Authorization", Value: "Bearer zz"}, {Name: "X-Custom", Value: "has configured-secret in it"}},
		RequestBody:    []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`),
		Status:         200, StatusText: "OK",
		ResponseHeaders: []event.Header{{Name: "Content-Type", Value: "text/event-stream"}, {Name: "Set-Cookie", Value: "s=1"}},
		ResponseSize:    42, SSE: []event.SSEEvent{{Time: start.Add(5 * time.Millisecond), ID: "e1", Data: `{"echo":"configured-secret"}`}},
		ClosedByClient: true}
	red := redact.New(http.Header{"X-Api-Key": {"configured-secret"}}, nil, "")
	var buf bytes.Buffer
	w := NewWriter(&buf, start.Add(-time.Second), red)
	var tapped *Record
	w.SetTap(func(r *Record) { cp := *r; tapped = &cp })
	if err := w.Event(event.Event{Kind: event.Exchange, Time: x.End, RequestID: wire.IntID(1), HTTP: x}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	line := buf.String()
	for _, secret := range []string{"Bearer zz", "abc", "configured-secret", "s=1"} {
		if strings.Contains(line, secret) {
			t.Errorf("the trace holds %q: %s", secret, line)
		}
	}
	recs, bad, err := ReadAll(strings.NewReader(line))
	if err != nil || len(bad) != 0 || len(recs) != 1 {
		t.Fatalf("read back %d records, %v %v", len(recs), bad, err)
	}
	got := recs[0]
	if got.Event != EventHTTPExchange || got.ID == nil || got.ID.String() != "1" || got.HTTP == nil {
		t.Fatalf("record %+v", got)
	}
	h := got.HTTP
	want := HTTP{StartedDateTime: "2026-07-28T10:00:00.000Z", StartMS: 1000, WaitMS: 3, ReceiveMS: 7, Method: "POST",
		URL: "http://h/mcp?token=%5Bredacted%5D&x=1", HTTPVersion: "HTTP/1.1",
		RequestHeaders: []Header{{"Authorization", "[redacted]"}, {"X-Custom", "has [redacted] in it"}},
		RequestBody:    `{"jsonrpc":"2.0","id":1,"method":"ping"}`, Status: 200, StatusText: "OK",
		ResponseHeaders: []Header{{"Content-Type", "text/event-stream"}, {"Set-Cookie", "[redacted]"}},
		ResponseSize:    42, SSE: []SSEEvent{{MS: 1005, ID: "e1", Data: `{"echo":"[redacted]"}`}}, ClosedByClient: true}
	if !reflect.DeepEqual(*h, want) {
		t.Errorf("read back\n%+v\nwant\n%+v", *h, want)
	}
	if tapped == nil || !reflect.DeepEqual(*tapped.HTTP, want) {
		t.Errorf("the tap saw %+v", tapped)
	}
	if x.RequestHeaders[0].Value != "Bearer zz" {
		t.Errorf("redaction changed the event's own headers")
	}
}
