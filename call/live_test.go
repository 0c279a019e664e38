package call

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"inflight/session"
)

// On a terminal the bar stays on one line, whatever the server's message:
// a bar that wraps leaves a line behind at every redraw.
func TestProgressBarFitsTheTerminal(t *testing.T) {
	var out bytes.Buffer
	v := newLiveView(&out, true, nil)
	v.columns = func() int { return 40 }
	start := time.Now()
	r := &session.Request{Created: start, Progress: session.Progress{Count: 1, Value: 1, Total: 5, HasTotal: true,
		Message: strings.Repeat("a long progress message ", 10)}}
	v.drawProgress(r, start.Add(time.Second))
	r.Progress.Value = 2
	v.drawProgress(r, start.Add(2*time.Second))
	for _, seg := range strings.Split(out.String(), "\r\x1b[K") {
		if w := ansi.StringWidth(seg); w > 39 {
			t.Errorf("a bar line %d columns wide on a 40-column terminal: %q", w, seg)
		}
	}
	if !strings.Contains(out.String(), "…") {
		t.Errorf("the long message was not cut with an ellipsis: %q", out.String())
	}
}
