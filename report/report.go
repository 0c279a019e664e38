// Package report holds the pieces of a headless command's output that
// `inflight call` and `inflight check` print the same way: the one JSON
// object on stdout (redacted, its indentation bounded), the violation
// entries, the server's label and the connection line.
package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"inflight/event"
	"inflight/redact"
	"inflight/session"
	"inflight/target"
	"inflight/termsafe"
	"inflight/wire"
)

// Violation is one protocol violation by the server, as the --json objects
// list it.
type Violation struct {
	Code   string `json:"code"`
	Detail string `json:"detail"`
}

// Violations lists the tracker's violations (never nil, so that the JSON
// says [] rather than null).
func Violations(vl *session.ViolationLog) []Violation {
	out := []Violation{}
	for i := 0; i < vl.Len(); i++ {
		v := vl.At(i)
		out = append(out, Violation{Code: v.Code, Detail: v.Detail})
	}
	return out
}

// WriteJSON prints v as one indented JSON object, with secrets redacted
// and every rune a terminal could act on written as a \u escape
// (termsafe.EscapeJSON): Go's encoder leaves the C1 and bidirectional
// controls raw, so a server's "\u009b" would otherwise reach whoever cats
// the output as a one-byte CSI. The secrets are replaced before the
// escaping, which can change how a secret is spelled.
func WriteJSON(w io.Writer, v any, red *redact.Redactor) {
	var compact, buf bytes.Buffer
	enc := json.NewEncoder(&compact)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	if err == nil {
		// Not the encoder's own indentation: it would indent a server's
		// result however deep it nests, and a result nested thousands deep
		// would become hundreds of megabytes of spaces.
		err = wire.IndentBounded(&buf, compact.Bytes(), "", "  ", wire.MaxIndentDepth)
	}
	if err != nil {
		// Still one JSON object, written by the encoder: %q would spell an
		// ESC as \x1b, which is not JSON.
		buf.Reset()
		fallback := struct {
			Error ErrorObject `json:"error"`
		}{ErrorObject{Message: err.Error(), Local: true}}
		b, _ := json.Marshal(fallback)
		buf.Write(b)
	}
	buf.WriteByte('\n')
	_, _ = w.Write(termsafe.EscapeJSON(red.Bytes(buf.Bytes())))
}

// ErrorObject is the error WriteJSON prints when v itself cannot be
// written.
type ErrorObject struct {
	Message string `json:"message"`
	Local   bool   `json:"local"`
}

// ServerLabel is the server's name and version, "" when it gave none.
func ServerLabel(info event.ConnInfo) string {
	switch {
	case info.ServerName == "":
		return ""
	case info.ServerVersion == "":
		return info.ServerName
	}
	return info.ServerName + " " + info.ServerVersion
}

// NotRunTransport is the transport of a report for a run that never
// started: "unknown" when the command line failed before it named a server.
func NotRunTransport(t target.Target) string {
	if !t.Named() {
		return "unknown"
	}
	return t.Transport()
}

// ConnectedLine is the line a live run prints once connected: the target,
// transport, era, protocol version and server, sanitised and redacted.
func ConnectedLine(t target.Target, info event.ConnInfo, red *redact.Redactor) string {
	safe := func(s string) string { return termsafe.Line(red.String(s)) }
	server := ServerLabel(info)
	if server == "" {
		server = "unnamed server"
	}
	return fmt.Sprintf("connected to %s: %s, %s era, protocol %s, %s", t.Describe(), info.Transport, info.Era,
		safe(info.ProtocolVersion), safe(server))
}

// Plural is "s" unless n is 1.
func Plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Progress is a progress value, with its total when there is one: "3",
// "3/10", "0.5/1". A server's numbers are bounded (termsafe.Number): 1e308
// reads "1e+308", not 309 digits.
func Progress(v float64, total *float64) string {
	if total == nil {
		return termsafe.Number(v)
	}
	return termsafe.Number(v) + "/" + termsafe.Number(*total)
}

// Fine formats a duration for a finding or summary: to the microsecond
// below 10ms (a loopback round trip is tens of microseconds), to the
// millisecond above.
func Fine(d time.Duration) string {
	if d < 10*time.Millisecond {
		return d.Round(time.Microsecond).String()
	}
	return d.Round(time.Millisecond).String()
}

// After is how long after a cancel (or an end) something came, as replay
// --text says it: to a tenth of a millisecond below a second ("0.4ms"), so
// that a progress 400µs after the cancel never reads "0s".
func After(d time.Duration) string {
	return termsafe.Millis(float64(d.Microseconds()) / 1000)
}

// CrossingBasis says what "crossed" was judged by, so that a reader can
// weigh it: the window, and the round trip it comes from (source, of how
// many samples; 0 when not known), plus --grace when set. call and check
// both say it this way.
func CrossingBasis(window, roundTrip time.Duration, source string, samples int, grace time.Duration) string {
	if roundTrip <= 0 {
		return fmt.Sprintf("crossed means within %s of the cancel (no round trip was measured, so --grace alone)", Fine(window))
	}
	from := termsafe.Line(source)
	if samples > 0 {
		from = fmt.Sprintf("%s of %d", from, samples)
	}
	s := fmt.Sprintf("crossed means within %s of the cancel: half the quickest round trip measured (%s, %s)", Fine(window), Fine(roundTrip), from)
	if grace > 0 {
		s += " plus --grace " + Fine(grace)
	}
	return s
}

// Spacing is session.Spacing (kept here for call and check).
func Spacing(p session.Progress, late session.Late) time.Duration { return session.Spacing(p, late) }

// StillSending is session.StillSending.
func StillSending(quiet, spacing time.Duration) bool { return session.StillSending(quiet, spacing) }

// Span is a watch's length as a finding or summary says it: "2.0s",
// "350ms".
func Span(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}
