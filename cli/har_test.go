package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"inflight/exitcode"
	"inflight/internal/testkit/formats"
	"inflight/internal/testkit/testserver"
)

// harDoc is what the tests read of an HAR.
type harDoc struct {
	Log struct {
		Entries []struct {
			Request struct {
				Method  string `json:"method"`
				URL     string `json:"url"`
				Headers []struct{ Name, Value string }
			} `json:"request"`
			Response struct {
				Status  int `json:"status"`
				Content struct {
					MimeType string `json:"mimeType"`
				} `json:"content"`
			} `json:"response"`
			Comment     string `json:"comment"`
			EventSource []struct {
				EventName string  `json:"eventName"`
				EventID   string  `json:"eventId"`
				Data      string  `json:"data"`
				Time      float64 `json:"time"`
			} `json:"_eventSourceMessages"`
		} `json:"entries"`
	} `json:"log"`
}

func readHAR(t *testing.T, path string) (harDoc, []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	formats.HAR(t, b)
	var d harDoc
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d, b
}

// The secrets the HAR tests send, in a header, a cookie and the URL.
const (
	harBearer = "Bearer har-bearer-secret-1234"
	harCookie = "session=har-cookie-secret-5678"
	harToken  = "har-url-token-9012"
)

// call --har over Streamable HTTP in both eras, on stubborn cancelled
// mid-way: every exchange is in the HAR, the call's entry says it was
// cancelled and how (legacy: a notifications/cancelled POST and the late
// traffic it watched; modern: its stream closed), its events are there as
// Chromium writes EventSource messages, no secret is, and har-validator
// reads it. export --har of the run's --trace writes the same HAR.
func TestCallHARAndExport(t *testing.T) {
	for _, e := range testserver.Eras {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			tg := testserver.HTTP(t, e)
			dir := t.TempDir()
			live, tr, exported := filepath.Join(dir, "live.har"), filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "export.har")
			code, stdout, stderr := inflight(t, "call", tg.URL+"?token="+harToken, "--protocol-version", e.Version,
				"-H", "Authorization: "+harBearer, "-H", "Cookie: "+harCookie,
				"--tool", "stubborn", "--args", `{"seconds":1,"steps":4}`, "--cancel-after", "400ms", "--late-window", "1500ms",
				"--har", live, "--trace", tr)
			if code != exitcode.Cancelled {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			d, raw := readHAR(t, live)
			checkCallHAR(t, e, d, raw)

			code, _, stderr = inflight(t, "export", "--har", exported, tr)
			if code != 0 || stderr != "" {
				t.Fatalf("export: exit %d: %s", code, stderr)
			}
			x, xraw := readHAR(t, exported)
			checkCallHAR(t, e, x, xraw)
			if len(x.Log.Entries) != len(d.Log.Entries) {
				t.Errorf("export has %d entries, the live HAR %d", len(x.Log.Entries), len(d.Log.Entries))
			}
			for i := range min(len(x.Log.Entries), len(d.Log.Entries)) {
				if a, b := x.Log.Entries[i], d.Log.Entries[i]; a.Comment != b.Comment || a.Request.URL != b.Request.URL {
					t.Errorf("entry %d: export %q, live %q", i, a.Comment, b.Comment)
				}
			}
		})
	}
}

func checkCallHAR(t *testing.T, e testserver.Era, d harDoc, raw []byte) {
	t.Helper()
	for _, secret := range []string{"har-bearer-secret", "har-cookie-secret", harToken} {
		if bytes.Contains(raw, []byte(secret)) {
			t.Errorf("the HAR holds the secret %q", secret)
		}
	}
	var call, cancel int
	for _, en := range d.Log.Entries {
		if !strings.Contains(en.Request.URL, "token=%5Bredacted%5D") {
			t.Errorf("URL %q: the token is not masked", en.Request.URL)
		}
		for _, h := range en.Request.Headers {
			if (h.Name == "Authorization" || h.Name == "Cookie") && h.Value != "[redacted]" {
				t.Errorf("header %s: %q", h.Name, h.Value)
			}
		}
		switch {
		case strings.HasPrefix(en.Comment, "tools/call ") && strings.Contains(en.Comment, ": cancelled;"):
			call++
			checkCallEntry(t, e, en.Comment, len(en.EventSource), en.Response.Content.MimeType)
			messages := 0
			for _, m := range en.EventSource {
				if m.Data == "" && m.EventID != "" && m.Time >= 1e9 {
					continue // a priming event: an ID to resume from, no data
				}
				messages++
				if m.EventName != "message" || m.Time < 1e9 || !strings.Contains(m.Data, `"jsonrpc"`) {
					t.Errorf("event %+v", m)
				}
			}
			if messages == 0 {
				t.Errorf("the call's stream has no message event: %+v", en.EventSource)
			}
		case strings.HasPrefix(en.Comment, "the cancel (notifications/cancelled) of request "):
			cancel++
			if en.Request.Method != "POST" || en.Response.Status != 202 {
				t.Errorf("the cancel's POST: %s → %d", en.Request.Method, en.Response.Status)
			}
		}
	}
	wantCancel := 1
	if e == testserver.Modern {
		wantCancel = 0 // the modern cancel is the stream's closing: no POST
	}
	if call != 1 || cancel != wantCancel {
		t.Errorf("%d entries for the call, %d for its cancel (want 1, %d):", call, cancel, wantCancel)
		for _, en := range d.Log.Entries {
			t.Logf("  %s %s %d %q", en.Request.Method, en.Request.URL, en.Response.Status, en.Comment)
		}
	}
}

func checkCallEntry(t *testing.T, e testserver.Era, comment string, events int, mime string) {
	t.Helper()
	if mime != "text/event-stream" || events == 0 {
		t.Errorf("the call's response: %s with %d events", mime, events)
	}
	want := []string{`cancel sent (notifications/cancelled, "cancelled by inflight call --cancel-after 400ms")`, "late after the cancel"}
	if e == testserver.Modern {
		want = []string{"cancel sent (stream_closed", "inflight closed the response before its end"}
	}
	for _, w := range want {
		if !strings.Contains(comment, w) {
			t.Errorf("the call's comment %q does not say %q", comment, w)
		}
	}
}

// export says what it could not do: no trace, a trace with no HTTP
// exchange (stdio), and no format named.
func TestExportHARRefusals(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := inflight(t, "export", "--har", filepath.Join(dir, "a.har"), filepath.Join(dir, "none.jsonl")); code != exitcode.Usage || stderr == "" {
		t.Errorf("missing trace: exit %d %q", code, stderr)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	if code, _, stderr := inflight(t, "export", filepath.Join(dir, "none.jsonl")); code != exitcode.Usage || !strings.Contains(stderr, "--har") || !strings.Contains(stderr, "--otlp") {
		t.Errorf("no format: exit %d %q", code, stderr)
	}
	if code, _, stderr := inflight(t, "export", "--otlp", "collector:4318", filepath.Join(dir, "none.jsonl")); code != exitcode.Usage || !strings.Contains(stderr, "OTLP/HTTP URL") {
		t.Errorf("a URL that is not one: exit %d %q", code, stderr)
	}
	tr := filepath.Join(dir, "stdio.jsonl")
	if err := os.WriteFile(tr, []byte(`{"ms":0,"dir":"local","event":"note","text":"a stdio run"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "stdio.har")
	code, _, stderr := inflight(t, "export", "--har", out, tr)
	if code != 0 || !strings.Contains(stderr, "holds no HTTP exchange") {
		t.Errorf("stdio trace: exit %d %q", code, stderr)
	}
	if d, _ := readHAR(t, out); len(d.Log.Entries) != 0 {
		t.Errorf("%d entries", len(d.Log.Entries))
	}
}

// --har on a stdio target is refused before anything starts, saying why,
// on call and the TUI alike: a stdio server has no HTTP exchange, and an
// empty archive written without a word reads as a recording gone wrong.
func TestHARRefusedOverStdio(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"call", "--har", filepath.Join(dir, "call.har"), "tools/list"},
		{"call", "--har", filepath.Join(dir, "call.har"), "tools/list", "--", "inflight-demo", "demo-server"},
		{"--har", filepath.Join(dir, "tui.har")},
	} {
		code, stdout, stderr := inflight(t, args...)
		if code != exitcode.Usage || !strings.Contains(stderr, "--har records HTTP exchanges, and a stdio server has none") {
			t.Errorf("%q: exit %d, stderr %q; want it refused as a usage error", args, code, stderr)
		}
		if stdout != "" {
			t.Errorf("%q: a refused run printed %q", args, stdout)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*.har")); len(files) != 0 {
		t.Errorf("a refused --har left %q", files)
	}
}
