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
