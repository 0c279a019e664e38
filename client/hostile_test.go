package client_test

import (
	"strings"
	"testing"

	"inflight/client"
	"inflight/event"
	"inflight/internal/testkit/hostile"
	"inflight/wire"
)

// A body with a Content-Encoding inflight never asked for (a gzip bomb) is
// not read; the request fails — it was answered, badly — and says why.
// Before, the compressed bytes were read as the JSON body and the request
// was lost with "the HTTP response body did not answer the request".
func TestHTTPContentEncodingRefused(t *testing.T) {
	for _, version := range []string{wire.VersionModern, wire.Version20251125} {
		t.Run(version, func(t *testing.T) {
			ts := hostile.NewServer(hostile.GzipBomb(), false)
			defer ts.Close()
			c, rec, _ := connectClient(t, client.Config{URL: ts.URL, ProtocolVersion: version})
			id := send(t, c, 1, wire.MethodToolsCall, toolCall(hostile.ToolName, nil))
			ev := rec.wait(t, "the request's failure", failed(id))
			if ev.LostConnection || ev.Err == nil || !strings.Contains(ev.Err.Error(), `Content-Encoding "gzip", which inflight never asked for`) {
				t.Fatalf("failure %+v", ev)
			}
			if n := rec.count(kind(event.Malformed)); n != 0 {
				t.Fatalf("%d malformed events: the compressed body was read as a message", n)
			}
		})
	}
}
