package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"inflight/ui"
)

// TestACleanEndReadsAsEnded: the trace of a call that finished, and the
// one a proxy left when its host went, end with a transport_closed that
// has no error: replay and attach NAME say the run ended, not that the
// connection was lost. A trace whose transport_closed has an error (the
// server died) still says the connection was lost.
func TestACleanEndReadsAsEnded(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo server")
	}
	t.Setenv(childEnv, "1")
	t.Setenv("XDG_RUNTIME_DIR", shortTemp(t))
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	callTrace, proxyTrace := filepath.Join(dir, "call.jsonl"), filepath.Join(dir, "proxy.jsonl")
	slow := []string{"--tool", "slow", "--args", `{"seconds":0.2,"steps":2}`}
	if code, _, stderr := inflight(t, append([]string{"call", "--trace", callTrace}, slow...)...); code != 0 {
		t.Fatalf("call: exit %d: %s", code, stderr)
	}
	proxied := append([]string{"call"}, slow...)
	proxied = append(proxied, "--", exe, "proxy", "--name", "done", "--trace", proxyTrace, "--", exe, "demo-server")
	if code, _, stderr := inflight(t, proxied...); code != 0 {
		t.Fatalf("call through the proxy: exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(callTrace)
	if err != nil {
		t.Fatal(err)
	}
	const closed = `"event":"transport_closed"}`
	if !bytes.HasSuffix(bytes.TrimSpace(data), []byte(closed)) {
		t.Fatalf("the call's trace does not end with a transport_closed without an error:\n%s", data)
	}
	lostTrace := filepath.Join(dir, "lost.jsonl")
	lost := bytes.Replace(data, []byte(closed), []byte(`"event":"transport_closed","error":"the server exited: signal: killed"}`), 1)
	if err := os.WriteFile(lostTrace, lost, 0o600); err != nil {
		t.Fatal(err)
	}

	view := func(open func(c *cli, f *replayFlags) int) string {
		t.Helper()
		var seen string
		f := defaultReplayFlags()
		f.run = func(ctx context.Context, m *ui.Model) error {
			m.Init()
			m.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
			seen = ansi.Strip(m.View().Content)
			return nil
		}
		var stderr bytes.Buffer
		c := &cli{stdout: &bytes.Buffer{}, stderr: &stderr}
		if code := open(c, f); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
		return seen
	}
	for name, seen := range map[string]string{
		"replay of the call's trace": view(func(c *cli, f *replayFlags) int { return c.replayView(context.Background(), callTrace, f) }),
		"attach of the ended proxy": view(func(c *cli, f *replayFlags) int {
			return c.attachEnded(context.Background(), "done", proxyTrace, true, f)
		}),
	} {
		for _, want := range []string{"■ ended", "■ the connection closed here without an error, in the recorded run"} {
			if !strings.Contains(seen, want) {
				t.Errorf("%s lacks %q:\n%s", name, want, seen)
			}
		}
		for _, wrong := range []string{"connection lost", "disconnected"} {
			if strings.Contains(seen, wrong) {
				t.Errorf("%s says %q:\n%s", name, wrong, seen)
			}
		}
	}
	seen := view(func(c *cli, f *replayFlags) int { return c.replayView(context.Background(), lostTrace, f) })
	for _, want := range []string{"↯ disconnected", "↯ connection lost here, in the recorded run: the server exited: signal: killed"} {
		if !strings.Contains(seen, want) {
			t.Errorf("the replay of a lost connection lacks %q:\n%s", want, seen)
		}
	}
}
