package call

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"inflight/exitcode"
	"inflight/internal/testkit/testserver"
	"inflight/target"
	"inflight/wire"
)

// mrtrServer is a raw modern Streamable HTTP server whose every tools/call
// answers with an InputRequiredResult, which `inflight call` cannot answer.
func mrtrServer(t *testing.T) target.Target {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		m, err := wire.Decode(body)
		if err != nil || m.Kind != wire.KindRequest {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		var result string
		switch m.Method {
		case wire.MethodDiscover:
			result = `{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mrtr","version":"1"}}}`
		default:
			result = `{"resultType":"input_required","inputRequests":{"github_login":{"method":"elicitation/create","params":{"mode":"form","message":"Your GitHub username?","requestedSchema":{"type":"object"}}},"capital":{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":10}}},"requestState":"blob"}`
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(wire.ResultResponse(m.ID, json.RawMessage(result)))
	}))
	t.Cleanup(srv.Close)
	return target.Target{URL: srv.URL}
}

func TestCallInputRequired(t *testing.T) {
	target := mrtrServer(t)
	params := testserver.ToolParams(t, "login", `{}`)

	rep, code, _ := runCall(t, Options{Target: target, Method: "tools/call", Params: params})
	if code != exitcode.Failed || rep.State != "input_required" {
		t.Fatalf("exit %d state %s, want 1 input_required", code, rep.State)
	}
	var compact bytes.Buffer
	_ = json.Compact(&compact, rep.Result)
	if !strings.Contains(compact.String(), `"requestState":"blob"`) {
		t.Errorf("result %s, want the InputRequiredResult", rep.Result)
	}
	if rep.Error == nil || !rep.Error.Local || !strings.Contains(rep.Error.Message, "github_login (elicitation/create)") {
		t.Errorf("error %+v, want a local explanation naming the input requests", rep.Error)
	}

	// The human summary says what happened and why call stops there.
	var stdout, stderr bytes.Buffer
	code = Run(context.Background(), Options{Target: target, Method: "tools/call", Params: params}, &stdout, &stderr)
	if code != exitcode.Failed {
		t.Errorf("exit %d, want 1", code)
	}
	out := stdout.String()
	testserver.MustContain(t, out, "input_required (exit 1)")
	testserver.MustContain(t, out, "the server needs more input to finish this request")
	testserver.MustContain(t, out, "capital (sampling/createMessage), github_login (elicitation/create)")
	testserver.MustContain(t, out, "inflight call answers only from --answer-file, --decline and --root")
}
