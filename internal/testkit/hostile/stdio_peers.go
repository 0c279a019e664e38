package hostile

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"

	"inflight/wire"
)

// Sizes of the peers' excesses.
const (
	// HugeLineBytes is the length of HugeLine's line: far over the client's
	// default 32 MiB message limit. It is streamed, never held in memory.
	HugeLineBytes = 100 << 20
	// DeepNestingDepth is how deep DeepNesting's rejected message nests:
	// far past encoding/json's limit of 10 000.
	DeepNestingDepth = 1_000_000
	// DeepValidDepth is how deep DeepNesting's answer nests: just inside
	// what encoding/json accepts, so the client has to live with it.
	DeepValidDepth = 9_000
	// StormCount is how many progress notifications ProgressStorm sends.
	StormCount = 20_000
)

// Garbage writes text, binary and escape sequences on stdout, and JSON that
// is not JSON-RPC, then answers properly: the connection must go on.
var Garbage = Stdio{Name: "garbage", Call: func(s *Session, req Request) {
	lines := []string{
		"this is not JSON",
		"\x00\x01\x02\x03\xff\xfe\xfd binary \x80\x81\x9b",
		"\x1b[2J\x1b[H\x1b]0;PWNED\x07\x1b]52;c;cHduZWQ=\x07\x1bP+q\x1b\\ escape sequences",
		"{",
		`{"jsonrpc":"1.0","id":` + req.ID.Raw() + `,"result":{}}`,
		`[{"jsonrpc":"2.0","method":"notifications/progress"}]`,
		`"just a string"`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","data":"log with \u001b[31mescapes\u001b[0m and a bell \u0007"}}`,
	}
	for _, l := range lines {
		if s.Send([]byte(l)) != nil {
			return
		}
	}
	// Binary with no structure at all, every byte value.
	junk := make([]byte, 0, 4096)
	for i := 0; i < 16; i++ {
		for b := 0; b < 256; b++ {
			if b != '\n' {
				junk = append(junk, byte(b))
			}
		}
	}
	if s.Send(junk) != nil {
		return
	}
	_ = s.Reply(req.ID, textResult("survived the garbage \x1b[31mRED\x1b[0m\x07"))
}}

// HugeLine streams one line of HugeLineBytes, then answers: the client must
// report the line and skip it without holding it, and the connection must
// go on.
var HugeLine = Stdio{Name: "huge-line", Call: func(s *Session, req Request) {
	err := s.Locked(func(w io.Writer) error {
		return writeHugeMessage(w, HugeLineBytes)
	})
	if err != nil {
		return
	}
	_ = s.Reply(req.ID, textResult("answered after a line of 100 MiB"))
}}

// writeHugeMessage writes a notifications/message line of about size
// bytes, in chunks, so that it never exists in memory as a whole.
func writeHugeMessage(w io.Writer, size int) error {
	head := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"`
	if _, err := io.WriteString(w, head); err != nil {
		return err
	}
	chunk := bytes.Repeat([]byte("x"), 256<<10)
	for left := size - len(head); left > 0; left -= len(chunk) {
		if _, err := w.Write(chunk[:min(left, len(chunk))]); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, "\"}}\n")
	return err
}

// DeepNesting sends an answer nested DeepNestingDepth deep, which no JSON
// parser should accept, then a real answer nested DeepValidDepth deep.
var DeepNesting = Stdio{Name: "deep-nesting", Call: func(s *Session, req Request) {
	err := s.Locked(func(w io.Writer) error {
		head := `{"jsonrpc":"2.0","id":` + req.ID.Raw() + `,"result":{"deep":`
		if _, err := io.WriteString(w, head); err != nil {
			return err
		}
		if _, err := w.Write(bytes.Repeat([]byte("["), DeepNestingDepth)); err != nil {
			return err
		}
		if _, err := w.Write(bytes.Repeat([]byte("]"), DeepNestingDepth)); err != nil {
			return err
		}
		_, err := io.WriteString(w, "}}\n")
		return err
	})
	if err != nil {
		return
	}
	_ = s.Reply(req.ID, DeepResult(DeepValidDepth))
}}

// DeepResult is a complete tool result carrying arrays nested depth deep.
func DeepResult(depth int) string {
	return `{"resultType":"complete","content":[{"type":"text","text":"deeply nested"}],"deep":` +
		strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}`
}

// OddIDs answers with IDs of every JSON type — null, a string that looks
// like the request's number, fractions, a number too big for any integer,
// true, an object, an array, and the request's number written otherwise
// (7.0, 7E0, 7e0, and 1e-400, which is no 0) — and progress with tokens of
// the same kinds, before answering with the request's ID as it was sent.
// None of the look-alikes answers the request: JSON-RPC IDs are compared
// as written (issue 14, item 11).
var OddIDs = Stdio{Name: "odd-ids", Call: func(s *Session, req Request) {
	n := req.ID.Raw()
	lines := []string{
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"an error with a null id"}}`,
		`{"jsonrpc":"2.0","id":"` + strings.Trim(n, `"`) + `","result":{}}`,
		`{"jsonrpc":"2.0","id":` + n + `.5,"result":{}}`,
		`{"jsonrpc":"2.0","id":1e400,"result":{}}`,
		`{"jsonrpc":"2.0","id":123456789012345678901234567890,"result":{}}`,
		`{"jsonrpc":"2.0","id":-0,"result":{}}`,
		`{"jsonrpc":"2.0","id":true,"result":{}}`,
		`{"jsonrpc":"2.0","id":{"id":` + n + `},"result":{}}`,
		`{"jsonrpc":"2.0","id":[` + n + `],"result":{}}`,
		`{"jsonrpc":"2.0","id":` + n + `.0,"result":` + textResult("a look-alike: the id as "+n+".0") + `}`,
		`{"jsonrpc":"2.0","id":` + n + `E0,"result":` + textResult("a look-alike: the id as "+n+"E0") + `}`,
		`{"jsonrpc":"2.0","id":` + n + `e0,"result":` + textResult("a look-alike: the id as "+n+"e0") + `}`,
		`{"jsonrpc":"2.0","id":1e-400,"result":{}}`,
	}
	for _, tok := range []string{`null`, `"` + strings.Trim(n, `"`) + `"`, n + `.5`, `1e400`, `{"t":1}`, `[1]`, `false`} {
		lines = append(lines, string(progressNotification(tok, 1, 2, "odd token")))
	}
	lines = append(lines, `{"jsonrpc":"2.0","id":`+n+`,"result":`+
		textResult("not answered with the id as "+n+"e0 (nor "+n+".0, "+n+"E0: other IDs); answered with the id as "+n)+`}`)
	for _, l := range lines {
		if s.Send([]byte(l)) != nil {
			return
		}
	}
}}

// Duplicates answers twice more after its answer — once with an error —
// and answers a request that was never sent.
var Duplicates = Stdio{Name: "duplicates", Call: func(s *Session, req Request) {
	_ = s.Reply(req.ID, textResult("the first answer"))
	_ = s.Send(wire.ErrorResponse(req.ID, wire.CodeInternalError, "a second answer, an error"))
	_ = s.Reply(req.ID, textResult("a third answer"))
	_ = s.Reply(wire.StringID("never-sent"), textResult("an answer to nothing"))
}}

// answerAfterCancel is how long AnswersCancel waits after the cancel.
const answerAfterCancel = 20 * time.Millisecond

// AnswersCancel reports progress and waits; when the client cancels, it
// answers 20ms later — a reaction to the cancel, so a late response —
// answers again, and reports more progress. Uncancelled, it answers after
// 30s.
var AnswersCancel = Stdio{Name: "answers-cancel", Call: func(s *Session, req Request) {
	if !req.Token.IsZero() {
		_ = s.Progress(req.Token, 1, 10, "step 1 of 10")
	}
	t := time.NewTimer(30 * time.Second)
	defer t.Stop()
	select {
	case <-s.CancelledCh(req.ID):
		// It answers a moment after the cancel, so the answer is plainly
		// a reaction to it (late), not one that might have crossed it in
		// flight, however slow the machine is at measuring round trips.
		time.Sleep(answerAfterCancel)
	case <-t.C:
	case <-s.Done():
		return
	}
	_ = s.Reply(req.ID, textResult("finished anyway"))
	_ = s.Reply(req.ID, textResult("and again"))
	if !req.Token.IsZero() {
		_ = s.Progress(req.Token, 2, 10, "step 2 of 10, after the cancel")
	}
}}

// ProgressStorm sends StormCount progress notifications whose values go
// down (with negative and enormous ones among them), then answers.
var ProgressStorm = Stdio{Name: "progress-storm", Call: func(s *Session, req Request) {
	tok := req.Token.Raw()
	if tok == "" {
		tok = req.ID.Raw()
	}
	var buf bytes.Buffer
	for i := 0; i < StormCount; i++ {
		v := float64(StormCount - i)
		switch i % 1000 {
		case 500:
			v = -1
		case 999:
			v = 1e308
		}
		buf.Write(progressNotification(tok, v, 10, fmt.Sprintf("storm %d \x1b[5m", i)))
		buf.WriteByte('\n')
		if buf.Len() > 64<<10 || i == StormCount-1 {
			if s.Write(buf.Bytes()) != nil {
				return
			}
			buf.Reset()
		}
	}
	_ = s.Reply(req.ID, textResult(fmt.Sprintf("sent %d progress notifications", StormCount)))
}}

// ClosesStdout closes its stdout when called and keeps running (reading its
// stdin) until it is stopped.
var ClosesStdout = Stdio{Name: "closes-stdout", Call: func(s *Session, req Request) {
	s.CloseStdout()
	<-s.Done()
}}

// IgnoresSIGTERM never answers the call and ignores both the end of its
// stdin and SIGTERM: only SIGKILL ends it.
var IgnoresSIGTERM = Stdio{Name: "ignores-sigterm", Stubborn: true, Call: func(s *Session, req Request) {
	<-s.Done()
}}

// Silent never answers the call, and exits like any server when its stdin
// ends: a request only a cancel or a timeout ends.
var Silent = Stdio{Name: "silent", Call: func(s *Session, req Request) {
	<-s.Done()
}}

// AnswersFirst sends responses and progress for requests 1, 2 and 3 before
// the client asked anything, then answers the call properly.
var AnswersFirst = Stdio{Name: "answers-first", Open: func(s *Session) {
	_ = s.Reply(wire.IntID(1), textResult("answered before it was asked"))
	_ = s.Reply(wire.IntID(2), textResult("answered before it was asked"))
	_ = s.Send(wire.ErrorResponse(wire.IntID(3), wire.CodeInternalError, "failed before it was asked"))
	_ = s.Progress(wire.IntID(1), 1, 2, "progress before the request")
}, Call: func(s *Session, req Request) {
	_ = s.Reply(req.ID, textResult("the real answer"))
}}

// Crashes reports progress and then dies mid-request.
var Crashes = Stdio{Name: "crashes", Call: func(s *Session, req Request) {
	if !req.Token.IsZero() {
		_ = s.Progress(req.Token, 1, 10, "step 1 of 10")
	}
	s.Exit()
}}

// PingFlood stops reading its stdin when the tool is called and sends ping
// after ping until it is stopped: the client answers each one (legacy era),
// the answers fill the pipe, and a write stalls while the event channel is
// full (issue 14, item 1). Served in-process its stdin is an io.Pipe, which
// holds nothing: the first unread answer stalls. Only a stop (or, as a
// process, SIGTERM) ends it, since it no longer sees its stdin end.
var PingFlood = Stdio{Name: "ping-flood", Call: func(s *Session, req Request) {
	s.StopReading()
	for i := 1; ; i++ {
		if s.Send(wire.Request(wire.StringID(fmt.Sprintf("flood-%d", i)), wire.MethodPing, nil)) != nil {
			return
		}
		select {
		case <-s.Done():
			return
		default:
		}
	}
}}

// StdioPeers lists every stdio peer.
func StdioPeers() []Stdio {
	peers := []Stdio{Garbage, HugeLine, DeepNesting, OddIDs, Duplicates, AnswersCancel, ProgressStorm, ClosesStdout, IgnoresSIGTERM, Silent, AnswersFirst, Crashes, PingFlood, Ticks, StderrFlood, ControlError,
		CancelCodeZero, MisaddressedIDs, CancelsClientRequest}
	return append(peers, TaskPeers()...)
}

// Lookup finds a stdio peer by name.
func Lookup(name string) (Stdio, bool) {
	for _, p := range StdioPeers() {
		if p.Name == name {
			return p, true
		}
	}
	return Stdio{}, false
}
