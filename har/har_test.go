package har

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"inflight/trace"
	"inflight/wire"
)

// doc is what the tests read back of an archive.
type doc struct {
	Log struct {
		Version string `json:"version"`
		Creator struct {
			Name string `json:"name"`
		} `json:"creator"`
		Entries []struct {
			StartedDateTime string  `json:"startedDateTime"`
			Time            float64 `json:"time"`
			Request         struct {
				Method      string      `json:"method"`
				URL         string      `json:"url"`
				Headers     []nameValue `json:"headers"`
				QueryString []nameValue `json:"queryString"`
				PostData    *postData   `json:"postData"`
			} `json:"request"`
			Response struct {
				Status   int   `json:"status"`
				BodySize int64 `json:"bodySize"`
				Content  struct {
					Size     int64  `json:"size"`
					MimeType string `json:"mimeType"`
					Text     string `json:"text"`
				} `json:"content"`
			} `json:"response"`
			Timings     timings              `json:"timings"`
			Comment     string               `json:"comment"`
			EventSource []eventSourceMessage `json:"_eventSourceMessages"`
		} `json:"entries"`
	} `json:"log"`
}

func write(t *testing.T, b *Builder) doc {
	t.Helper()
	var buf bytes.Buffer
	if err := b.Write(&buf); err != nil {
		t.Fatal(err)
	}
	var d doc
	if err := json.Unmarshal(buf.Bytes(), &d); err != nil {
		t.Fatalf("%v:\n%s", err, buf.String())
	}
	return d
}

func idp(n int64) *wire.ID { id := wire.IntID(n); return &id }

// An archive of nothing is still an archive: version 1.2, inflight its
// creator, an empty list of entries (not null, which HAR readers refuse).
func TestEmptyArchive(t *testing.T) {
	b := New()
	b.Add(&trace.Record{Dir: trace.DirLocal, Event: trace.EventNote, Text: "a stdio run"})
	var buf bytes.Buffer
	if err := b.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if b.Len() != 0 || !strings.Contains(buf.String(), `"entries": []`) {
		t.Errorf("%d entries:\n%s", b.Len(), buf.String())
	}
	d := write(t, b)
	if d.Log.Version != "1.2" || d.Log.Creator.Name != "inflight" {
		t.Errorf("log %+v", d.Log)
	}
}

// sseCall is the http_exchange of a tools/call (id 2) whose response was
// an event stream of two events, the second named, closed by the client.
func sseCall(session string) *trace.Record {
	return &trace.Record{MS: 900, Dir: trace.DirLocal, Event: trace.EventHTTPExchange, ID: idp(2), SessionID: session,
		HTTP: &trace.HTTP{StartedDateTime: "2026-01-02T03:04:05.000Z", StartMS: 100, WaitMS: 20.5, ReceiveMS: 779.5,
			Method: "POST", URL: "http://127.0.0.1:1/mcp?token=abc&x=a%20b", HTTPVersion: "HTTP/1.1",
			RequestHeaders: []trace.Header{{Name: "Authorization", Value: "Bearer secret-value"}, {Name: "Content-Type", Value: "application/json"}},
			RequestBody:    `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow"}}`,
			Status:         200, StatusText: "OK",
			ResponseHeaders: []trace.Header{{Name: "Content-Type", Value: "text/event-stream"}},
			ResponseSize:    120,
			SSE: []trace.SSEEvent{{MS: 350, ID: "e1", Data: `{"jsonrpc":"2.0","method":"notifications/progress"}`},
				{MS: 600, Event: "note", Data: "a\nb"}},
			ClosedByClient: true}}
}

// An exchange becomes an entry: the request (credentials masked by name,
// whatever the record held), its query, its body; the response and its
// stream written back as text and as EventSource messages stamped on the
// wall clock; wait and receive from the record, the rest unmeasured.
func TestEntryFromAnExchange(t *testing.T) {
	b := New()
	b.Add(sseCall(""))
	d := write(t, b)
	if len(d.Log.Entries) != 1 {
		t.Fatalf("%d entries", len(d.Log.Entries))
	}
	e := d.Log.Entries[0]
	if e.StartedDateTime != "2026-01-02T03:04:05.000Z" || e.Time != 800 {
		t.Errorf("started %s, time %v", e.StartedDateTime, e.Time)
	}
	if tm := e.Timings; tm.Wait != 20.5 || tm.Receive != 779.5 || tm.Blocked != -1 || tm.DNS != -1 || tm.Connect != -1 || tm.SSL != -1 || tm.Send != 0 {
		t.Errorf("timings %+v", tm)
	}
	if e.Request.Method != "POST" || !strings.Contains(e.Request.URL, "token=%5Bredacted%5D") || e.Request.PostData == nil ||
		e.Request.PostData.MimeType != "application/json" || !strings.Contains(e.Request.PostData.Text, `"tools/call"`) {
		t.Errorf("request %+v", e.Request)
	}
	if want := []nameValue{{"token", "[redacted]"}, {"x", "a b"}}; len(e.Request.QueryString) != 2 || e.Request.QueryString[0] != want[0] || e.Request.QueryString[1] != want[1] {
		t.Errorf("query %+v", e.Request.QueryString)
	}
	if e.Request.Headers[0] != (nameValue{"Authorization", "[redacted]"}) {
		t.Errorf("headers %+v", e.Request.Headers)
	}
	if e.Response.Status != 200 || e.Response.Content.MimeType != "text/event-stream" || e.Response.BodySize != 120 ||
		e.Response.Content.Text != "id: e1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\nevent: note\ndata: a\ndata: b\n\n" {
		t.Errorf("response %+v", e.Response)
	}
	// 2026-01-02T03:04:05Z is 1767323045 s; the events came 250 and 500 ms
	// after the request's start.
	es := e.EventSource
	if len(es) != 2 || es[0].EventName != "message" || es[0].EventID != "e1" || es[1].EventName != "note" || es[1].Data != "a\nb" ||
		es[0].Time != 1767323045.25 || es[1].Time != 1767323045.5 {
		t.Errorf("events %+v", es)
	}
	if !strings.HasSuffix(e.Comment, "; inflight closed the response before its end") {
		t.Errorf("comment %q", e.Comment)
	}
}

// The comment is the tracker's word on the request the body carried
// (its state, the cancel sent, what came late or crossed, the
// violations); the cancel's own POST says whose cancel it is; a request
// that failed before any response has no response time.
func TestCommentsOfAClientTrace(t *testing.T) {
	b := New()
	b.Add(&trace.Record{Dir: trace.DirOut, ID: idp(2), Msg: []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call"}`)})
	b.Add(&trace.Record{Dir: trace.DirLocal, Event: trace.EventState, ID: idp(2), State: "pending", Method: "tools/call"})
	b.Add(&trace.Record{Dir: trace.DirLocal, Event: trace.EventCancelSent, ID: idp(2), Signal: "notifications/cancelled", Reason: "enough"})
	b.Add(&trace.Record{Dir: trace.DirIn, ID: idp(2), Verdict: "crossed", Msg: []byte(`{"jsonrpc":"2.0","method":"notifications/progress"}`)})
	b.Add(&trace.Record{Dir: trace.DirIn, ID: idp(2), Verdict: "late", Msg: []byte(`{"jsonrpc":"2.0","id":2,"result":{}}`)})
	b.Add(&trace.Record{Dir: trace.DirLocal, Event: trace.EventViolation, ID: idp(2), Code: "server_x"})
	b.Add(&trace.Record{Dir: trace.DirLocal, Event: trace.EventState, ID: idp(2), State: "cancelled"})
	b.Add(sseCall(""))
	b.Add(&trace.Record{MS: 950, Dir: trace.DirLocal, Event: trace.EventHTTPExchange, Error: "connection refused",
		HTTP: &trace.HTTP{StartedDateTime: "2026-01-02T03:04:05.050Z", StartMS: 50, WaitMS: -1, Method: "POST", URL: "http://127.0.0.1:1/mcp",
			RequestBody: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`}})
	d := write(t, b)
	if len(d.Log.Entries) != 2 {
		t.Fatalf("%d entries", len(d.Log.Entries))
	}
	// In the order the requests began, not the order they ended.
	cancel, call := d.Log.Entries[0], d.Log.Entries[1]
	if cancel.Comment != "the cancel (notifications/cancelled) of request 2; failed: connection refused" ||
		cancel.Time != 0 || cancel.Timings.Wait != 0 || cancel.Response.Status != 0 || cancel.Response.BodySize != -1 {
		t.Errorf("the cancel's entry: %q, time %v, %+v", cancel.Comment, cancel.Time, cancel.Response)
	}
	want := `tools/call 2: cancelled; cancel sent (notifications/cancelled, "enough"); 1 late after the cancel (ignored); ` +
		`1 crossed the cancel in flight; violations: server_x; inflight closed the response before its end`
	if call.Comment != want {
		t.Errorf("the call's comment:\n%q, want\n%q", call.Comment, want)
	}
}

// In a proxy's trace the words are the host's: its notifications/cancelled
// (with its reason) or its closed stream, its own traffic; two hosts'
// requests under one ID are told apart by their sessions; and a body
// left out of the trace is said to be.
func TestCommentsOfAProxyTrace(t *testing.T) {
	b := New()
	for _, s := range []string{"A", "B"} {
		b.Add(&trace.Record{Dir: trace.DirOut, By: "host", ID: idp(2), SessionID: s, Msg: []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call"}`)})
		b.Add(&trace.Record{Dir: trace.DirLocal, Event: trace.EventState, ID: idp(2), State: "pending", Method: "tools/call"})
		if s == "A" {
			b.Add(&trace.Record{Dir: trace.DirOut, By: "host", ID: idp(2), SessionID: s,
				Msg: []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"timeout"}}`)})
			b.Add(&trace.Record{Dir: trace.DirLocal, Event: trace.EventState, ID: idp(2), State: "cancelled"})
			b.Add(sseCall(s))
			continue
		}
		b.Add(&trace.Record{Dir: trace.DirLocal, Event: trace.EventStreamClosed, ID: idp(2), SessionID: s, ByClient: true})
		b.Add(&trace.Record{Dir: trace.DirLocal, Event: trace.EventViolation, ID: idp(2), Code: "host_closed_stream_legacy"})
		b.Add(&trace.Record{Dir: trace.DirLocal, Event: trace.EventState, ID: idp(2), State: "connection_lost"})
		x := sseCall(s)
		x.HTTP.StartMS = 200
		x.HTTP.SSE, x.HTTP.BodiesLeftOut = nil, true
		b.Add(x)
	}
	b.Add(&trace.Record{MS: 990, Dir: trace.DirLocal, Event: trace.EventHTTPExchange, SessionID: "A",
		HTTP: &trace.HTTP{StartedDateTime: "2026-01-02T03:04:05.900Z", StartMS: 900, WaitMS: 1, Method: "POST", URL: "http://127.0.0.1:1/mcp",
			RequestBody: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, Status: 202}})
	d := write(t, b)
	if len(d.Log.Entries) != 3 {
		t.Fatalf("%d entries", len(d.Log.Entries))
	}
	want := []string{
		`tools/call 2: cancelled; cancelled by the host (notifications/cancelled, "timeout"); the host closed the response before its end`,
		`tools/call 2: connection_lost; cancelled by the host (closed its stream); violations: host_closed_stream_legacy; ` +
			`the host closed the response before its end; the response's body was not recorded (a trace written without --har)`,
		`notifications/initialized (the host's)`,
	}
	for i, w := range want {
		if got := d.Log.Entries[i].Comment; got != w {
			t.Errorf("entry %d:\n%q, want\n%q", i, got, w)
		}
	}
	if len(d.Log.Entries[1].EventSource) != 0 || d.Log.Entries[1].Response.Content.Text != "" {
		t.Errorf("a body left out is in the entry: %+v", d.Log.Entries[1].Response)
	}
}

// The exchanges with no JSON-RPC body say what they were: the session's
// end (DELETE) and a GET stream, opened or resumed, as inflight's or, in a
// proxy's trace, the host's.
func TestCommentsOfBodilessExchanges(t *testing.T) {
	exchanges := func(b *Builder) {
		for i, h := range []trace.HTTP{
			{Method: "GET", RequestHeaders: []trace.Header{{Name: "Accept", Value: "text/event-stream"}}},
			{Method: "GET", RequestHeaders: []trace.Header{{Name: "last-event-id", Value: "s1-7"}}},
			{Method: "DELETE"},
		} {
			h.StartedDateTime, h.StartMS, h.WaitMS, h.URL, h.Status = "2026-01-02T03:04:05.000Z", float64(i), 1, "http://127.0.0.1:1/mcp", 200
			b.Add(&trace.Record{MS: float64(i), Dir: trace.DirLocal, Event: trace.EventHTTPExchange, HTTP: &h})
		}
	}
	for _, tc := range []struct {
		proxy bool
		who   string
	}{{false, "inflight"}, {true, "the host"}} {
		b := New()
		if tc.proxy {
			b.Add(&trace.Record{Dir: trace.DirOut, By: "host", Msg: []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)})
		}
		exchanges(b)
		d := write(t, b)
		want := []string{
			tc.who + " opened a stream for the server's messages outside any request (GET)",
			tc.who + ` resumed a stream after event "s1-7" (GET with Last-Event-ID)`,
			tc.who + " ended its session (DELETE)",
		}
		if len(d.Log.Entries) != len(want) {
			t.Fatalf("%d entries", len(d.Log.Entries))
		}
		for i, w := range want {
			if got := d.Log.Entries[i].Comment; got != w {
				t.Errorf("proxy %v, entry %d: %q, want %q", tc.proxy, i, got, w)
			}
		}
	}
}
