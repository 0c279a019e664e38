package client_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	"inflight/client"
	"inflight/event"
	"inflight/wire"
)

// TestCloseDeliversTransportClosed: a consumer that keeps reading, however
// slowly, gets the final EventTransportClosed, even when the server floods
// the channel while the client closes (past ShutdownWait the client drops
// what does not fit, but not that).
func TestCloseDeliversTransportClosed(t *testing.T) {
	for i := 0; i < 3; i++ {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		go func() {
			// A legacy server that floods progress after the handshake and
			// ignores the end of its stdin.
			sc := bufio.NewScanner(inR)
			for sc.Scan() {
				m, _ := wire.Decode(sc.Bytes())
				switch m.Method {
				case wire.MethodInitialize:
					_, _ = outW.Write(append(wire.ResultResponse(m.ID, json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"flood","version":"1"}}`)), '\n'))
					go func() {
						line := []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}` + "\n")
						for {
							if _, err := outW.Write(line); err != nil {
								return
							}
						}
					}()
				}
			}
		}()
		c, err := client.New(client.Config{Pipes: &client.Pipes{Stdin: inW, Stdout: outR}, ProtocolVersion: wire.Version20251125,
			ShutdownWait: 100 * time.Millisecond, EventBuffer: 64})
		if err != nil {
			t.Fatal(err)
		}
		last := make(chan event.Kind, 1)
		go func() {
			var k event.Kind
			for ev := range c.Events() {
				k = ev.Kind
				time.Sleep(200 * time.Microsecond) // reading, but slower than the flood
			}
			last <- k
		}()
		if _, err := c.Connect(context.Background()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
		c.Close()
		if k := <-last; k != event.TransportClosed {
			t.Fatalf("run %d: the last event was %s, want %s", i, k, event.TransportClosed)
		}
		inR.Close()
	}
}
