package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"inflight/trace"
	"inflight/wire"
)

// A viewer on the attach socket (`inflight attach`) may write commands on
// its connection, one JSON object a line:
//
//	{"act":"hold","id":3}
//	{"act":"delay","id":3,"after":"30s"}
//	{"act":"cancel","id":"abc"}            (also "after":"2s")
//	{"act":"cancel-silent","id":3}
//	{"act":"drop","id":3}  {"act":"race","id":3}
//	{"act":"release","id":3}  {"act":"release-all"}
//
// "id" is the host's JSON-RPC request ID as the host wrote it (a number or
// a string). The proxy answers each command on that viewer's connection
// alone, with one trace line of its own event, "reply" (dir "local"):
// "code" is "done" or "refused", "injected" the act, "id" the request and
// "text" what was done or why not. What a done command then does is an
// injected line in the trace that every viewer (and --trace) gets, as a
// --rule's is. A reply is a valid trace record, so the stream stays one
// that replay and `attach --plain` read; it goes into no trace file.

// Command is one command line.
type Command struct {
	Act string `json:"act"`
	// ID is the host's request acted on (not for release-all).
	ID *wire.ID `json:"id,omitempty"`
	// After is delay's D, or how long from now a cancel goes ("2s").
	After string `json:"after,omitempty"`
}

// The commands' acts besides the rules' actions.
const (
	ActRelease    = "release"
	ActReleaseAll = "release-all"
)

// The codes of a reply.
const (
	ReplyDone    = "done"
	ReplyRefused = "refused"
)

// maxCommandBytes bounds one command line; a longer one is refused and
// skipped to its end.
const maxCommandBytes = 4096

// CommandSource is what a command's rule says it came from (its Text):
// the injected lines of a command name it (ui.AttachCommandSource).
const CommandSource = "a key in inflight attach"

// EncodeCommand is a command's line, terminated.
func EncodeCommand(c Command) []byte {
	b, _ := json.Marshal(c)
	return append(b, '\n')
}

// parseCommand reads one command line into what to do.
func parseCommand(b []byte) (Command, *Rule, error) {
	var c Command
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, nil, fmt.Errorf("not a command (a JSON object with act, id, after): %v", err)
	}
	// Anything after the object — a second command above all — refuses
	// the line whole: running the first and dropping the rest unseen
	// would do half of what was asked.
	if _, err := dec.Token(); err != io.EOF {
		return Command{}, nil, errors.New("one command a line: this line has more after its first JSON object")
	}
	if c.Act == ActReleaseAll {
		if c.ID != nil || c.After != "" {
			return c, nil, errors.New("release-all takes no id and no after")
		}
		return c, nil, nil
	}
	if c.ID == nil || !c.ID.IsValid() {
		return c, nil, fmt.Errorf("%q needs the id of a host request (a number or a string)", c.Act)
	}
	if c.Act == ActRelease {
		if c.After != "" {
			return c, nil, errors.New("release takes no after")
		}
		return c, nil, nil
	}
	a, ok := actionNames[c.Act]
	if !ok {
		return c, nil, fmt.Errorf("unknown act %q (delay, hold, drop, cancel, cancel-silent, race, release, release-all)", c.Act)
	}
	r := &Rule{Method: "*", Action: a, Text: CommandSource}
	if c.After != "" {
		if a != ActDelay && !a.cancels() {
			return c, nil, fmt.Errorf("%s takes no after", a)
		}
		d, err := time.ParseDuration(c.After)
		if err != nil || d < 0 {
			return c, nil, fmt.Errorf("after %q is not a duration (500ms, 30s, 1m30s)", c.After)
		}
		r.After = d
	}
	if a == ActDelay && r.After <= 0 {
		return c, nil, errors.New("delay needs an after above 0 (\"after\":\"30s\")")
	}
	return c, r, nil
}

// runCommand parses and carries out one command line with act (nil: the
// proxy takes none, refused saying why). It returns the reply.
func runCommand(line []byte, act actor, refuse string, since func(time.Time) float64) trace.Record {
	at := time.Now()
	c, r, err := parseCommand(line)
	tookBack := false
	if err == nil && act == nil {
		err = errors.New(refuse)
	}
	if err == nil {
		switch {
		case c.Act == ActReleaseAll:
			act.releaseAll()
		case c.Act == ActRelease:
			tookBack, err = act.releaseOne(*c.ID, at)
		default:
			err = act.actOn(*c.ID, r, at)
		}
	}
	rec := reply(c, err, since(at))
	if tookBack {
		rec.Text = "took back what was armed on request " + c.ID.String() + ": its response will pass on untouched"
	}
	return rec
}

// reply is a command's reply record.
func reply(c Command, err error, ms float64) trace.Record {
	rec := trace.Record{MS: ms, Dir: trace.DirLocal, Event: trace.EventReply, ID: c.ID, Injected: c.Act, Code: ReplyDone}
	switch {
	case err != nil:
		rec.Code, rec.Text = ReplyRefused, err.Error()
	case c.Act == ActReleaseAll:
		rec.Text = "released every response held"
	case c.Act == ActRelease:
		rec.Text = "released the response to request " + c.ID.String()
	default:
		rec.Text = c.Act + " on request " + c.ID.String()
		if c.After != "" {
			rec.Text += " (" + c.After + ")"
		}
	}
	rec.Text = strings.ToValidUTF8(rec.Text, "\uFFFD")
	return rec
}
