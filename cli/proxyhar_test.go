package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"inflight/exitcode"
	"inflight/internal/testkit/testserver"
)

// proxy --url --har in both eras, with inflight call as the host through
// it, on stubborn cancelled mid-way: every exchange between the host and
// the upstream is in the HAR; the call's entry has its events and says
// the host cancelled it and how (legacy: its notifications/cancelled, and
// the late traffic after it; modern: its stream closed); no secret of the
// host's is there (nor in the trace); har-validator reads it; export --har
// of the proxy's --trace writes the same entries.
func TestProxyHTTPHAR(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	for _, e := range testserver.Eras {
		t.Run(e.Name, func(t *testing.T) {
			tg := testserver.HTTP(t, e)
			dir := t.TempDir()
			live, tr, exported := filepath.Join(dir, "live.har"), filepath.Join(dir, "proxy.jsonl"), filepath.Join(dir, "export.har")
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			perr := newSyncBuffer()
			ended := make(chan int, 1)
			go func() {
				var out bytes.Buffer
				ended <- Execute(ctx, []string{"proxy", "--no-tui", "--name", "har-" + e.Name, "--url", tg.URL,
					"--har", live, "--trace", tr}, &out, perr)
			}()
			proxyURL := listeningRE.FindStringSubmatch(perr.waitFor(t, listeningRE))[1]

			code, stdout, stderr := inflight(t, "call", proxyURL+"?token="+harToken, "--protocol-version", e.Version,
				"-H", "Authorization: "+harBearer, "-H", "Cookie: "+harCookie,
				"--tool", "stubborn", "--args", `{"seconds":1,"steps":4}`, "--cancel-after", "400ms", "--late-window", "1500ms")
			if code != exitcode.Cancelled {
				t.Fatalf("the host's call: exit %d\n%s\n%s", code, stdout, stderr)
			}
			// The proxy records the host's cancel on its own goroutines:
			// stopped before it has, it would call the request lost.
			waitTraceSays(t, tr, `"state":"cancelled"`)
			stop()
			if code := <-ended; code != exitcode.Cancelled {
				t.Errorf("the proxy: exit %d\n%s", code, perr.String())
			}
			d, raw := readHAR(t, live)
			checkProxyHAR(t, e, d, raw)
			if b, err := os.ReadFile(tr); err != nil || bytes.Contains(b, []byte("har-bearer-secret")) || bytes.Contains(b, []byte(harToken)) ||
				bytes.Contains(b, []byte("har-cookie-secret")) || !bytes.Contains(b, []byte(`"event":"http_exchange"`)) {
				t.Errorf("the trace (%v) holds a secret or no exchange", err)
			}

			code, _, stderr = inflight(t, "export", "--har", exported, tr)
			if code != 0 || stderr != "" {
				t.Fatalf("export: exit %d: %s", code, stderr)
			}
			x, xraw := readHAR(t, exported)
			checkProxyHAR(t, e, x, xraw)
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

var listeningRE = regexp.MustCompile(`listening on (http://\S+) →`)

// waitTraceSays waits for the trace file at path to hold s.
func waitTraceSays(t *testing.T, path, s string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, _ := os.ReadFile(path); bytes.Contains(b, []byte(s)) {
			return
		}
	}
	t.Fatalf("the trace never said %s", s)
}

func checkProxyHAR(t *testing.T, e testserver.Era, d harDoc, raw []byte) {
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
			if en.Response.Content.MimeType != "text/event-stream" || len(en.EventSource) == 0 {
				t.Errorf("the call's response: %s with %d events", en.Response.Content.MimeType, len(en.EventSource))
			}
			want := []string{`cancelled by the host (notifications/cancelled, "cancelled by inflight call --cancel-after 400ms")`, "late after the cancel"}
			if e == testserver.Modern {
				want = []string{"cancelled by the host (closed its stream)", "the host closed the response before its end"}
			}
			for _, w := range want {
				if !strings.Contains(en.Comment, w) {
					t.Errorf("the call's comment %q does not say %q", en.Comment, w)
				}
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
		wantCancel = 0
	}
	if call != 1 || cancel != wantCancel {
		t.Errorf("%d entries for the call, %d for its cancel (want 1, %d):", call, cancel, wantCancel)
		for _, en := range d.Log.Entries {
			t.Logf("  %s %s %d %q", en.Request.Method, en.Request.URL, en.Response.Status, en.Comment)
		}
	}
}
