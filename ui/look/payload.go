package look

import (
	"bytes"

	"inflight/wire"
)

// HorizontalStep is how far ←/→ (and the wheel tilted) scroll a payload
// whose long lines are cut.
const HorizontalStep = 8

// WheelRows is how many rows one notch of the mouse wheel scrolls.
const WheelRows = 3

// PrettyJSON indents JSON for reading and renders it inert through block;
// invalid JSON is shown as it is (sanitised). Indentation is bounded: a
// hostile answer nested thousands deep would otherwise grow quadratically
// on every frame.
func PrettyJSON(raw []byte, block func(string) string) string {
	var out bytes.Buffer
	if err := wire.IndentBounded(&out, raw, "", "  ", 24); err != nil {
		return block(string(raw))
	}
	return block(out.String())
}
