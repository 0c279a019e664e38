package check

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A trace written by call replays as a table of what happened to the
// request, on every transport and era.
func TestReplayCallTrace(t *testing.T) {
	forEach(t, func(t *testing.T, tc transportCase, e era) {
		path := filepath.Join(t.TempDir(), "trace.jsonl")
		code := Call(context.Background(), CallOptions{Target: tc.target(t, e), Method: "tools/call",
			Params: toolParams(t, "stubborn", `{"seconds":0.4,"steps":4}`), CancelAfter: 150 * time.Millisecond,
			LateWindow: time.Second, TracePath: path}, io.Discard, io.Discard)
		if code != ExitCancelled {
			t.Fatalf("call exit %d", code)
		}
		var out, errOut bytes.Buffer
		if code := Replay(path, ReplayOptions{}, &out, &errOut); code != 0 || errOut.Len() > 0 {
			t.Fatalf("replay exit %d: %s", code, errOut.String())
		}
		s := out.String()
		for _, want := range []string{"request 1: tools/call stubborn: cancelled", "state cancel_requested", "progress 1/4", "connection and server"} {
			mustContain(t, s, want)
		}
		if strings.Contains(s, "inflight-1") || strings.Contains(s, `"method":"initialize"`) {
			t.Errorf("housekeeping shown without --all:\n%s", s)
		}
		if tc.name == "http" && e == modern {
			mustContain(t, s, "cancel signal: stream_closed")
			mustContain(t, s, "no response after the cancel")
			return
		}
		mustContain(t, s, "notifications/cancelled 1")
		mustContain(t, s, "LATE RESPONSE")
		mustContain(t, s, "after the cancel")

		out.Reset()
		Replay(path, ReplayOptions{All: true}, &out, &errOut)
		if e == modern {
			mustContain(t, out.String(), "out    server/discover")
		} else {
			mustContain(t, out.String(), "out    initialize")
		}
	})
}

func TestReplayCheckTrace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "check.jsonl")
	code := Check(context.Background(), CheckOptions{Target: stdioTarget(t, legacy), Args: []byte(`{"seconds":0.3,"steps":3}`),
		LateWindow: 300 * time.Millisecond, TracePath: path}, io.Discard, io.Discard)
	if code != 0 {
		t.Fatalf("check exit %d", code)
	}
	var out bytes.Buffer
	Replay(path, ReplayOptions{}, &out, io.Discard)
	s := out.String()
	for _, want := range []string{"check PASS cancel.progress_stops", "notifications/cancelled \"never-issued-by-inflight-check\"",
		"sent by inflight check", "request 3: tools/call slow: cancelled", "a cancel went out after the request had ended"} {
		mustContain(t, s, want)
	}
}

func TestReplayBadInput(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := Replay(filepath.Join(t.TempDir(), "missing"), ReplayOptions{}, &out, &errOut); code != ExitUsage {
		t.Errorf("missing file: exit %d", code)
	}
	path := filepath.Join(t.TempDir(), "t.jsonl")
	os.WriteFile(path, []byte("garbage\n"+`{"ms":5,"dir":"in","msg":{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi \u001b[2J"}]}}}`+"\n"), 0o600)
	errOut.Reset()
	if code := Replay(path, ReplayOptions{}, &out, &errOut); code != 0 {
		t.Errorf("exit %d", code)
	}
	mustContain(t, errOut.String(), "line 1")
	mustContain(t, out.String(), "request 7")
	if strings.Contains(out.String(), "\x1b") {
		t.Errorf("escape sequence in replay output: %q", out.String())
	}
}
