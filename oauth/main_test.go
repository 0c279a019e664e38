package oauth_test

import (
	"os"
	"strings"
	"testing"
)

// browserOut makes the test binary, run as $BROWSER, write its arguments
// to the file the variable names (and follow nothing).
const browserOut = "INFLIGHT_OAUTH_TEST_BROWSER_OUT"

func TestMain(m *testing.M) {
	if out := os.Getenv(browserOut); out != "" && len(os.Args) > 1 && !strings.HasPrefix(os.Args[1], "-test.") {
		_ = os.WriteFile(out, []byte(strings.Join(os.Args[1:], " ")), 0o600)
		os.Exit(0)
	}
	os.Exit(m.Run())
}
