package httptap

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"inflight/event"
)

// The transport passes the bytes on unchanged and reports each exchange
// once at its end: the request's headers and body (a streaming one as the
// transport read it), the response's head and size, and, with Bodies, its
// event stream cut into events; without, the events are counted in the
// size only and the exchange says they were left out.
func TestTransportTapsAnExchange(t *testing.T) {
	const stream = "id: 1\ndata: {\"a\":1}\n\ndata: {\"b\":2}\n\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if string(body) != `{"jsonrpc":"2.0","id":7,"method":"ping"}` {
			http.Error(w, "body "+string(body), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, stream)
	}))
	defer srv.Close()
	for _, bodies := range []bool{true, false} {
		var mu sync.Mutex
		var got []*event.HTTPExchange
		c := &http.Client{Transport: &Transport{Bodies: bodies, Report: func(_ *http.Request, x *event.HTTPExchange) {
			mu.Lock()
			got = append(got, x)
			mu.Unlock()
		}}}
		// A body with no GetBody: it streams, as the proxy's host's does.
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp?x=1", io.MultiReader(strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"ping"}`)))
		req.Header.Set("Authorization", "Bearer t")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		read, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(read) != stream {
			t.Fatalf("bodies=%v: the reader got %q", bodies, read)
		}
		mu.Lock()
		if len(got) != 1 {
			t.Fatalf("bodies=%v: %d exchanges reported", bodies, len(got))
		}
		x := got[0]
		mu.Unlock()
		if x.Method != "POST" || x.Status != 200 || string(x.RequestBody) != `{"jsonrpc":"2.0","id":7,"method":"ping"}` ||
			x.ResponseSize != int64(len(stream)) || x.ClosedByClient || x.Err != "" || x.End.Before(x.Responded) || x.Responded.Before(x.Start) {
			t.Errorf("bodies=%v: %+v", bodies, x)
		}
		if !hasHeader(x.RequestHeaders, "Authorization", "Bearer t") || !hasHeader(x.ResponseHeaders, "Content-Type", "text/event-stream") {
			t.Errorf("bodies=%v: headers %v / %v", bodies, x.RequestHeaders, x.ResponseHeaders)
		}
		switch {
		case bodies && (len(x.SSE) != 2 || x.SSE[0].ID != "1" || x.SSE[1].Data != `{"b":2}` || x.BodiesLeftOut):
			t.Errorf("with bodies: events %+v, left out %v", x.SSE, x.BodiesLeftOut)
		case !bodies && (len(x.SSE) != 0 || len(x.ResponseBody) != 0 || !x.BodiesLeftOut):
			t.Errorf("without bodies: events %+v, body %q, left out %v", x.SSE, x.ResponseBody, x.BodiesLeftOut)
		}
	}
}

// A response closed before its end is reported once, as closed by the
// client, with what was read of it.
func TestTransportReportsAClosedBodyOnce(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"partial":`)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	var reports int
	var x *event.HTTPExchange
	c := &http.Client{Transport: &Transport{Bodies: true, Report: func(_ *http.Request, got *event.HTTPExchange) { reports++; x = got }}}
	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 11)
	_, _ = io.ReadFull(resp.Body, buf)
	resp.Body.Close()
	resp.Body.Close()
	if reports != 1 || !x.ClosedByClient || string(x.ResponseBody) != `{"partial":` {
		t.Errorf("%d reports; closed %v, body %q", reports, x.ClosedByClient, x.ResponseBody)
	}
}

func hasHeader(hs []event.Header, name, value string) bool {
	for _, h := range hs {
		if h.Name == name && h.Value == value {
			return true
		}
	}
	return false
}
