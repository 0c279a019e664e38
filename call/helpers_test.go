package call

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"inflight/internal/testkit/testserver"
)

func TestMain(m *testing.M) { testserver.Main(m) }

// runCall runs Run with --json and decodes its report.
func runCall(t *testing.T, o Options) (Report, int, string) {
	t.Helper()
	o.JSON = true
	if o.LateWindow == 0 {
		o.LateWindow = testserver.Late
	}
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), o, &stdout, &stderr)
	var rep Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("call --json printed no JSON object (%v):\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	if rep.ExitCode != code {
		t.Errorf("report exitCode %d, returned %d", rep.ExitCode, code)
	}
	return rep, code, stderr.String()
}
