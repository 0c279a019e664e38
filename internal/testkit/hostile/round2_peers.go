package hostile

import (
	"fmt"
	"strings"
	"time"
)

// TickInterval is how often Ticks reports progress.
const TickInterval = 20 * time.Millisecond

// Ticks never answers the call: it reports progress every TickInterval
// until the client cancels it (or its stdin ends), so that the client has
// something to print all the time — the peer for exits through a closed
// stdout, where only a write finds the pipe gone.
var Ticks = Stdio{Name: "ticks", Call: func(s *Session, req Request) {
	cancelled := s.CancelledCh(req.ID)
	for i := 1; ; i++ {
		if !req.Token.IsZero() && s.Progress(req.Token, float64(i), 0, fmt.Sprintf("tick %d", i)) != nil {
			return
		}
		select {
		case <-cancelled:
			return
		case <-s.Done():
			return
		case <-time.After(TickInterval):
		}
	}
}}

// StderrFloodLines is how many lines StderrFlood writes to its stderr.
const StderrFloodLines = 200_000

// StderrFlood writes StderrFloodLines lines to its stderr when called
// (numbered, so that a reader can tell which were kept), then answers: a
// server whose log output dwarfs its protocol traffic. In-process it has
// no stderr and only answers.
var StderrFlood = Stdio{Name: "stderr-flood", Call: func(s *Session, req Request) {
	if s.stderr != nil {
		var b strings.Builder
		for i := 1; i <= StderrFloodLines; i++ {
			fmt.Fprintf(&b, "stderr flood line %d of %d %s\n", i, StderrFloodLines, strings.Repeat("x", 40))
			if b.Len() > 64<<10 || i == StderrFloodLines {
				if _, err := s.stderr.Write([]byte(b.String())); err != nil {
					break
				}
				b.Reset()
			}
		}
	}
	_ = s.Reply(req.ID, textResult(fmt.Sprintf("wrote %d lines to stderr", StderrFloodLines)))
}}

// HazardText is what ControlError puts in its error: a C1 CSI (U+009B)
// starting a colour, a bidi override (U+202E) and an ESC, each written as
// a proper JSON escape, so that only a client that writes them back raw
// lets them act.
const HazardText = "\u009b31mred\u202eevil\x1b[5m"

// ControlError answers the call with a JSON-RPC error whose message and
// data hold HazardText.
var ControlError = Stdio{Name: "control-error", Call: func(s *Session, req Request) {
	msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":%s,"data":{"detail":%s}}}`,
		req.ID.Raw(), jsonEscaped(HazardText), jsonEscaped(HazardText))
	_ = s.Send([]byte(msg))
}}

// jsonEscaped is s as a JSON string with every non-ASCII or control rune
// written as \uXXXX.
func jsonEscaped(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r < 0x20 || r >= 0x7f:
			fmt.Fprintf(&b, `\u%04x`, r)
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
