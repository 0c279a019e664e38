package client_test

import (
	"errors"
	"testing"

	"inflight/client"
	"inflight/wire"
)

// Over HTTP there is no connection to lose: a server that went away shows
// as a request whose POST got no response at all, marked ErrUnreachable so
// the UI can say the server is gone. A JSON-RPC or HTTP error is no such
// failure.
func TestHTTPServerGoneIsUnreachable(t *testing.T) {
	for _, version := range []string{"", wire.Version20251125} {
		t.Run("version="+version, func(t *testing.T) {
			srv, _ := demoHTTP(t)
			c, rec, _ := connectClient(t, client.Config{URL: srv.URL + "/mcp", ProtocolVersion: version})
			ok := send(t, c, 1, wire.MethodToolsList, nil)
			rec.wait(t, "the tools/list answer", responseTo(ok))
			if n := rec.count(func(ev client.Event) bool { return errors.Is(ev.Err, client.ErrUnreachable) }); n != 0 {
				t.Fatalf("%d events unreachable while the server answers", n)
			}

			srv.CloseClientConnections()
			srv.Listener.Close()
			id := send(t, c, 2, wire.MethodToolsList, nil)
			ev := rec.wait(t, "the failure of a POST to a closed port", failed(id))
			if !errors.Is(ev.Err, client.ErrUnreachable) || !ev.LostConnection {
				t.Fatalf("failure %v (lost %v) is not marked unreachable", ev.Err, ev.LostConnection)
			}
		})
	}
}
