// Package check is `inflight check`: the cancellation compliance battery
// (battery.go), run on the runner against one slow tool, and the table of
// the spec's requirements it judges by (requirements.go). Each finding is
// PASS, WARN or FAIL at the requirement's level, printed as a table or as
// one --json object (Report).
package check

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"inflight/client"
	"inflight/event"
	"inflight/exitcode"
	"inflight/headless"
	"inflight/redact"
	"inflight/report"
	"inflight/runner"
	"inflight/session"
	"inflight/target"
	"inflight/termsafe"
	"inflight/trace"
	"inflight/wire"
)

// Defaults of `inflight check`.
const (
	DefaultCheckTool = "slow"
	// DefaultCheckLateWindow is how long the battery watches after a cancel.
	DefaultCheckLateWindow = 2 * time.Second
	// DefaultCheckCancelAfter bounds the wait for the first progress
	// notification before the mid-way cancel.
	DefaultCheckCancelAfter = time.Second
	DefaultCheckTimeout     = 30 * time.Second
	defaultProbeTimeout     = 5 * time.Second
	maxAfterResponseWait    = time.Second
)

// defaultDemoArgs are the arguments of the demo's slow and stubborn tools
// in the battery: long enough to cancel mid-way, short enough to be quick.
const defaultDemoArgs = `{"seconds":1.5,"steps":6}`

// Options configure Run.
type Options struct {
	Target target.Target
	// Tool is a slow tool that reports progress; Args its arguments (a JSON
	// object). Tool defaults to the demo's slow, and Args, for the demo's
	// slow and stubborn, to 6 steps over 1.5s.
	Tool string
	Args json.RawMessage
	// CancelAfter bounds the wait for the first progress before the mid-way
	// cancel (default 1s).
	CancelAfter time.Duration
	// LateWindow is how long to watch after a cancel (default 2s).
	LateWindow time.Duration
	// Grace widens the window in which what follows a cancel counts as
	// having crossed it (session.Config.Grace; default 0: half the
	// measured round trip alone).
	Grace time.Duration
	// Timeout bounds each request (default 30s).
	Timeout time.Duration
	// TaskTool is the tool the tasks group runs as a task (default: the
	// first in tools/list whose execution.taskSupport allows one), TaskArgs
	// its arguments. The group runs when the server declares task support
	// or a TaskTool is named.
	TaskTool string
	TaskArgs json.RawMessage
	// NoTasks skips the tasks group.
	NoTasks bool
	// JSON prints one Report instead of a table.
	JSON bool
	// TracePath, when set, receives a trace of the whole battery.
	TracePath string
	// JUnitPath, when set, receives the report as JUnit XML (JUnit), for
	// CI; written whether the battery ran or not.
	JUnitPath string
	// OTLP, when set, is the OTLP/HTTP collector the battery's spans go
	// to (else the OTEL_EXPORTER_OTLP_* variables', if any).
	OTLP string
	// Live receives a line per step as the battery runs; nil for none.
	Live io.Writer

	// runName names the run on stderr ("inflight check", and the server's
	// name in a run over several).
	runName string
	// toolDefaulted: no Tool was named, so when the server lists no slow
	// the battery picks one (pickSlowTool).
	toolDefaulted bool
}

func (o *Options) defaults() {
	if o.Tool == "" {
		o.Tool, o.toolDefaulted = DefaultCheckTool, true
	}
	if len(bytes.TrimSpace(o.Args)) == 0 && (o.Tool == "slow" || o.Tool == "stubborn") {
		o.Args = json.RawMessage(defaultDemoArgs)
	}
	if o.CancelAfter <= 0 {
		o.CancelAfter = DefaultCheckCancelAfter
	}
	if o.LateWindow <= 0 {
		o.LateWindow = DefaultCheckLateWindow
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultCheckTimeout
	}
}

// Finding is one result of the battery.
type Finding struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Status string `json:"status"`
	// Level, Quote and Page are the requirement checked: the spec's words
	// and the page they are on.
	Level  string `json:"level"`
	Quote  string `json:"quote"`
	Page   string `json:"page"`
	Detail string `json:"detail"`
}

// SkippedCheck is a check that does not apply to the connection.
type SkippedCheck struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// Report is what `inflight check --json` prints.
type Report struct {
	// Name is the server's name in the config file, in a run over several
	// (RunAll); empty for one server.
	Name   string          `json:"name,omitempty"`
	Target string          `json:"target"`
	Tool   string          `json:"tool"`
	Args   json.RawMessage `json:"args"`
	// ToolChoice says why the battery used Tool when none was named and
	// the server lists no slow: which tool, and what in its description.
	ToolChoice      string             `json:"toolChoice,omitempty"`
	Transport       string             `json:"transport"`
	Era             string             `json:"era"`
	ProtocolVersion string             `json:"protocolVersion"`
	Server          string             `json:"server,omitempty"`
	Findings        []Finding          `json:"findings"`
	Skipped         []SkippedCheck     `json:"skipped"`
	Violations      []report.Violation `json:"violations"`
	Summary         struct {
		Pass int `json:"pass"`
		Warn int `json:"warn"`
		Fail int `json:"fail"`
		// Error counts StatusError findings: the connection was lost.
		Error int `json:"error"`
	} `json:"summary"`
	// Interrupted is set when Ctrl+C stopped the battery early.
	Interrupted bool `json:"interrupted,omitempty"`
	// Error says why the battery could not run (usage or connection
	// failure, exit code 2; the other fields are then empty), or why it
	// could not run to its end (the connection was lost part-way; the
	// findings so far are kept and the checks not run are skipped).
	Error    string `json:"error,omitempty"`
	ExitCode int    `json:"exitCode"`
}

// battery runs the checks on one connection.
type battery struct {
	o      Options
	cn     *runner.Conn
	red    *redact.Redactor
	tw     *trace.Writer
	ctx    context.Context
	modern bool
	http   bool
	params json.RawMessage

	findings []Finding
	skipped  []SkippedCheck

	// after counts, per request, the messages the tracker judged crossed,
	// late or against the rules (session.Change): the battery judges
	// nothing of its own.
	after map[wire.ID]int
	// serverRequests are IDs of requests the server sent (legacy servers
	// may cancel those); serverCancels the IDs server cancels named.
	serverRequests map[wire.ID]bool
	serverCancels  []wire.ID
	// nullErrors counts error responses with a null ID (answers to messages
	// the server could not read).
	nullErrors  int
	interrupted bool
	// finished is the request the full run completed, cancelled afterwards.
	finished wire.ID
	// lossSeen is set when the client reported the transport closed (or a
	// request could not be sent because it was), possibly before the
	// tracker has applied the closure; lossErr says why.
	// lostDuring names the step it happened in, once run noticed it; the
	// battery then stops, since nothing more can be observed.
	lossSeen   bool
	lossErr    error
	lostDuring string
	// unusable says why the named tool cannot serve the battery, which
	// then stops: its findings would only describe a typo.
	unusable string
	// midway is the mid-way cancel, judged once the connection is closed.
	midway *midwayJudgement
	// own is what the battery saw of requests' own streams (resume.go).
	own ownStreams

	// toolList is the server's tools/list once read (toolsRead), or why it
	// could not be (toolListErr). toolChoice says why the battery uses a
	// tool it picked; taskOnly, why the tool cannot serve the cancellation
	// checks (it runs only as a task).
	toolList    []runner.Tool
	toolsRead   bool
	toolListErr string
	toolChoice  string
	taskOnly    string
}

// malformedCancels are notifications/cancelled a server must survive; the
// battery injects them (runner.Conn.Inject) since the client never sends
// them.
var malformedCancels = []struct {
	what string
	raw  string
}{
	{"no params", `{"jsonrpc":"2.0","method":"notifications/cancelled"}`},
	{"no requestId", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"reason":"inflight check: a cancel without requestId"}}`},
	{"requestId null", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":null,"reason":"inflight check: a null requestId"}}`},
	{"requestId an object", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"not":"an id"},"reason":"inflight check: an object as requestId"}}`},
	{"params a string", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":"cancel everything"}`},
}

// unknownID is an ID inflight never issues (the tracker issues integers).
var unknownID = wire.StringID("never-issued-by-inflight-check")

// Run runs the cancellation compliance battery against the target and
// prints a table (or, with JSON, one Report). It returns 0 when no MUST
// failed, 1 when one did, 2 when it could not connect or was misused, and
// 4 when Ctrl+C interrupted it.
func Run(ctx context.Context, o Options, stdout, stderr io.Writer) int {
	started := time.Now()
	junit, err := createJUnit(o.JUnitPath)
	if err != nil {
		fmt.Fprintf(stderr, "inflight check: --junit: %s\n", termsafe.Line(o.Target.Redactor().String(err.Error())))
		return exitcode.Usage
	}
	rep, ran := Collect(ctx, o, stderr)
	red := o.Target.Redactor()
	junit.add(rep, started, red)
	defer junit.close(stderr, red)
	switch {
	case o.JSON:
		report.WriteJSON(stdout, rep, red)
	case ran:
		printCheckReport(stdout, rep, red)
	}
	return rep.ExitCode
}

// Collect runs the battery as Run does and returns its report without
// printing it (the live lines still go to o.Live). ran is false when the
// battery never began (a usage or connection failure, said on stderr): the
// report is then the one WriteNotRun prints.
func Collect(ctx context.Context, o Options, stderr io.Writer) (rep Report, ran bool) {
	o.defaults()
	var failed *Report
	notRun := func(code int, msg string, red *redact.Redactor) {
		r := notRunReport(o, code, msg)
		failed = &r
	}
	name := "inflight check"
	if o.runName != "" {
		name = o.runName
	}
	hr := headless.Begin(name, o.Target, stderr, notRun)
	defer hr.Close()
	fail := func(err error) (Report, bool) {
		hr.Fail(exitcode.Usage, err)
		return *failed, false
	}
	params, err := runner.ToolCallParams(o.Tool, o.Args)
	if err != nil {
		return fail(err)
	}
	if err := o.Target.Validate(); err != nil {
		return fail(err)
	}
	if err := hr.CreateTrace(o.TracePath, time.Now()); err != nil {
		return fail(err)
	}
	if err := hr.OpenSpans(o.OTLP); err != nil {
		return fail(err)
	}

	// Inject: the battery writes what the client never would (malformedCancels,
	// a cancel of unknownID or of a finished request) beside it.
	cn, err := hr.Dial(ctx, runner.Options{
		Timeout: o.Timeout, MaxTimeout: o.Timeout, ResetOnProgress: true,
		LateWindow: o.LateWindow, Grace: o.Grace,
	})
	if err != nil {
		return fail(err)
	}
	info := cn.Info()
	// http is Streamable HTTP only: HTTP+SSE has one shared stream, as stdio
	// has one pipe (the cancel a notification, no stream of the request's own).
	b := &battery{
		o: o, cn: cn, red: hr.Red, tw: hr.Trace, ctx: ctx, params: params,
		modern:         info.Era == event.EraModern,
		http:           info.Transport == event.TransportHTTP,
		after:          map[wire.ID]int{},
		serverRequests: map[wire.ID]bool{},
	}
	cn.Observe(b.observe)
	b.line("%s", report.ConnectedLine(o.Target, info, hr.Red))

	b.run()
	cn.Close()
	b.judgeMidway(time.Now())
	return b.report(), true
}

// WriteNotRun prints the --json object of a battery that never ran (a
// usage or connection failure): no findings, the exit code, and msg,
// already redacted, as its error.
func WriteNotRun(w io.Writer, o Options, code int, msg string, red *redact.Redactor) {
	report.WriteJSON(w, notRunReport(o, code, msg), red)
}

// notRunReport is the report of a battery that never ran.
func notRunReport(o Options, code int, msg string) Report {
	args := o.Args
	switch {
	case len(bytes.TrimSpace(args)) == 0:
		args = json.RawMessage("{}")
	case !json.Valid(args):
		args = json.RawMessage("null")
	}
	target := "unknown"
	if o.Target.Named() {
		target = o.Target.Describe()
	}
	return Report{Target: target, Tool: o.Tool, Args: args, Transport: report.NotRunTransport(o.Target),
		Era: "unknown", Findings: []Finding{}, Skipped: []SkippedCheck{}, Violations: []report.Violation{},
		Error: msg, ExitCode: code}
}

// batteryStep is one step of the battery and the checks it records.
type batteryStep struct {
	// name says what the step does, for "connection lost during …".
	name   string
	checks []string
	// notApplicable, when set, is why the step's checks do not apply to
	// this connection: they are skipped with it, whatever else happens.
	notApplicable string
	run           func()
	// choosesTool: the battery's tool is known after this step, and the
	// steps after it are named (and judged applicable) again.
	choosesTool bool
}

// notificationsNA is why the checks that send a cancel notification do
// not apply on modern Streamable HTTP.
const notificationsNA = "modern Streamable HTTP defines no client-to-server notifications"

func (b *battery) steps() []batteryStep {
	naDiscover, naNotify, naFinished := "", "", ""
	if !b.modern {
		naDiscover = "legacy servers open with initialize; server/discover is a modern-era method"
	}
	if !b.cn.CanInject() {
		naNotify = notificationsNA
		naFinished = notificationsNA + ": the only cancel is closing a request's own stream"
	}
	// The mid-way cancel is checked one way or the other; the checks of the
	// other way are listed as skipped, with why.
	midway, otherWay := []string{CheckCancelStops, CheckCancelNoResponse}, []string{CheckStreamClose}
	naOtherWay := "only modern Streamable HTTP cancels by closing the request's stream"
	if b.http && b.modern {
		midway, otherWay = otherWay, midway
		naOtherWay = "on modern Streamable HTTP the cancel is the closed stream, which nothing can follow: cancel.stream_close checks it"
	}
	// A tool that runs only as a task cannot serve the checks that cancel
	// an ordinary call; the tasks group runs it instead.
	naTool := b.taskOnly
	naTwoCalls := naTool
	if !b.http {
		naTwoCalls = naOwnStream
	}
	return []batteryStep{
		{name: "server/discover", checks: []string{CheckDiscover}, notApplicable: naDiscover, run: b.checkDiscover},
		{name: "the tool's presence in tools/list", run: b.checkToolListed, choosesTool: true},
		{name: "the full run of " + b.o.Tool, checks: []string{CheckProgressIncreases, CheckProgressStops}, notApplicable: naTool, run: b.checkFullRun},
		{name: "the cancel of a finished request", checks: []string{CheckCancelFinished}, notApplicable: naFinished, run: b.checkCancelFinished},
		{name: "the mid-way cancel of " + b.o.Tool, checks: midway, notApplicable: naTool, run: b.checkCancelMidway},
		{name: "the other way of cancelling", checks: otherWay, notApplicable: naOtherWay},
		{name: "two calls of " + b.o.Tool + " at once", checks: []string{CheckResumeRedelivers, CheckResumeOwnStream}, notApplicable: naTwoCalls, run: b.checkTwoCalls},
		{name: "the cancel of an unknown ID", checks: []string{CheckCancelUnknown}, notApplicable: naNotify, run: b.checkCancelUnknown},
		{name: "the malformed cancels", checks: []string{CheckCancelMalformed}, notApplicable: naNotify, run: b.checkCancelMalformed},
	}
}

// run performs the checks in order. Ctrl+C stops the battery before the
// next step. A lost connection stops it too, since nothing more can be
// observed: that is an error finding (exit code 2), and the checks that
// were not run are listed as skipped with the reason, so that a crash
// part-way never reads as a short, clean run.
func (b *battery) run() {
	steps := b.steps()
	for i := 0; i < len(steps); i++ {
		s := steps[i]
		if b.ctx.Err() != nil {
			b.interrupted = true
			break
		}
		if s.notApplicable != "" {
			b.skip(s.notApplicable, s.checks...)
			continue
		}
		s.run()
		if s.choosesTool {
			steps = b.steps() // the same steps, named for the tool now known
		}
		if b.interrupted {
			break
		}
		if b.unusable != "" {
			b.record(Finding{ID: CheckTool, Title: "the tool can serve the battery", Status: StatusError, Detail: b.unusable})
			b.skipNotRun(steps[i:], "not run: "+b.o.Tool+" cannot serve the battery")
			break
		}
		if lost, err := b.connectionLost(); lost {
			b.lostDuring = s.name
			detail := "connection lost during " + s.name
			if err != nil {
				detail += ": " + err.Error()
			}
			b.record(Finding{ID: CheckConnection, Title: "the connection stays up for the whole battery", Status: StatusError, Detail: detail})
			b.skipNotRun(steps[i:], "not run: the connection was lost during "+s.name)
			break
		}
	}
	b.checkTasks()
	b.checkServerCancels()
	b.checkServerRequests()
	b.checkCancelErrorCode()
	b.checkResponseIDs()
	b.checkProgressStreams()
}

// connectionLost reports whether the connection is gone, and why.
func (b *battery) connectionLost() (bool, error) {
	closed, err := b.cn.Tracker().TransportClosed()
	if err == nil {
		err = b.lossErr
	}
	return closed || b.lossSeen, err
}

// gone reports a lost connection to the steps, which then judge nothing:
// run reports the loss and lists their checks as not run.
func (b *battery) gone() bool {
	lost, _ := b.connectionLost()
	return lost
}

// skipNotRun lists as skipped every check of steps that has no finding.
func (b *battery) skipNotRun(steps []batteryStep, reason string) {
	done := map[string]bool{}
	for _, f := range b.findings {
		done[f.ID] = true
	}
	for _, s := range b.skipped {
		done[s.ID] = true
	}
	for _, s := range steps {
		for _, id := range s.checks {
			switch {
			case done[id]:
			case s.notApplicable != "":
				b.skip(s.notApplicable, id)
			default:
				b.skip(reason, id)
			}
		}
	}
}

// observe records what the checks need to know about every event, and
// what the tracker judged of it.
func (b *battery) observe(ev event.Event, changes []session.Change) {
	for _, ch := range changes {
		switch ch.Kind {
		case session.ChangeLate, session.ChangeCrossed, session.ChangeViolation:
			if !ch.ID.IsZero() {
				b.after[ch.ID]++
			}
		}
	}
	switch {
	case b.lossSeen:
	case ev.Kind == event.TransportClosed, ev.Kind == event.RequestFailed && errors.Is(ev.Err, client.ErrClosed):
		// The transport is gone (a request that could not be sent says so
		// too). One HTTP request losing its stream is not this: the next
		// request opens a new one.
		b.lossSeen, b.lossErr = true, ev.Err
	}
	b.noteStream(ev)
	if ev.Kind != event.Received {
		return
	}
	m := ev.Msg
	switch {
	case m.Kind == wire.KindRequest:
		b.serverRequests[m.ID] = true
	case m.IsResponse() && m.ID == wire.NullID:
		b.nullErrors++
	case m.Method == wire.NotifyCancelled && !ev.Internal:
		if c, err := wire.DecodeCancelled(m.Params); err == nil {
			b.serverCancels = append(b.serverCancels, c.RequestID)
		}
	}
}

// add records a finding: passed, or failed at the requirement's level.
func (b *battery) add(id string, ok bool, detail string) {
	b.record(newFinding(id, b.modern, b.http, ok, detail))
}

// newFinding is the finding of check id: passed (ok), or failed as the
// requirement's level says (a MUST fails, a SHOULD warns).
func newFinding(id string, modern, http, ok bool, detail string) Finding {
	req := requirementFor(id, modern, http)
	status := StatusPass
	if !ok {
		status = StatusWarn
		if req.Level == LevelMust {
			status = StatusFail
		}
	}
	return Finding{ID: id, Title: req.Title, Status: status, Level: req.Level, Quote: req.Quote, Page: req.Page, Detail: detail}
}

// inconclusive records a check that could not observe what it needs: a
// warning whatever the level, since nothing failed.
func (b *battery) inconclusive(id, detail string) {
	b.record(inconclusiveFinding(id, b.modern, b.http, detail))
}

// inconclusiveFinding is a warning whatever the check's level.
func inconclusiveFinding(id string, modern, http bool, detail string) Finding {
	f := newFinding(id, modern, http, false, detail)
	f.Status = StatusWarn
	return f
}

func (b *battery) record(f Finding) {
	b.findings = append(b.findings, f)
	b.traceFinding(f)
}

func (b *battery) traceFinding(f Finding) {
	if b.tw != nil {
		_ = b.tw.Write(trace.Record{MS: b.tw.Since(time.Now()), Dir: trace.DirLocal, Event: trace.EventFinding,
			Code: f.ID, CheckStatus: f.Status, Text: f.Detail})
	}
}

func (b *battery) skip(reason string, ids ...string) {
	for _, id := range ids {
		b.skipped = append(b.skipped, SkippedCheck{ID: id, Reason: reason})
	}
}

func (b *battery) step(format string, args ...any) {
	b.line("· "+format, args...)
}

// line prints one line of the battery's narrative to o.Live, if any.
func (b *battery) line(format string, args ...any) {
	if b.o.Live != nil {
		fmt.Fprintf(b.o.Live, format+"\n", args...)
	}
}

// request sends a tracked request and waits until it is final (bounded by
// its own timeout, which the tracker enforces).
func (b *battery) request(method string, params json.RawMessage, timeout time.Duration) *session.Request {
	r, err := b.cn.Begin(b.ctx, method, params, session.RequestOptions{Timeout: timeout, MaxTimeout: timeout})
	if err != nil {
		return r
	}
	b.finish(r)
	return r
}

// finish waits for r to be final; on Ctrl+C it cancels r and waits for the
// cancel to settle.
func (b *battery) finish(r *session.Request) {
	final := func() bool { return r.State.IsFinal() }
	if b.cn.Wait(b.ctx, final, time.Time{}) == runner.WaitInterrupted {
		b.interrupted = true
		_ = b.cn.Cancel(r.ID, runner.InterruptReason(b.ctx), session.CauseInterrupted)
		b.cn.Settle(r.ID, b.o.LateWindow+runner.SettleSlack)
	}
}

// probe checks the server still answers: a tools/list must complete.
func (b *battery) probe() (bool, string) {
	r := b.request(wire.MethodToolsList, nil, defaultProbeTimeout)
	if r.State == session.StateCompleted {
		return true, fmt.Sprintf("a following tools/list answered in %s", fmtElapsed(r.Elapsed(time.Now())))
	}
	// It answered with an error, or not within its timeout: which, and
	// after how long, not "did not answer" for both.
	switch {
	case r.Error != nil:
		return false, fmt.Sprintf("a following tools/list failed: JSON-RPC error %d %s", r.Error.Code, r.Error.Message)
	case r.LocalError != "":
		return false, fmt.Sprintf("a following tools/list failed (%s): %s", r.State, r.LocalError)
	case r.State == session.StateTimedOut:
		return false, fmt.Sprintf("a following tools/list had no answer within %s (timed out)", report.Span(defaultProbeTimeout))
	}
	return false, fmt.Sprintf("a following tools/list ended %s after %s", r.State, fmtElapsed(r.Elapsed(time.Now())))
}

// inject sends a raw message and traces it as the battery's own. On HTTP it
// returns the POST's status.
func (b *battery) inject(raw []byte) (string, error) {
	return b.cn.Inject(b.ctx, raw)
}

func (b *battery) checkDiscover() {
	b.step("server/discover")
	r := b.request(wire.MethodDiscover, nil, defaultProbeTimeout)
	if b.gone() {
		return
	}
	if r.State != session.StateCompleted {
		b.add(CheckDiscover, false, "server/discover did not complete: "+describeState(r))
		return
	}
	raw, _ := b.cn.Tracker().RawResponse(r.ID)
	msg, err := wire.Decode(raw)
	var res struct {
		SupportedVersions []string `json:"supportedVersions"`
	}
	if err != nil || json.Unmarshal(msg.Result, &res) != nil || len(res.SupportedVersions) == 0 {
		b.add(CheckDiscover, false, "server/discover answered without supportedVersions")
		return
	}
	b.add(CheckDiscover, true, "server/discover lists "+strings.Join(res.SupportedVersions, ", "))
}

// checkFullRun runs the tool to completion and checks its progress.
func (b *battery) checkFullRun() {
	b.step("running %s %s to completion", b.o.Tool, string(b.o.Args))
	r := b.request(wire.MethodToolsCall, b.params, b.o.Timeout)
	if !r.State.IsFinal() || b.interrupted || b.gone() {
		return
	}
	if r.State == session.StateFailed && r.LocalError == "" && (r.ToolError || r.Error != nil) {
		// Refused (unknown tool, invalid arguments) or failed at once:
		// there is nothing to cancel, and every finding after this would
		// only describe the mistake.
		b.unusable = "calling " + b.o.Tool + " failed (" + describeState(r) + "); the battery needs a tool that runs for a while and reports progress: check --tool and --args"
		return
	}
	answered := r.State == session.StateCompleted
	if !answered {
		why := "the tool call did not complete (" + describeState(r) + "), so its progress could not be checked"
		if r.State != session.StateConnectionLost {
			// Another tool may complete; a lost request says nothing
			// about the tool.
			why += "; name a tool that completes with --tool and --args"
		}
		b.inconclusive(CheckProgressIncreases, why)
		b.inconclusive(CheckProgressStops, why)
		return
	}
	// Watch a while after the response for progress that must not come.
	quiet := min(b.o.LateWindow, maxAfterResponseWait)
	b.cn.Watch(quiet)
	vl := b.cn.Tracker().Violations()
	count := func(code string) (int, string) {
		n, first := 0, ""
		for _, v := range vl.ForRequest(r.ID) {
			if v.Code == code {
				if n == 0 {
					first = v.Detail
				}
				n++
			}
		}
		return n, first
	}
	if r.Progress.Count == 0 {
		why := "the tool sent no progress notifications, so whether they increase could not be checked; name a tool that reports progress"
		b.inconclusive(CheckProgressIncreases, why)
	} else if n, first := count(session.ViolationProgressNotIncreasing); n > 0 {
		b.add(CheckProgressIncreases, false, fmt.Sprintf("%d of %d progress notifications did not increase (first: %s)", n, r.Progress.Count, first))
	} else {
		b.add(CheckProgressIncreases, true, fmt.Sprintf("%d progress notifications, each above the last", r.Progress.Count))
	}
	if n, first := count(session.ViolationProgressAfterCompletion); n > 0 {
		b.add(CheckProgressStops, false, fmt.Sprintf("%d progress notification%s after the response (first: %s)", n, report.Plural(n), first))
	} else {
		b.add(CheckProgressStops, true, fmt.Sprintf("no progress in the %s after the response", quiet))
	}
	b.finished = r.ID
}

// checkCancelFinished cancels the request the full run finished.
func (b *battery) checkCancelFinished() {
	id := b.finished
	if id.IsZero() {
		r := b.request(wire.MethodToolsList, nil, defaultProbeTimeout)
		if b.gone() {
			return
		}
		if r.State != session.StateCompleted {
			b.inconclusive(CheckCancelFinished, "no finished request to cancel: tools/list did not complete ("+describeState(r)+")")
			return
		}
		id = r.ID
	}
	b.step("cancelling request %s, which already finished", id)
	if _, err := b.inject(wire.Notification(wire.NotifyCancelled, wire.CancelledParams(id, "inflight check: cancelling a finished request"))); err != nil {
		b.add(CheckCancelFinished, false, "sending the cancel failed: "+err.Error())
		return
	}
	before := b.after[id]
	ok, detail := b.probe()
	if extra := b.after[id] - before; extra > 0 {
		b.add(CheckCancelFinished, false, fmt.Sprintf("the server sent %d more message%s for the finished request; %s", extra, report.Plural(extra), detail))
		return
	}
	b.add(CheckCancelFinished, ok, fmt.Sprintf("nothing more came for request %s, and %s", id, detail))
}

// checkCancelMidway cancels a running tool call and watches what follows.
func (b *battery) checkCancelMidway() {
	b.step("running %s again and cancelling it at its first progress", b.o.Tool)
	r, err := b.cn.Begin(b.ctx, wire.MethodToolsCall, b.params, session.RequestOptions{Timeout: b.o.Timeout, MaxTimeout: b.o.Timeout})
	ids := []string{CheckCancelStops, CheckCancelNoResponse}
	if b.http && b.modern {
		ids = []string{CheckStreamClose}
	}
	if b.gone() {
		return
	}
	if err != nil {
		for _, id := range ids {
			b.inconclusive(id, "the tool call could not be sent: "+err.Error())
		}
		return
	}
	started := func() bool { return r.State.IsFinal() || r.Progress.Count > 0 }
	if b.cn.Wait(b.ctx, started, time.Now().Add(b.o.CancelAfter)) == runner.WaitInterrupted {
		b.interrupted = true
	}
	if b.gone() {
		return
	}
	if r.State.IsFinal() {
		advice := "; give it longer --args"
		if r.State == session.StateConnectionLost {
			advice = ""
		}
		for _, id := range ids {
			b.inconclusive(id, fmt.Sprintf("the tool call ended (%s) before inflight could cancel it%s", describeState(r), advice))
		}
		return
	}
	hadProgress := r.Progress.Count > 0
	if err := b.cn.Cancel(r.ID, "inflight check: cancel mid-way", session.CauseUser); err != nil {
		for _, id := range ids {
			b.inconclusive(id, "cancelling failed: "+err.Error())
		}
		return
	}
	// Watch the whole late window, whatever settles the request, to see
	// everything the server still sends.
	watchFrom := time.Now()
	b.cn.Watch(b.o.LateWindow)
	if r.State == session.StateCancelRequested {
		b.cn.Settle(r.ID, runner.SettleSlack)
	}
	atEnd := r.Late
	watch := Watch{From: watchFrom, Until: time.Now(), AtEnd: &atEnd}
	lost := r.State == session.StateConnectionLost
	if closed, _ := b.cn.Tracker().TransportClosed(); closed {
		lost = true
	}
	if b.http && b.modern && !lost {
		// Asked now, while the connection is up: the judgement is made
		// after it closes.
		ok, health := b.probe()
		watch.Probe = func() (bool, string) { return ok, health }
	}
	// The findings are judged again once the battery has closed the
	// connection (judgeMidway), with what the server sent for the request
	// while the rest of the battery ran: a server still sending when the
	// watch ended must not read as one that went quiet. Until then they
	// hold their place in the report.
	b.midway = &midwayJudgement{r: r, hadProgress: hadProgress, lost: lost, watch: watch, at: len(b.findings)}
	b.findings = append(b.findings, JudgeCancel(b.cn.Tracker(), r, b.modern, b.http, hadProgress, lost, watch, b.o)...)
}

// midwayJudgement is the mid-way cancel, watched and waiting to be judged
// with everything the battery saw after it: at is the index of its
// findings in battery.findings.
type midwayJudgement struct {
	r                 *session.Request
	hadProgress, lost bool
	watch             Watch
	at                int
}

// judgeMidway judges the mid-way cancel with what arrived until the
// connection closed at closed, in the findings' place, and traces them.
func (b *battery) judgeMidway(closed time.Time) {
	m := b.midway
	if m == nil {
		return
	}
	m.watch.ObservedUntil = closed
	for i, f := range JudgeCancel(b.cn.Tracker(), m.r, b.modern, b.http, m.hadProgress, m.lost, m.watch, b.o) {
		b.findings[m.at+i] = f
		b.traceFinding(f)
	}
}

// Watch is how the battery watched a cancelled request: from when to when,
// and, on modern HTTP, how to ask the server whether it still answers.
type Watch struct {
	From, Until time.Time
	Probe       func() (ok bool, detail string)
	// AtEnd is what the tracker had recorded of the request's late traffic
	// when the watch ended, for a judgement made later (the battery judges
	// once it has closed the connection, so that what the server sent
	// while the rest of the battery ran is in the finding too); nil when
	// the judgement is made at the watch's end.
	AtEnd *session.Late
	// ObservedUntil is when inflight stopped reading what the server sent
	// (the connection closed); zero when the judgement is made at the
	// watch's end.
	ObservedUntil time.Time
}

// JudgeCancel judges what followed the cancel of r, a request cancelled
// mid-way, from what tr recorded of it: the findings of cancel.progress_stops
// and cancel.no_response, or of cancel.stream_close on modern HTTP.
// hadProgress says r had progress before the cancel; lost, that the
// connection was lost after it. It judges nothing of its own: crossed and
// late are the tracker's (session/crossing.go), so that the battery, call
// and the TUI always agree. Its words say what was seen and for how long:
// a watch that ends while the server is still sending says so, and never
// reads as the server having gone quiet.
func JudgeCancel(tr *session.Tracker, r *session.Request, modern, http, hadProgress, lost bool, watch Watch, o Options) []Finding {
	c := r.Cancel
	from := c.SignalAt
	if from.IsZero() {
		from = c.At
	}
	sp := watchSpan{from: from, watched: watch.Until.Sub(watch.From), until: watch.Until, total: r.Late,
		within: r.Late, observedUntil: watch.ObservedUntil, connection: !http}
	if watch.AtEnd != nil {
		sp.within = *watch.AtEnd
	}
	sp.spacing = report.Spacing(r.Progress, sp.within)
	j := &cancelJudge{r: r, modern: modern, http: http, sp: sp, basis: crossingBasis(tr, r, o.Grace), watched: report.Span(sp.watched)}
	if http && modern {
		j.streamClose(lost, watch.Probe)
		return j.out
	}
	j.progressStops(hadProgress, o.CancelAfter)
	j.noResponse(lost)
	return j.out
}

// cancelJudge is JudgeCancel's judgement of one cancelled request r: the
// watch after its cancel (sp), the crossing basis and the watch's length
// in words, and the findings so far.
type cancelJudge struct {
	r              *session.Request
	modern, http   bool
	sp             watchSpan
	basis, watched string
	out            []Finding
}

func (j *cancelJudge) add(id string, ok bool, detail string) {
	j.out = append(j.out, newFinding(id, j.modern, j.http, ok, detail))
}

func (j *cancelJudge) inconclusive(id, detail string) {
	j.out = append(j.out, inconclusiveFinding(id, j.modern, j.http, detail))
}

// streamClose judges cancel.stream_close, modern HTTP's cancel: nothing
// more may come for the request once its stream is closed. probe, when
// set, asks whether the server still answers.
func (j *cancelJudge) streamClose(lost bool, probe func() (bool, string)) {
	r, late, sp := j.r, j.r.Late, j.sp
	if lost {
		j.add(CheckStreamClose, false, "the connection was lost after inflight closed the stream")
		return
	}
	ok, health := true, "the server was not asked whether it still answers"
	if probe != nil {
		ok, health = probe()
	}
	nothingLater := ""
	if sp.laterProgress() == 0 && !sp.laterResponse() {
		nothingLater = sp.untilClosed(", nor until")
	}
	detail := fmt.Sprintf("inflight closed the request's SSE stream (signal %s); nothing more arrived for request %s in the %s watched, on any stream%s; %s. Whether the server stopped working is not visible on the wire",
		r.Cancel.Signal, r.ID, j.watched, nothingLater, health)
	lateResponse := late.Response && !late.Crossed
	if late.ProgressAfterCancel > 0 || lateResponse {
		// Only what the tracker judged late: what was read on the stream
		// before it closed crossed the close in flight.
		ok = false
		detail = fmt.Sprintf("after inflight closed the request's stream, %d progress notification(s) and %s for request %s arrived later; %s; %s; %s",
			late.ProgressAfterCancel, yesNo(lateResponse, "a response", "no response"), r.ID, sp.tail(), health, j.basis)
	} else if late.ProgressCrossed > 0 || late.Response {
		detail += fmt.Sprintf("; %d progress notification(s)%s crossed the close in flight", late.ProgressCrossed, yesNo(late.Response, " and the response", ""))
	}
	j.add(CheckStreamClose, ok, detail)
}

// progressStops judges cancel.progress_stops: no progress after the
// server could have seen the cancel. hadProgress says there was progress
// before it; cancelAfter is how long the battery waited for some.
func (j *cancelJudge) progressStops(hadProgress bool, cancelAfter time.Duration) {
	late, sp, watched := j.r.Late, j.sp, j.watched
	progressAfter, progressCrossed := late.ProgressAfterCancel, late.ProgressCrossed
	sig := "signal " + j.r.Cancel.Signal.String()
	switch {
	case !hadProgress && progressAfter+progressCrossed == 0:
		j.inconclusive(CheckCancelStops, fmt.Sprintf("the tool sent no progress within %s, so inflight cancelled it without seeing any; whether progress stops could not be observed (no progress in the %s watched after the cancel%s)",
			cancelAfter, watched, sp.untilClosed(", nor until")))
	case progressAfter > 0:
		crossed := ""
		if progressCrossed > 0 {
			crossed = fmt.Sprintf(" (and %d crossed the cancel in flight)", progressCrossed)
		}
		lead := ""
		if sp.stillSending() {
			// The finding itself: it went on for as long as inflight
			// looked.
			lead = fmt.Sprintf("progress did not stop in the %s watched: ", watched)
		}
		j.add(CheckCancelStops, false, fmt.Sprintf("%s%d progress notification%s arrived after the server could have seen the cancel%s (%s); %s; %s",
			lead, progressAfter, report.Plural(progressAfter), crossed, sig, sp.tail(), j.basis))
	default:
		detail := fmt.Sprintf("no progress after the cancel (%s); %s", sig, sp.tail())
		if progressCrossed > 0 {
			detail = fmt.Sprintf("%d progress notification%s crossed the cancel in flight, none came later (%s); %s; %s",
				progressCrossed, report.Plural(progressCrossed), sig, sp.tail(), j.basis)
		}
		j.add(CheckCancelStops, true, detail)
	}
}

// noResponse judges cancel.no_response: no response later than one sent
// before the server saw the cancel could have come. lost says the
// connection was lost after the cancel.
func (j *cancelJudge) noResponse(lost bool) {
	late, sp, watched, basis := j.r.Late, j.sp, j.watched, j.basis
	// After the cancel as the TUI and call say it: from when it was asked.
	after := late.AfterCancel
	afterWatch := ""
	if late.Response && !sp.within.Response {
		afterWatch = fmt.Sprintf(", once the %s watch had ended, while the battery went on", watched)
	}
	switch {
	case lost && !late.Response:
		j.add(CheckCancelNoResponse, false, "the connection was lost after the cancel")
	case !late.Response && sp.stillSending():
		// Quiet about a response while still sending progress: the
		// watch ended before anything could be said of the response.
		j.inconclusive(CheckCancelNoResponse, fmt.Sprintf("no response in the %s watched after the cancel%s, but the server was still sending progress for the request when the watch ended: a response may have come later",
			watched, sp.untilClosed(", nor until")))
	case !late.Response:
		j.add(CheckCancelNoResponse, true, fmt.Sprintf("no response in the %s watched after the cancel%s", watched, sp.untilClosed(", nor until")))
	case late.Crossed:
		j.add(CheckCancelNoResponse, true, fmt.Sprintf("a response arrived %s after the cancel: it crossed the cancel in flight, which the spec allows; %s",
			report.Fine(after), basis))
	default:
		j.add(CheckCancelNoResponse, false, fmt.Sprintf("a response arrived %s after the cancel%s, later than a reply sent before the server saw it could have (a late response); %s",
			report.Fine(after), afterWatch, basis))
	}
}

// watchSpan is what the battery saw of a cancelled request, during its
// watch and after it, for the words of a finding.
type watchSpan struct {
	from    time.Time // the cancel's signal (or, without one, its request)
	watched time.Duration
	until   time.Time // the watch's end
	// observedUntil is when inflight stopped reading (zero: the judgement
	// is made at the watch's end); connection says that was the end of
	// the connection, the one thing that carried the request's messages
	// (stdio), rather than of one of several streams (HTTP).
	observedUntil time.Time
	connection    bool
	// within is the request's late traffic at the watch's end, total all
	// of it; spacing how far apart its messages came (report.Spacing).
	within, total session.Late
	spacing       time.Duration
}

// laterProgress counts the progress that came after the watch ended.
func (s watchSpan) laterProgress() int {
	return s.total.ProgressAfterCancel + s.total.ProgressCrossed - s.within.ProgressAfterCancel - s.within.ProgressCrossed
}

// laterResponse says the response came after the watch ended.
func (s watchSpan) laterResponse() bool { return s.total.Response && !s.within.Response }

// stillSending says the server was still sending when the watch ended:
// something came after it, or the watch ended no longer after the last
// message than the messages' own spacing (report.StillSending). After a
// response, the request is over, whatever the spacing.
func (s watchSpan) stillSending() bool {
	if s.laterProgress() > 0 || s.laterResponse() {
		return true
	}
	last := s.within.LastAt
	if last.IsZero() || (s.within.Response && !s.within.ResponseAt.Before(last)) {
		return false
	}
	return report.StillSending(s.until.Sub(last), s.spacing)
}

// minReadOn is the least time read after a watch worth a mention: the few
// milliseconds of the battery's last steps add nothing to a 2s watch.
const minReadOn = 100 * time.Millisecond

// untilClosed says, when inflight read on after the watch until the
// connection closed, for how long, after lead (", nor until"): the caller
// knows nothing of what it speaks of came in that time.
func (s watchSpan) untilClosed(lead string) string {
	if s.observedUntil.IsZero() || !s.connection || s.observedUntil.Sub(s.until) < minReadOn {
		return ""
	}
	return fmt.Sprintf("%s inflight closed the connection %s after the cancel", lead, report.Span(s.observedUntil.Sub(s.from)))
}

// tail says when the last message for the request came, how long the
// watch was, and whether the server was still sending when it ended.
func (s watchSpan) tail() string {
	watched := report.Span(s.watched)
	var b strings.Builder
	if s.within.LastAt.IsZero() {
		fmt.Fprintf(&b, "nothing for the request in the %s watched after the cancel", watched)
	} else {
		fmt.Fprintf(&b, "the last message for the request in the %s watched came %s after the cancel", watched, report.Fine(s.within.LastAt.Sub(s.from)))
	}
	n := s.laterProgress()
	switch {
	case n > 0 || s.laterResponse():
		var what []string
		if n > 0 {
			what = append(what, fmt.Sprintf("%d of the progress notifications", n))
		}
		if s.laterResponse() {
			what = append(what, "the response")
		}
		fmt.Fprintf(&b, "; still sending when the watch ended: %s came after it, while the battery went on, the last %s after the cancel",
			strings.Join(what, " and "), report.Fine(s.total.LastAt.Sub(s.from)))
	case s.stillSending():
		fmt.Fprintf(&b, "; still sending when the watch ended, %s after that message", report.Fine(s.until.Sub(s.within.LastAt)))
		if s.spacing > 0 {
			fmt.Fprintf(&b, " (its messages came about %s apart)", report.Fine(s.spacing))
		}
	default:
		b.WriteString(s.untilClosed("; nothing more until"))
	}
	return b.String()
}

// crossingBasis says what "crossed" was judged by, for a finding.
func crossingBasis(tr *session.Tracker, r *session.Request, grace time.Duration) string {
	w := tr.CrossingWindow()
	if r.Late.Window > 0 {
		w = r.Late.Window // the window the judgement used
	}
	rt := tr.RoundTrip()
	return report.CrossingBasis(w, rt.D, rt.Source, rt.Samples, grace)
}

func (b *battery) checkCancelUnknown() {
	b.step("cancelling ID %s, which inflight never issued", unknownID)
	if _, err := b.inject(wire.Notification(wire.NotifyCancelled, wire.CancelledParams(unknownID, "inflight check: an ID never issued"))); err != nil {
		b.add(CheckCancelUnknown, false, "sending the cancel failed: "+err.Error())
		return
	}
	ok, detail := b.probe()
	b.add(CheckCancelUnknown, ok, detail)
}

func (b *battery) checkCancelMalformed() {
	b.step("sending %d malformed cancels", len(malformedCancels))
	errorsBefore := b.nullErrors
	var what, statuses []string
	for _, m := range malformedCancels {
		what = append(what, m.what)
		status, err := b.inject([]byte(m.raw))
		if err != nil {
			b.add(CheckCancelMalformed, false, fmt.Sprintf("sending the malformed cancel (%s) failed: %v", m.what, err))
			return
		}
		if status != "" {
			// On HTTP the POST's status says whether the server accepted it.
			statuses = append(statuses, m.what+" → "+firstWord(status, 2))
		}
	}
	ok, detail := b.probe()
	detail = "after cancels with " + strings.Join(what, ", ") + ": " + detail
	if n := b.nullErrors - errorsBefore; n > 0 {
		detail += fmt.Sprintf("; the server answered %d of them with an error (id null)", n)
	}
	if len(statuses) > 0 {
		detail += "; " + strings.Join(statuses, ", ")
	}
	b.add(CheckCancelMalformed, ok, detail)
}

func (b *battery) checkServerCancels() {
	if b.modern {
		n := b.cn.Tracker().Violations().Count(session.ViolationServerCancelNotListen)
		if n > 0 {
			b.add(CheckServerCancel, false, fmt.Sprintf("the server sent notifications/cancelled %d time%s for requests that are not subscriptions/listen", n, report.Plural(n)))
			return
		}
		b.add(CheckServerCancel, true, describeServerCancels(len(b.serverCancels)))
		return
	}
	// The tracker judges each: a cancel of an ID the server never used
	// for a request of its own (one of inflight's above all).
	if n, first := b.violations(session.ViolationServerCancelUnknown); n > 0 {
		b.add(CheckServerCancel, false, fmt.Sprintf("%d notifications/cancelled named no request of the server's own (first: %s)", n, first))
		return
	}
	b.add(CheckServerCancel, true, describeServerCancels(len(b.serverCancels)))
}

// checkServerRequests judges, over the whole battery, the requests the
// server sent: none are allowed in the modern era (the client records each
// as a violation and does not answer it). Legacy servers may send them
// (sampling, elicitation, roots/list), so there is nothing to judge.
func (b *battery) checkServerRequests() {
	if !b.modern {
		b.skip("legacy servers may send requests (ping, roots/list, sampling, elicitation)", CheckServerRequests)
		return
	}
	vl := b.cn.Tracker().Violations()
	n := vl.Count(session.ViolationServerRequestModern)
	first := ""
	for i := 0; i < vl.Len() && first == ""; i++ {
		if v := vl.At(i); v.Code == session.ViolationServerRequestModern {
			first = v.Detail
		}
	}
	if n > 0 {
		detail := fmt.Sprintf("the server sent %d request%s; inflight answered none", n, report.Plural(n))
		if first != "" {
			detail += " (first: " + first + ")"
		}
		b.add(CheckServerRequests, false, detail)
		return
	}
	b.add(CheckServerRequests, true, "the server sent no requests during the battery")
}

// violations counts the violations of the whole battery with one of
// codes, and the first one's detail.
func (b *battery) violations(codes ...string) (int, string) {
	vl := b.cn.Tracker().Violations()
	n, first := 0, ""
	for _, c := range codes {
		n += vl.Count(c)
	}
	for i := 0; i < vl.Len() && first == "" && n > 0; i++ {
		if v := vl.At(i); slices.Contains(codes, v.Code) {
			first = v.Detail
		}
	}
	return n, first
}

// checkCancelErrorCode judges, over the whole battery, the error
// responses to requests inflight cancelled: one whose code is no JSON-RPC
// code is a cancellation made up as an error (the tracker flags each,
// session/misaddressed.go). On modern Streamable HTTP the cancel closes
// the request's stream, so no answer can follow it.
func (b *battery) checkCancelErrorCode() {
	if b.http && b.modern {
		b.skip("on modern Streamable HTTP the cancel closes the request's stream: no answer can follow it", CheckCancelErrorCode)
		return
	}
	if n, first := b.violations(session.ViolationCancelledErrorCode); n > 0 {
		b.add(CheckCancelErrorCode, false, fmt.Sprintf("%d cancelled request%s answered with an error whose code is no JSON-RPC code, a cancellation made up as an error (first: %s)",
			n, report.Plural(n), first))
		return
	}
	if b.midway == nil {
		why := "no request was cancelled mid-way, so no answer to a cancel could be seen"
		switch {
		case b.unusable != "":
			why = "not run: " + b.o.Tool + " cannot serve the battery"
		case b.lostDuring != "":
			why = "not run: the connection was lost during " + b.lostDuring
		}
		b.skip(why, CheckCancelErrorCode)
		return
	}
	r := b.midway.r
	switch {
	case r.Late.Response && r.Error != nil:
		b.add(CheckCancelErrorCode, true, fmt.Sprintf("the cancelled request was answered with error %d %q, a code a client can read (an answer all the same: %s)",
			r.Error.Code, r.Error.Message, CheckCancelNoResponse))
	case r.Late.Response:
		b.add(CheckCancelErrorCode, true, "the cancelled request was answered with a result, not an error (an answer all the same: "+CheckCancelNoResponse+")")
	default:
		b.add(CheckCancelErrorCode, true, "no error answered the cancelled request")
	}
}

// checkResponseIDs judges, over the whole battery, whether every
// response named a request inflight had sent, once: an answer under
// another request's ID (one already answered) or under an ID inflight
// never issued leaves the request it was meant for waiting.
func (b *battery) checkResponseIDs() {
	n, first := b.violations(session.ViolationUnknownResponseID, session.ViolationDuplicateResponse)
	if n > 0 {
		b.add(CheckResponseIDs, false, fmt.Sprintf("%d response%s named a request inflight never issued or one already answered (first: %s)", n, report.Plural(n), first))
		return
	}
	b.add(CheckResponseIDs, true, "every response named a request inflight had sent, and answered it once")
}

func describeServerCancels(n int) string {
	if n == 0 {
		return "the server sent no notifications/cancelled during the battery"
	}
	return fmt.Sprintf("the server sent %d notifications/cancelled, each for a request it may cancel", n)
}

// report builds the battery's CheckReport.
func (b *battery) report() Report {
	info := b.cn.Info()
	rep := Report{
		Target: b.o.Target.Describe(), Tool: b.o.Tool, Args: b.o.Args, ToolChoice: b.toolChoice,
		Transport: info.Transport.String(), Era: info.Era.String(), ProtocolVersion: info.ProtocolVersion,
		Server: report.ServerLabel(info), Findings: b.findings, Skipped: b.skipped,
		Interrupted: b.interrupted,
	}
	if rep.Findings == nil {
		rep.Findings = []Finding{}
	}
	if rep.Skipped == nil {
		rep.Skipped = []SkippedCheck{}
	}
	if len(rep.Args) == 0 {
		rep.Args = json.RawMessage("{}")
	}
	rep.Violations = report.Violations(b.cn.Tracker().Violations())
	for _, f := range b.findings {
		switch f.Status {
		case StatusPass:
			rep.Summary.Pass++
		case StatusWarn:
			rep.Summary.Warn++
		case StatusFail:
			rep.Summary.Fail++
		case StatusError:
			rep.Summary.Error++
			rep.Error = f.Detail
		}
	}
	// A MUST that failed is a verdict even when the connection was lost
	// afterwards (a server that crashes on a malformed cancel fails that
	// check); a lost connection without one is a connection failure, not
	// a pass, since the checks after it never ran.
	switch {
	case rep.Summary.Fail > 0:
		rep.ExitCode = exitcode.Failed
	case b.lostDuring != "", b.unusable != "":
		rep.ExitCode = exitcode.Usage
	case b.interrupted:
		rep.ExitCode = exitcode.Cancelled
	}
	return rep
}

func printCheckReport(w io.Writer, rep Report, red *redact.Redactor) {
	safe := func(s string) string { return termsafe.Line(red.String(s)) }
	fmt.Fprintln(w)
	server := rep.Server
	if server == "" {
		server = "unnamed server"
	}
	fmt.Fprintf(w, "inflight check: %s %s on %s\n", safe(rep.Tool), safe(string(rep.Args)), safe(rep.Target))
	fmt.Fprintf(w, "%s, %s era, protocol %s, %s\n", rep.Transport, rep.Era, safe(rep.ProtocolVersion), safe(server))
	if rep.ToolChoice != "" {
		fmt.Fprintf(w, "tool: %s\n", safe(rep.ToolChoice))
	}
	fmt.Fprintln(w)
	width, statusWidth := 0, 0
	for _, f := range rep.Findings {
		width = max(width, len(f.ID))
		statusWidth = max(statusWidth, len(f.Status))
	}
	for _, f := range rep.Findings {
		fmt.Fprintf(w, "%-*s  %-*s  %s\n", statusWidth, f.Status, width, f.ID, safe(f.Detail))
		if f.Quote != "" {
			// An error finding (the connection lost) quotes no requirement.
			fmt.Fprintf(w, "%*s  %-*s  %s %s: %q\n", statusWidth, "", width, "", f.Level, f.Page, f.Quote)
		}
	}
	if len(rep.Skipped) > 0 {
		reasons := map[string][]string{}
		var order []string
		for _, s := range rep.Skipped {
			if _, ok := reasons[s.Reason]; !ok {
				order = append(order, s.Reason)
			}
			reasons[s.Reason] = append(reasons[s.Reason], s.ID)
		}
		fmt.Fprintln(w)
		for _, r := range order {
			fmt.Fprintf(w, "skipped %s: %s\n", strings.Join(reasons[r], ", "), r)
		}
	}
	if len(rep.Violations) > 0 {
		fmt.Fprintln(w)
		counts := map[string]int{}
		for _, v := range rep.Violations {
			counts[v.Code]++
		}
		codes := make([]string, 0, len(counts))
		for c := range counts {
			codes = append(codes, c)
		}
		sort.Strings(codes)
		for _, c := range codes {
			fmt.Fprintf(w, "protocol violations: %s ×%d\n", c, counts[c])
		}
	}
	fmt.Fprintf(w, "\n%d passed, %d warning%s, %d failed", rep.Summary.Pass, rep.Summary.Warn, report.Plural(rep.Summary.Warn), rep.Summary.Fail)
	if rep.Summary.Error > 0 {
		fmt.Fprint(w, "; the battery did not finish: ", safe(rep.Error))
	}
	if rep.Interrupted {
		fmt.Fprint(w, " (interrupted)")
	}
	fmt.Fprintln(w)
}

// fmtElapsed writes a short duration to a precision that still says
// something: 0.4ms, not 0s.
func fmtElapsed(d time.Duration) string {
	if d < time.Millisecond {
		return fmt.Sprintf("%.1fms", float64(d.Microseconds())/1000)
	}
	return d.Round(time.Millisecond).String()
}

func describeState(r *session.Request) string {
	s := r.State.String()
	switch {
	case r.State == session.StateTimedOut && r.Cancel != nil:
		// How long it was given: "timed_out" alone does not say (and
		// when it ended includes the late window after the timeout).
		s += " after " + report.Span(r.Cancel.At.Sub(r.Created))
	case r.Error != nil:
		s += fmt.Sprintf(": JSON-RPC error %d %s", r.Error.Code, r.Error.Message)
	case r.LocalError != "":
		s += ": " + r.LocalError
	case r.ToolError:
		s += ": a tool error result"
	}
	return s
}

func yesNo(b bool, yes, no string) string {
	if b {
		return yes
	}
	return no
}

// firstWord returns the first n words of s.
func firstWord(s string, n int) string {
	f := strings.Fields(s)
	if len(f) > n {
		f = f[:n]
	}
	return strings.Join(f, " ")
}
