package trace

import (
	"net/url"
	"strings"
	"time"

	"inflight/event"
	"inflight/redact"
)

// EventHTTPExchange is the line of one HTTP exchange (Record.HTTP): the
// request and its response as they went, for `inflight export --har` and
// the HAR a run writes. Its "ms" is when the exchange ended.
const EventHTTPExchange = "http_exchange"

// HTTP is one HTTP exchange, redacted: credentials in headers and in the
// URL's query are masked by name (redact.IsSecretName), every other
// value through the trace's redactor.
type HTTP struct {
	// StartedDateTime is the wall clock when the request began (RFC 3339,
	// milliseconds), StartMS the same moment on the trace's clock.
	StartedDateTime string  `json:"startedDateTime"`
	StartMS         float64 `json:"startMs"`
	// WaitMS is from the request's start to its response's headers
	// (-1: none came); ReceiveMS from there to the body's end.
	WaitMS          float64  `json:"waitMs"`
	ReceiveMS       float64  `json:"receiveMs"`
	Method          string   `json:"method"`
	URL             string   `json:"url"`
	HTTPVersion     string   `json:"httpVersion,omitempty"`
	RequestHeaders  []Header `json:"requestHeaders,omitempty"`
	RequestBody     string   `json:"requestBody,omitempty"`
	Status          int      `json:"status,omitempty"`
	StatusText      string   `json:"statusText,omitempty"`
	ResponseHeaders []Header `json:"responseHeaders,omitempty"`
	ResponseBody    string   `json:"responseBody,omitempty"`
	ResponseSize    int64    `json:"responseSize,omitempty"`
	// Truncated counts body or event data bytes not kept.
	Truncated int64 `json:"truncated,omitempty"`
	// SSE are an event stream's events; SSEDropped those not kept.
	SSE        []SSEEvent `json:"sse,omitempty"`
	SSEDropped int        `json:"sseDropped,omitempty"`
	// ClosedByClient: inflight closed the body before its end.
	ClosedByClient bool `json:"closedByClient,omitempty"`
	// BodiesLeftOut: the response's body or events were not recorded
	// (a trace written without an HAR); its size is.
	BodiesLeftOut bool `json:"bodiesLeftOut,omitempty"`
}

// Header is one header line.
type Header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// SSEEvent is one event of a stream, at MS on the trace's clock.
type SSEEvent struct {
	MS    float64 `json:"ms"`
	Event string  `json:"event,omitempty"`
	ID    string  `json:"id,omitempty"`
	Data  string  `json:"data"`
}

// exchangeRecord is rec, the line of an Exchange event at ms, with its
// exchange.
func exchangeRecord(rec Record, ev *event.Event, ms float64) Record {
	rec.Event = EventHTTPExchange
	if ev.HTTP != nil {
		rec.HTTP = fromExchange(ev.HTTP, ev.Time, ms)
		rec.Error = ev.HTTP.Err
	}
	return rec
}

// fromExchange is the HTTP of an exchange whose end (ev.Time) is at ms.
func fromExchange(x *event.HTTPExchange, end time.Time, ms float64) *HTTP {
	at := func(t time.Time) float64 { return ms + Millis(t.Sub(end)) }
	h := &HTTP{StartedDateTime: x.Start.UTC().Format("2006-01-02T15:04:05.000Z07:00"), StartMS: at(x.Start), WaitMS: -1,
		Method: x.Method, URL: x.URL, HTTPVersion: x.Proto, RequestBody: string(x.RequestBody), Status: x.Status,
		StatusText: x.StatusText, ResponseBody: string(x.ResponseBody), ResponseSize: x.ResponseSize, Truncated: x.Truncated,
		SSEDropped: x.SSEDropped, ClosedByClient: x.ClosedByClient, BodiesLeftOut: x.BodiesLeftOut}
	if !x.Responded.IsZero() {
		h.WaitMS = Millis(x.Responded.Sub(x.Start))
		h.ReceiveMS = Millis(x.End.Sub(x.Responded))
	}
	h.RequestHeaders = headers(x.RequestHeaders)
	h.ResponseHeaders = headers(x.ResponseHeaders)
	if len(x.SSE) > 0 {
		h.SSE = make([]SSEEvent, len(x.SSE))
		for i, e := range x.SSE {
			h.SSE[i] = SSEEvent{MS: at(e.Time), Event: e.Event, ID: e.ID, Data: e.Data}
		}
	}
	return h
}

func headers(hs []event.Header) []Header {
	if len(hs) == 0 {
		return nil
	}
	out := make([]Header, len(hs))
	for i, h := range hs {
		out[i] = Header(h)
	}
	return out
}

// RedactHTTP is redactHTTP for a reader of a trace (an export), which
// masks by name again whatever wrote the trace.
func RedactHTTP(h *HTTP, red *redact.Redactor) { redactHTTP(h, red) }

// redactHTTP masks h's credentials: a header or query parameter whose
// name says it holds one loses its value whatever the redactor knows (a
// cookie the server set, a token OAuth obtained), and every other string
// goes through red. h is the record's own copy.
func redactHTTP(h *HTTP, red *redact.Redactor) {
	h.URL = red.String(redactQuery(h.URL))
	for _, hs := range [][]Header{h.RequestHeaders, h.ResponseHeaders} {
		for i := range hs {
			if redact.IsSecretName(hs[i].Name) {
				hs[i].Value = redact.Placeholder
			} else {
				hs[i].Value = red.String(hs[i].Value)
			}
		}
	}
	h.RequestBody = red.String(h.RequestBody)
	h.ResponseBody = red.String(h.ResponseBody)
	h.StatusText = red.String(h.StatusText)
	for i := range h.SSE {
		e := &h.SSE[i]
		e.Event, e.ID, e.Data = red.String(e.Event), red.String(e.ID), red.String(e.Data)
	}
}

// redactQuery masks the values of the query parameters whose names say
// they hold a secret (?token=, ?api_key=), and a URL's password.
func redactQuery(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), redact.Placeholder)
	}
	if u.RawQuery != "" {
		parts := strings.Split(u.RawQuery, "&")
		for i, p := range parts {
			name, _, hasValue := strings.Cut(p, "=")
			if n, err := url.QueryUnescape(name); err == nil && hasValue && redact.IsSecretName(n) {
				parts[i] = name + "=" + url.QueryEscape(redact.Placeholder)
			}
		}
		u.RawQuery = strings.Join(parts, "&")
	}
	return u.String()
}
