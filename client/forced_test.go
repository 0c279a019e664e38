package client_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"inflight/client"
	"inflight/event"
	"inflight/wire"
)

// A forced modern version (--protocol-version 2026-07-28) still asks
// server/discover, once, to learn about the server, but never falls back:
// against a server that is not modern, Connect fails and says why.

func TestForcedModernDiscoversOnce(t *testing.T) {
	t.Run("stdio", func(t *testing.T) {
		pipes, lt := demoStdio(t)
		_, _, info := connectClient(t, client.Config{Pipes: pipes, ProtocolVersion: wire.VersionModern})
		if info.Era != event.EraModern || info.ProtocolVersion != wire.VersionModern {
			t.Fatalf("era %s version %s, want modern", info.Era, info.ProtocolVersion)
		}
		if info.ServerName != "inflight-demo" || len(info.Capabilities) == 0 {
			t.Errorf("a forced version learned nothing about the server: %+v", info)
		}
		lines := lt.all()
		if n := strings.Count(strings.Join(lines, "\n"), `"method":"server/discover"`); n != 1 || !strings.Contains(lines[0], wire.MethodDiscover) {
			t.Errorf("want exactly one server/discover, first; the server read:\n%s", strings.Join(lines, "\n"))
		}
	})
	t.Run("http", func(t *testing.T) {
		srv, log := demoHTTP(t)
		_, _, info := connectClient(t, client.Config{URL: srv.URL, ProtocolVersion: wire.VersionModern})
		if info.Era != event.EraModern || info.ServerName != "inflight-demo" {
			t.Fatalf("info %+v, want the modern demo", info)
		}
		reqs := log.all()
		if len(reqs) != 1 || reqs[0].rpcMethod() != wire.MethodDiscover {
			t.Errorf("want exactly one POST, server/discover:\n%s", log.dump())
		}
	})
}

// connectFails connects and returns the error, failing the test when the
// connection succeeds.
func connectFails(t *testing.T, cfg client.Config) error {
	t.Helper()
	c, rec := newClient(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	info, err := c.Connect(ctx)
	if err == nil {
		t.Fatalf("Connect succeeded (%+v); want an error\nevents:\n%s", info, rec.dump())
	}
	return err
}

func TestForcedModernLegacyServer(t *testing.T) {
	const want = "protocol version 2026-07-28 was forced, but the server"
	t.Run("stdio", func(t *testing.T) {
		pipes, lt := sdkStdio(t, legacyOnlySDK())
		err := connectFails(t, client.Config{Pipes: pipes, ProtocolVersion: wire.VersionModern})
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q, want it to say %q", err, want)
		}
		for _, l := range lt.all() {
			if strings.Contains(l, `"initialize"`) {
				t.Errorf("a forced modern version fell back to initialize: %s", l)
			}
		}
	})
	t.Run("http", func(t *testing.T) {
		s := legacyOnlySDK()
		srv, log := serveHTTP(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
		err := connectFails(t, client.Config{URL: srv.URL, ProtocolVersion: wire.VersionModern})
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q, want it to say %q", err, want)
		}
		for _, r := range log.all() {
			if r.rpcMethod() == wire.MethodInitialize {
				t.Errorf("a forced modern version fell back to initialize")
			}
		}
	})
	t.Run("stdio silent", func(t *testing.T) {
		// A legacy server may not answer server/discover at all: the
		// probe's bound decides, and the error says how long it waited.
		_, pipes := newStdioPeer(t, nil)
		err := connectFails(t, client.Config{Pipes: pipes, ProtocolVersion: wire.VersionModern, ProbeTimeout: 100 * time.Millisecond})
		if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "no answer within 100ms") {
			t.Errorf("error %q", err)
		}
	})
}

func TestForcedModernUnsupported(t *testing.T) {
	tests := []struct {
		name    string
		answer  func(m wire.Message) []byte
		wantErr string
	}{
		{"UnsupportedProtocolVersionError", func(m wire.Message) []byte { return unsupportedVersion(m.ID) },
			"protocol version 2026-07-28 was forced, but the server does not support it; it supports 2027-01-01"},
		{"discover lists other versions", func(m wire.Message) []byte {
			return wire.ResultResponse(m.ID, json.RawMessage(`{"supportedVersions":["2025-11-25"],"capabilities":{}}`))
		}, "protocol version 2026-07-28 was forced, but the server supports only 2025-11-25"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, pipes := newStdioPeer(t, func(p *stdioPeer, m wire.Message) {
				if m.Method == wire.MethodDiscover {
					p.send(string(tc.answer(m)))
				}
			})
			err := connectFails(t, client.Config{Pipes: pipes, ProtocolVersion: wire.VersionModern})
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %q, want %q", err, tc.wantErr)
			}
			if n := strings.Count(strings.Join(p.all(), "\n"), wire.MethodDiscover); n != 1 {
				t.Errorf("%d probes, want 1 (no retry with another version when one is forced)", n)
			}
			for _, l := range p.all() {
				if strings.Contains(l, `"initialize"`) {
					t.Errorf("fell back to initialize: %s", l)
				}
			}
		})
	}
}
