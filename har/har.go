// Package har writes HTTP exchanges as an HTTP Archive (HAR 1.2), the
// format browsers' developer tools and HTTP debuggers open: each
// exchange's request and response headers, its timings, the request's
// body and the response (an event stream's events as Chromium writes
// EventSource messages, `_eventSourceMessages`), with inflight's verdict
// on the JSON-RPC request it carried — its final state, the cancel, the
// late and crossed messages, the violations — as the entry's comment.
//
// It is built from trace records (package trace), the http_exchange lines
// and the tracker's lines beside them, so that the HAR a run writes as it
// goes (--har) and the one `inflight export --har` makes from a trace
// file are one thing. The records are redacted already.
package har

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"inflight/trace"
	"inflight/version"
	"inflight/wire"
)

// Builder gathers the records of a run and writes its HAR. Add records
// in the trace's order.
type Builder struct {
	exchanges []exchange
	facts     map[factsKey]*facts
	// sessionOf is the session of the last request sent under each ID,
	// for the lines that name none (states, cancels).
	sessionOf map[string]string
	// proxy: the trace is a proxy's ("by" host and server), whose
	// exchanges are a host's.
	proxy bool
}

type exchange struct {
	h   *trace.HTTP
	err string
	id  string // the JSON-RPC request the body carried ("" none)
	key factsKey
}

// factsKey is a request's ID in its session: a proxy's hosts each count
// their IDs from 1.
type factsKey struct{ session, id string }

// facts are what the trace says of one JSON-RPC request.
type facts struct {
	method     string
	state      string
	signal     string
	reason     string
	late       int
	crossed    int
	violations []string
	// hostCancel is how the host cancelled it, in a proxy's trace: its
	// notifications/cancelled (with hostReason), or its stream closed.
	hostCancel, hostReason string
}

// New is an empty Builder.
func New() *Builder {
	return &Builder{facts: map[factsKey]*facts{}, sessionOf: map[string]string{}}
}

// Add takes one record; it keeps no reference to its message.
func (b *Builder) Add(rec *trace.Record) {
	if rec.Event == trace.EventHTTPExchange && rec.HTTP != nil {
		h := *rec.HTTP
		h.RequestHeaders = slices.Clone(h.RequestHeaders)
		h.ResponseHeaders = slices.Clone(h.ResponseHeaders)
		// Masked by name again, whoever wrote the trace.
		trace.RedactHTTP(&h, nil)
		x := exchange{h: &h, err: rec.Error}
		if rec.ID != nil {
			x.id = rec.ID.String()
			x.key = b.keyOf(rec, x.id)
		}
		b.exchanges = append(b.exchanges, x)
		return
	}
	if rec.By != "" && rec.By != "inflight" {
		b.proxy = true
	}
	id, ok := rec.RequestID()
	if !ok {
		return
	}
	key := b.keyOf(rec, id.String())
	if rec.Internal {
		return
	}
	f := b.factsOf(key)
	switch rec.Event {
	case trace.EventState:
		f.state = rec.State
		if rec.Method != "" {
			f.method = rec.Method
		}
	case trace.EventCancelSent:
		f.signal, f.reason = rec.Signal, rec.Reason
	case trace.EventViolation:
		f.violations = append(f.violations, rec.Code)
	case trace.EventStreamClosed:
		if rec.ByClient && rec.By == "" && b.proxy && f.hostCancel == "" {
			f.hostCancel = "closed its stream"
		}
	case "":
		b.hostCancelled(rec, f)
	}
	switch rec.Verdict {
	case "late":
		f.late++
	case "crossed":
		f.crossed++
	}
	if rec.Violation != "" {
		f.violations = append(f.violations, rec.Violation)
	}
}

func (b *Builder) factsOf(k factsKey) *facts {
	f := b.facts[k]
	if f == nil {
		f = &facts{}
		b.facts[k] = f
	}
	return f
}

// keyOf is the request id of rec in its session: the line's own, or, on a
// line that names none, that of the last request sent under the ID. A
// request sent starts its ID's facts anew in its session.
func (b *Builder) keyOf(rec *trace.Record, id string) factsKey {
	if rec.SessionID == "" {
		return factsKey{b.sessionOf[id], id}
	}
	if rec.Dir == trace.DirOut && rec.Event == "" {
		b.sessionOf[id] = rec.SessionID
	}
	return factsKey{rec.SessionID, id}
}

// hostCancelled notes the host's notifications/cancelled of a request, in
// a proxy's trace.
func (b *Builder) hostCancelled(rec *trace.Record, f *facts) {
	if rec.Dir != trace.DirOut || rec.By == "" || rec.By == "inflight" {
		return
	}
	m, ok := rec.Message()
	if !ok || m.Method != wire.NotifyCancelled {
		return
	}
	var p struct {
		Reason string `json:"reason"`
	}
	_ = json.Unmarshal(m.Params, &p)
	f.hostCancel, f.hostReason = "notifications/cancelled", p.Reason
}

// Len is how many exchanges the HAR holds.
func (b *Builder) Len() int { return len(b.exchanges) }

// Write writes the HAR document.
func (b *Builder) Write(w io.Writer) error {
	xs := append([]exchange(nil), b.exchanges...)
	sort.SliceStable(xs, func(i, j int) bool { return xs[i].h.StartMS < xs[j].h.StartMS })
	doc := harDoc{Log: harLog{Version: "1.2", Creator: creator{Name: "inflight", Version: version.Version}, Entries: []entry{}}}
	for _, x := range xs {
		doc.Log.Entries = append(doc.Log.Entries, b.entry(x))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// comment is inflight's word on an exchange: what the request it carried
// became, its cancel, what came after the cancel, the violations.
func (b *Builder) comment(x exchange) string {
	var parts []string
	who, own := "inflight", "inflight's own"
	if b.proxy {
		who, own = "the host", "the host's"
	}
	if f := b.facts[x.key]; x.id != "" && f != nil {
		parts = append(parts, requestWords(x.id, f)...)
	} else if what := bodilessWords(x.h, who); what != "" {
		parts = append(parts, what)
	} else if cancelled, ok := cancelOf(x.h.RequestBody); ok {
		parts = append(parts, "the cancel (notifications/cancelled) of request "+cancelled)
	} else if m, err := wire.Decode([]byte(x.h.RequestBody)); err == nil && m.Method != "" {
		parts = append(parts, m.Method+" ("+own+")")
	} else if m.IsResponse() {
		parts = append(parts, who+"'s answer to the server's request")
	}
	switch {
	case x.err != "":
		parts = append(parts, "failed: "+x.err)
	case x.h.ClosedByClient:
		parts = append(parts, who+" closed the response before its end")
	}
	if x.h.BodiesLeftOut && x.h.ResponseSize > 0 {
		parts = append(parts, "the response's body was not recorded (a trace written without --har)")
	}
	if x.h.Truncated > 0 || x.h.SSEDropped > 0 {
		parts = append(parts, fmt.Sprintf("bounded: %d bytes and %d events not kept", x.h.Truncated, x.h.SSEDropped))
	}
	return strings.Join(parts, "; ")
}

// bodilessWords says what an exchange with no JSON-RPC body was, by its
// method: the session's end (DELETE), or a GET stream, resumed when it
// names the last event seen ("" for any other).
func bodilessWords(h *trace.HTTP, who string) string {
	switch h.Method {
	case "DELETE":
		return who + " ended its session (DELETE)"
	case "GET":
		for _, hd := range h.RequestHeaders {
			if strings.EqualFold(hd.Name, "Last-Event-ID") {
				return fmt.Sprintf("%s resumed a stream after event %q (GET with Last-Event-ID)", who, hd.Value)
			}
		}
		return who + " opened a stream for the server's messages outside any request (GET)"
	}
	return ""
}

func requestWords(id string, f *facts) []string {
	what := "request " + id
	if f.method != "" {
		what = f.method + " " + id
	}
	if f.state != "" {
		what += ": " + f.state
	}
	parts := []string{what}
	if f.hostCancel != "" {
		c := "cancelled by the host (" + f.hostCancel
		if f.hostReason != "" {
			c += fmt.Sprintf(", %q", f.hostReason)
		}
		parts = append(parts, c+")")
	}
	if f.signal != "" {
		c := "cancel sent (" + f.signal
		if f.reason != "" {
			c += fmt.Sprintf(", %q", f.reason)
		}
		parts = append(parts, c+")")
	}
	if f.late > 0 {
		parts = append(parts, fmt.Sprintf("%d late after the cancel (ignored)", f.late))
	}
	if f.crossed > 0 {
		parts = append(parts, fmt.Sprintf("%d crossed the cancel in flight", f.crossed))
	}
	if len(f.violations) > 0 {
		parts = append(parts, "violations: "+strings.Join(f.violations, ", "))
	}
	return parts
}

// cancelOf: the request a notifications/cancelled body names.
func cancelOf(body string) (string, bool) {
	m, err := wire.Decode([]byte(body))
	if err != nil || m.Method != wire.NotifyCancelled {
		return "", false
	}
	var p struct {
		RequestID wire.ID `json:"requestId"`
	}
	if json.Unmarshal(m.Params, &p) != nil || p.RequestID.IsZero() {
		return "", false
	}
	return p.RequestID.String(), true
}

// entry is one exchange as an HAR entry.
func (b *Builder) entry(x exchange) entry {
	h := x.h
	wait, receive := h.WaitMS, h.ReceiveMS
	if wait < 0 {
		// No response: the time went waiting for one.
		wait, receive = 0, 0
	}
	e := entry{
		StartedDateTime: h.StartedDateTime,
		Time:            ms(wait + receive),
		Request:         request(h),
		Response:        response(h),
		Cache:           struct{}{},
		Timings:         timings{Blocked: -1, DNS: -1, Connect: -1, SSL: -1, Send: 0, Wait: ms(wait), Receive: ms(receive)},
		Comment:         b.comment(x),
	}
	if len(h.SSE) > 0 {
		start, _ := time.Parse(time.RFC3339Nano, h.StartedDateTime)
		for _, ev := range h.SSE {
			name := ev.Event
			if name == "" {
				name = "message"
			}
			at := start.Add(time.Duration((ev.MS - h.StartMS) * float64(time.Millisecond)))
			e.EventSource = append(e.EventSource, eventSourceMessage{
				Time: float64(at.UnixMicro()) / 1e6, EventName: name, EventID: ev.ID, Data: ev.Data})
		}
	}
	return e
}

// ms rounds a duration in milliseconds to the microsecond.
func ms(v float64) float64 { return math.Round(v*1000) / 1000 }

func request(h *trace.HTTP) harRequest {
	r := harRequest{Method: h.Method, URL: h.URL, HTTPVersion: httpVersion(h.HTTPVersion), Cookies: []nameValue{},
		Headers: nameValues(h.RequestHeaders), QueryString: []nameValue{}, HeadersSize: -1, BodySize: len(h.RequestBody)}
	if u, err := url.Parse(h.URL); err == nil {
		for _, p := range strings.Split(u.RawQuery, "&") {
			if p == "" {
				continue
			}
			k, v, _ := strings.Cut(p, "=")
			k, _ = url.QueryUnescape(k)
			v, _ = url.QueryUnescape(v)
			r.QueryString = append(r.QueryString, nameValue{k, v})
		}
	}
	if h.RequestBody != "" {
		r.PostData = &postData{MimeType: header(h.RequestHeaders, "Content-Type"), Text: h.RequestBody}
	}
	return r
}

func response(h *trace.HTTP) harResponse {
	mime := header(h.ResponseHeaders, "Content-Type")
	if mime == "" {
		mime = "x-unknown"
	}
	r := harResponse{Status: h.Status, StatusText: h.StatusText, HTTPVersion: httpVersion(h.HTTPVersion), Cookies: []nameValue{},
		Headers: nameValues(h.ResponseHeaders), RedirectURL: header(h.ResponseHeaders, "Location"), HeadersSize: -1,
		BodySize: h.ResponseSize, Content: content{Size: h.ResponseSize, MimeType: mime, Text: h.ResponseBody}}
	if h.Status == 0 {
		r.BodySize = -1
	}
	if len(h.SSE) > 0 {
		r.Content.Text = streamText(h.SSE)
	}
	return r
}

// streamText writes an event stream's events back as the stream's text
// (comments and retry: left out).
func streamText(evs []trace.SSEEvent) string {
	var b strings.Builder
	for _, e := range evs {
		if e.Event != "" {
			b.WriteString("event: " + e.Event + "\n")
		}
		if e.ID != "" {
			b.WriteString("id: " + e.ID + "\n")
		}
		for _, line := range strings.Split(e.Data, "\n") {
			b.WriteString("data: " + line + "\n")
		}
		b.WriteString("\n")
	}
	return b.String()
}

func httpVersion(v string) string {
	if v == "" {
		return "HTTP/1.1"
	}
	return v
}

func header(hs []trace.Header, name string) string {
	for _, h := range hs {
		if strings.EqualFold(h.Name, name) {
			return h.Value
		}
	}
	return ""
}

func nameValues(hs []trace.Header) []nameValue {
	out := make([]nameValue, len(hs))
	for i, h := range hs {
		out[i] = nameValue{h.Name, h.Value}
	}
	return out
}
