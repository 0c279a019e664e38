package demo

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The asking tools against go-sdk's own client, which answers through its
// handlers: in the modern era its multi round-trip middleware retries with
// inputResponses, in the legacy era the tools send it requests.
func TestAnsweringToolsSDK(t *testing.T) {
	for _, transport := range []string{"stdio", "http"} {
		for _, e := range eras {
			t.Run(transport+"/"+string(e), func(t *testing.T) {
				cs := connectAnswering(t, transport, e)
				for _, tc := range []struct{ tool, want string }{
					{toolConfirm, "deleted 3 files"},
					{toolTwoRounds, "Grace likes blue"},
					{toolSample, "the model says: Paris"},
					{toolRoots, "file:///work"},
				} {
					if got := callText(t, cs, &mcp.CallToolParams{Name: tc.tool}); !strings.Contains(got, tc.want) {
						t.Errorf("%s = %q, want %q", tc.tool, got, tc.want)
					}
				}
			})
		}
	}
}

func connectAnswering(t *testing.T, transport string, e era) *mcp.ClientSession {
	t.Helper()
	s, _ := newTestServer(t)
	client := mcp.NewClient(&mcp.Implementation{Name: "demo-test", Version: "0"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			switch {
			case strings.Contains(req.Params.Message, "name"):
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Grace"}}, nil
			case strings.Contains(req.Params.Message, "colour"):
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"colour": "blue"}}, nil
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
		},
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "test", Content: &mcp.TextContent{Text: "Paris."}}, nil
		},
	})
	client.AddRoots(&mcp.Root{URI: "file:///work", Name: "work"})
	var ct mcp.Transport
	switch transport {
	case "stdio":
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		served := make(chan error, 1)
		go func() { served <- s.ServeStdio(context.Background(), inR, outW) }()
		t.Cleanup(func() { <-served })
		ct = &mcp.IOTransport{Reader: outR, Writer: inW}
	default:
		mux := http.NewServeMux()
		mux.Handle("/mcp", s.HTTPHandler())
		srv := httptest.NewServer(mux)
		tr := &http.Transport{}
		t.Cleanup(func() {
			_ = s.Close()
			srv.CloseClientConnections()
			srv.Close()
			tr.CloseIdleConnections()
		})
		ct = &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: &http.Client{Transport: tr}}
	}
	var opts *mcp.ClientSessionOptions
	if e == legacy {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion}
	}
	ctx, cancel := context.WithTimeout(context.Background(), eventually)
	defer cancel()
	cs, err := client.Connect(ctx, ct, opts)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}
