// Package call is `inflight call`: one request sent and followed to its end
// on the runner — progress as it comes (the live line, live.go), the cancel
// (--cancel-after, a timeout, Ctrl+C), late traffic — then its summary for
// people or its one --json object (CallReport), and the exit code.
package call

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"inflight/answer"
	"inflight/event"
	"inflight/exitcode"
	"inflight/headless"
	"inflight/redact"
	"inflight/report"
	"inflight/runner"
	"inflight/session"
	"inflight/target"
	"inflight/termsafe"
	"inflight/wire"
)

// Defaults of `inflight call`.
const (
	DefaultCallTimeout    = session.DefaultTimeout
	DefaultCallMaxTimeout = session.DefaultMaxTimeout
	DefaultLateWindow     = session.DefaultLateWindow
)

// Options configure Run.
type Options struct {
	Target target.Target
	// Method and Params are the request (Params a JSON object, or empty).
	// runner.ToolCallParams builds them for --tool NAME --args JSON.
	Method string
	Params json.RawMessage
	// Tool is the tool --tool named (Params then carry it). In the legacy
	// era, without Task, inflight asks tools/list whether the tool runs
	// only as a task, and then asks for one (Report.TaskRequiredByTool).
	Tool string

	// Timeout is the request's timeout (default 60s), pushed back by
	// progress when ResetOnProgress is set; MaxTimeout is the limit nothing
	// pushes back (default 10m).
	Timeout         time.Duration
	MaxTimeout      time.Duration
	ResetOnProgress bool
	// CancelAfter cancels the request from the client after that long (0:
	// never), with the signal its transport and era require.
	CancelAfter time.Duration
	// LateWindow is how long to keep watching after a cancel for a late
	// response or progress before giving up on late traffic (default 5s).
	LateWindow time.Duration
	// Grace widens the window in which what follows the cancel counts as
	// having crossed it (session.Config.Grace; default 0).
	Grace time.Duration

	// Task asks for a task in the legacy era (the task field of a
	// tools/call, with TaskTTL when set); in the modern era the server
	// decides, and the client always declares the tasks extension.
	Task    bool
	TaskTTL time.Duration

	// AnswerFile, Decline and Roots answer the server's questions
	// (package answer): a modern request's input requests, retried round
	// after round up to MaxRounds, and a legacy server's own requests.
	// With none of them the request ends input_required, and the legacy
	// server's requests are refused, as before.
	AnswerFile string
	Decline    bool
	Roots      []string
	MaxRounds  int
	// LogLevel asks for the server's log lines: the modern per-request
	// _meta io.modelcontextprotocol/logLevel, or a logging/setLevel first
	// in the legacy era ("" asks for none).
	LogLevel string

	// JSON prints exactly one JSON object (a Report) on stdout at the end.
	JSON bool
	// TracePath, when set, receives a trace of the run (JSON Lines).
	TracePath string
	// HARPath, when set, receives the run's HTTP exchanges as an HAR.
	HARPath string
	// OTLP, when set, is the OTLP/HTTP collector the run's spans go to
	// (else the OTEL_EXPORTER_OTLP_* variables', if any).
	OTLP string

	// Live receives the run as it happens — the connection, progress,
	// the cancel, late traffic — for a person to watch; nil for nothing.
	// Bar draws progress as a bar redrawn in place, for a terminal; without
	// it progress is printed as plain lines.
	Live io.Writer
	Bar  bool
}

func (o *Options) defaults() {
	if o.Timeout <= 0 {
		o.Timeout = DefaultCallTimeout
	}
	if o.MaxTimeout <= 0 {
		o.MaxTimeout = DefaultCallMaxTimeout
	}
	if o.LateWindow <= 0 {
		o.LateWindow = DefaultLateWindow
	}
}

// Report is what `inflight call --json` prints: one JSON object. The
// README documents every field.
type Report struct {
	// ID is the request's JSON-RPC ID (null when it was never sent).
	ID              *wire.ID `json:"id"`
	Method          string   `json:"method"`
	Target          string   `json:"target,omitempty"`
	Transport       string   `json:"transport"`
	Era             string   `json:"era"`
	ProtocolVersion string   `json:"protocolVersion"`
	Server          string   `json:"server,omitempty"`
	// State is the request's final state: completed, failed, cancelled,
	// timed_out, connection_lost, input_required, ended_by_server; or
	// not_sent when it never left (usage or connection failure).
	State     string `json:"state"`
	ExitCode  int    `json:"exitCode"`
	ElapsedMs int64  `json:"elapsedMs"`
	// Progress is what the server reported before any cancel.
	Progress ProgressReport `json:"progress"`
	// Cancel is set when the request was cancelled (by --cancel-after, a
	// timeout or Ctrl+C).
	Cancel *CancelReport `json:"cancel"`
	// Late is set when a cancel was requested or the request was lost: what
	// still arrived afterwards. A late response's content goes here, never
	// in Result.
	Late *LateReport `json:"late"`
	// Result is the result of a timely successful response (a tool error
	// result included), else null.
	Result json.RawMessage `json:"result"`
	// ToolError is set when a tools/call result said "isError": true.
	ToolError bool `json:"toolError,omitempty"`
	// TaskRequiredByTool says the call asked for a task without --task:
	// tools/list said the tool runs only as a task (execution.taskSupport
	// "required").
	TaskRequiredByTool bool `json:"taskRequiredByTool,omitempty"`
	// Subscription, for subscriptions/listen only: whether the server
	// acknowledged it and how many notifications it delivered.
	Subscription *SubscriptionReport `json:"subscription,omitempty"`
	// Task is set when the server answered with a task handle.
	Task *TaskReport `json:"task,omitempty"`
	// Error is the JSON-RPC error of a timely response, or a failure
	// inflight saw itself (local: true), else null.
	Error *ErrorReport `json:"error"`
	// Rounds is every round of a multi round-trip request (rounds.go),
	// ServerRequests the legacy server's own requests during it, Logs its
	// notifications/message lines (omitted when there were none).
	Rounds         []RoundReport         `json:"rounds,omitempty"`
	ServerRequests []ServerRequestReport `json:"serverRequests,omitempty"`
	// ServerRequestsDropped counts the server's requests during it that
	// ServerRequests does not list: the oldest ended ones past 1000.
	ServerRequestsDropped int                `json:"serverRequestsDropped,omitempty"`
	Logs                  *LogsReport        `json:"logs,omitempty"`
	Violations            []report.Violation `json:"violations"`
}

// ProgressReport summarises the progress notifications of a request.
type ProgressReport struct {
	Count   int      `json:"count"`
	Last    *float64 `json:"last"`
	Total   *float64 `json:"total"`
	Message string   `json:"message"`
}

// CancelReport describes a cancellation.
type CancelReport struct {
	// AtMs is when the cancel was requested, since the request started.
	AtMs int64 `json:"atMs"`
	// Signal is what the client sent: "notifications/cancelled" or
	// "stream_closed"; null when nothing needed sending (the answer was
	// already in).
	Signal *string `json:"signal"`
	Reason string  `json:"reason"`
	// Cause is user, timeout, interrupted or shutdown; Limit, for a
	// timeout, is timeout or max.
	Cause string `json:"cause"`
	Limit string `json:"limit,omitempty"`
}

// LateReport describes traffic after a cancel (or after a loss).
type LateReport struct {
	Response              bool   `json:"response"`
	ResponseAfterCancelMs *int64 `json:"responseAfterCancelMs"`
	// Crossed: the response cannot have been sent after the server saw the
	// cancel (it arrived within the crossing window of it).
	Crossed bool `json:"crossed"`
	// ProgressAfterCancel counts late progress (after the crossing
	// window); ProgressCrossed, progress within it.
	ProgressAfterCancel int `json:"progressAfterCancel"`
	ProgressCrossed     int `json:"progressCrossed"`
	// WatchedMs is how long after the cancel (or the loss) inflight read
	// what the server sent, until it closed the connection: what "no
	// response" and "no progress" were seen over.
	WatchedMs int64 `json:"watchedMs"`
	// LastAfterCancelMs is when the last message for the request came
	// after the cancel (null: none came).
	LastAfterCancelMs *int64 `json:"lastAfterCancelMs"`
	// StillSending says the server was still sending when the watch ended:
	// the watch ended no longer after that last message than the
	// request's messages came apart (report.StillSending).
	StillSending bool `json:"stillSending"`
	// CrossingWindowMs is the window crossings were judged by: half the
	// quickest measured round trip (RoundTripMs, from RoundTripSource)
	// plus --grace.
	CrossingWindowMs float64  `json:"crossingWindowMs"`
	RoundTripMs      *float64 `json:"roundTripMs"`
	RoundTripSource  string   `json:"roundTripSource,omitempty"`
	// Result and Error are the late response's content.
	Result json.RawMessage `json:"result,omitempty"`
	Error  *ErrorReport    `json:"error,omitempty"`
}

// ErrorReport is a JSON-RPC error, or a local failure.
type ErrorReport struct {
	Code    *int            `json:"code,omitempty"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
	// Local marks a failure inflight saw (HTTP error, lost connection)
	// rather than one the server reported.
	Local bool `json:"local,omitempty"`
}

// ExitCodeFor maps a request's final state to the exit code of call.
func ExitCodeFor(s session.State) int {
	switch s {
	case session.StateCompleted, session.StateEndedByServer:
		return exitcode.Completed
	case session.StateTimedOut:
		return exitcode.TimedOut
	case session.StateCancelled, session.StateCancelRequested:
		return exitcode.Cancelled
	case session.StateConnectionLost:
		return exitcode.ConnectionLost
	}
	return exitcode.Failed
}

// Run sends one request and follows it to the end: progress as it comes,
// the cancel when --cancel-after or Ctrl+C (ctx) asks for one, late traffic
// for the late window after a cancel, then a summary (or, with JSON, one
// Report). It returns the exit code.
func Run(ctx context.Context, o Options, stdout, stderr io.Writer) int {
	o.defaults()
	var notSent func(code int, msg string, red *redact.Redactor)
	if o.JSON {
		notSent = func(code int, msg string, red *redact.Redactor) { WriteNotSent(stdout, o, code, msg, red) }
	}
	hr := headless.Begin("inflight call", o.Target, stderr, notSent)
	defer hr.Close()
	red := hr.Red
	if err := o.checkRequest(); err != nil {
		return hr.Fail(exitcode.Usage, err)
	}
	started := time.Now()
	if err := hr.CreateTrace(o.TracePath, started); err != nil {
		return hr.Fail(exitcode.Usage, err)
	}
	if err := hr.CreateHAR(o.HARPath, started); err != nil {
		return hr.Fail(exitcode.Usage, err)
	}
	if err := hr.OpenSpans(o.OTLP); err != nil {
		return hr.Fail(exitcode.Usage, err)
	}
	live := newLiveView(o.Live, o.Bar, red)
	book, err := o.book()
	if err != nil {
		return hr.Fail(exitcode.Usage, err)
	}
	ro := runner.Options{
		Timeout: o.Timeout, MaxTimeout: o.MaxTimeout, ResetOnProgress: o.ResetOnProgress,
		LateWindow: o.LateWindow, Grace: o.Grace,
	}
	runnerAnswers(&ro, book, o.MaxRounds)
	cn, err := hr.Dial(ctx, ro)
	if err != nil {
		return hr.Fail(exitcode.Usage, err)
	}
	live.connected(o.Target, cn.Info())

	run := &callRun{cn: cn, live: live}
	cn.Observe(run.observe)
	run.lookUpTaskSupport(ctx, o)
	params, err := run.params(ctx, o)
	if err != nil {
		cn.Close()
		return hr.Fail(exitcode.Usage, err)
	}
	req, err := cn.Begin(ctx, o.Method, params, session.RequestOptions{})
	run.req = req
	if err == nil {
		live.sent(req)
	}
	run.follow(ctx, o, book)
	run.hintTaskRequired(o)
	run.hintTool(o)
	cn.Close()
	live.finish()

	var response *wire.Message
	if run.haveResponse {
		response = &run.response
	}
	rep := ReportOf(cn.Info(), cn.Tracker(), req, response, time.Now())
	rep.TaskRequiredByTool = run.taskRequired
	if o.JSON {
		report.WriteJSON(stdout, rep, red)
	} else {
		printCallSummary(stdout, rep, red)
	}
	if err := hr.FlushTrace(); err != nil {
		fmt.Fprintf(stderr, "inflight call: %s\n", termsafe.Line(red.String(err.Error())))
	}
	return rep.ExitCode
}

// checkRequest refuses a request that cannot be sent: no method, or
// params that are not a JSON object.
func (o *Options) checkRequest() error {
	if o.Method == "" {
		return errors.New("give a METHOD (and PARAMS_JSON), or --tool NAME --args JSON")
	}
	if len(bytes.TrimSpace(o.Params)) > 0 {
		if err := runner.CheckObject(o.Params, "PARAMS_JSON"); err != nil {
			return err
		}
	}
	return nil
}

// params are the request's params as they go: o.Params with --task's
// field (legacy era; a modern server decides for itself) and
// --log-level's.
func (run *callRun) params(ctx context.Context, o Options) (json.RawMessage, error) {
	params := o.Params
	if (o.Task || run.taskRequired) && o.Method == wire.MethodToolsCall {
		if run.cn.Info().Era == event.EraModern {
			run.live.line("  --task: in the modern era the server decides whether a tools/call becomes a task; inflight declared the tasks extension")
		} else {
			var err error
			if params, err = runner.WithTask(params, o.TaskTTL); err != nil {
				return nil, err
			}
		}
	}
	return run.withLogLevel(ctx, o.LogLevel, params)
}

// follow waits for the request's end — answering each round of a multi
// round-trip request from book, cancelling at --cancel-after or on ctx's
// end — then for a pending cancel to settle and a task's last word.
func (run *callRun) follow(ctx context.Context, o Options, book *answer.Book) {
	cn, req := run.cn, run.req
	var cancelAt time.Time
	if o.CancelAfter > 0 {
		cancelAt = req.Created.Add(o.CancelAfter)
	}
	// A multi round-trip request stops the wait at each input_required
	// (waiting_input), is answered from the book, and goes on.
	final := func() bool {
		return req.State.IsFinal() || req.State == session.StateWaitingInput || run.taskAsksNew(book)
	}
	for {
		res := cn.Wait(ctx, final, cancelAt)
		if res == runner.WaitDone && req.State == session.StateWaitingInput {
			run.answerRound(ctx, book)
			continue
		}
		if res == runner.WaitDone && !req.State.IsFinal() && run.taskAsksNew(book) {
			run.answerTask(book)
			continue
		}
		switch res {
		case runner.WaitDeadline:
			run.cancel(fmt.Sprintf("cancelled by inflight call --cancel-after %s", o.CancelAfter), session.CauseUser)
		case runner.WaitInterrupted:
			run.cancel(runner.InterruptReason(ctx), session.CauseInterrupted)
		}
		break
	}
	if !req.State.IsFinal() {
		// A cancel is pending: the tracker settles it when the stream
		// closes, a late response comes, or the late window passes.
		cn.Settle(req.ID, o.LateWindow+runner.SettleSlack)
	}
	if tk := req.Task; tk != nil && tk.Pending() {
		// The task's tasks/cancel or tasks/result is still out: its
		// acknowledgement and outcome belong in the report.
		cn.Wait(ctx, func() bool { return !tk.Pending() }, time.Now().Add(o.LateWindow+runner.SettleSlack))
	}
}

// lookUpTaskSupport asks tools/list, for a legacy server that declares
// task-augmented tools and a --tool called without --task, whether the
// tool runs only as a task: such a call sent without one is refused
// (-32601), so it goes as a task, and the run says so. A modern server
// decides by itself, and a lookup that fails leaves the call as asked.
func (run *callRun) lookUpTaskSupport(ctx context.Context, o Options) {
	info := run.cn.Info()
	if o.Tool == "" || o.Task || info.Era != event.EraLegacy || !runner.DeclaresTaskTools(info.Capabilities) {
		return
	}
	tool, found, err := run.cn.FindTool(ctx, o.Tool, toolLookupTimeout)
	switch {
	case err != nil:
		run.live.line("  could not learn whether %s runs only as a task (%s): calling it as asked", run.live.safe(o.Tool), run.live.safe(err.Error()))
	case found && tool.RequiresTask():
		run.taskRequired = true
		run.live.line("  %s runs only as a task (tools/list: execution.taskSupport \"required\"): asking for one", run.live.safe(o.Tool))
	}
}

// toolLookupTimeout bounds the tools/list of lookUpTaskSupport.
const toolLookupTimeout = 5 * time.Second

// hintTool says, when a method without a slash is unknown to the server,
// that it may be a tool: `inflight call slow` sends a method "slow".
func (run *callRun) hintTool(o Options) {
	req := run.req
	if o.Tool != "" || strings.Contains(req.Method, "/") || req.Error == nil || req.Error.Code != wire.CodeMethodNotFound {
		return
	}
	name := run.live.safe(req.Method)
	run.live.line("  \"%s\" is no method of the server (methods have a slash: tools/call, resources/read …); to call the tool %s: inflight call --tool %s", name, name, name)
}

// hintTaskRequired says, when a legacy server that declares tasks refused
// a tools/call sent without one as an unknown method, that the tool may
// require a task: a legacy server MUST refuse such a call with -32601.
func (run *callRun) hintTaskRequired(o Options) {
	req, info := run.req, run.cn.Info()
	if !o.Task && !run.taskRequired && req.Method == wire.MethodToolsCall && req.Error != nil && req.Error.Code == wire.CodeMethodNotFound &&
		info.Era == event.EraLegacy && bytes.Contains(info.Capabilities, []byte(`"tasks"`)) {
		run.live.line("  the server declares task-augmented tools: if this tool requires a task (execution.taskSupport \"required\"), call it with --task")
	}
}

// WriteNotSent prints the --json object of a request that was never sent
// (a usage or connection failure): state not_sent, the exit code, and msg,
// already redacted, as a local error.
func WriteNotSent(w io.Writer, o Options, code int, msg string, red *redact.Redactor) {
	rep := Report{Method: o.Method, Transport: report.NotRunTransport(o.Target), Era: "unknown", State: "not_sent",
		ExitCode: code, Error: &ErrorReport{Message: msg, Local: true}, Violations: []report.Violation{}}
	report.WriteJSON(w, rep, red)
}

// callRun follows the one request of a call.
type callRun struct {
	cn   *runner.Conn
	req  *session.Request
	live *liveView
	// response and late are the first response to the request, kept whole
	// (the tracker keeps a clipped error and the raw bytes only while its
	// store has room).
	response     wire.Message
	haveResponse bool
	// progress and notifications count the timely progress and
	// subscription notifications shown.
	progress, notifications int
	// taskChanges counts the task status changes shown; taskAck says the
	// tasks/cancel acknowledgement was.
	taskChanges int
	taskAck     bool
	// taskRequired: tools/list said the tool runs only as a task, so the
	// call asked for one without --task.
	taskRequired bool
	// taskAsked are the keys of a modern task's inputRequests the run
	// looked up in the answer book, answered or not: each is asked once
	// in the task's life.
	taskAsked map[string]bool
}

func (run *callRun) cancel(reason string, cause session.CancelCause) {
	if err := run.cn.Cancel(run.req.ID, reason, cause); err != nil {
		run.live.note("cancel: " + err.Error())
	}
}

// observe runs after every event the tracker applied, with what it
// changed; it prints what the run's reader should see.
func (run *callRun) observe(ev event.Event, changes []session.Change) {
	r := run.req
	if r == nil {
		return
	}
	run.serverTraffic(ev) // answering.go
	if ev.Kind == event.Received && ev.Msg.IsResponse() && ev.Msg.ID == r.ID && !run.haveResponse {
		run.response, run.haveResponse = ev.Msg, true
	}
	if ev.Kind == event.CancelSent && ev.RequestID == r.ID && ev.Signal != event.SignalNone {
		run.live.cancelSent(r)
	}
	timely := true
	for _, ch := range changes {
		if ch.ID != r.ID {
			continue
		}
		switch ch.Kind {
		case session.ChangeState:
			switch ch.To {
			case session.StateCancelRequested:
				run.live.cancelRequested(r)
			case session.StateListening:
				run.live.line("  acknowledged: the subscription stays open until the server ends it or it is cancelled")
			}
		case session.ChangeLate, session.ChangeCrossed:
			timely = false
			switch ch.What {
			case session.ArrivalProgress:
				if ch.Kind == session.ChangeLate {
					run.live.lateProgress(r, ev)
				} else {
					run.live.crossedProgress(r, ev)
				}
			case session.ArrivalResponse:
				run.live.lateResponse(r)
			}
		}
	}
	if !timely || ev.Kind != event.Received {
		return
	}
	if r.Progress.Count != run.progress {
		run.progress = r.Progress.Count
		run.live.progress(r, ev.Time)
	}
	if tk := r.Task; tk != nil && len(tk.History) != run.taskChanges {
		for _, c := range tk.History[run.taskChanges:] {
			s := fmt.Sprintf("  ⧗ task %s %s", run.live.safe(tk.ID), c.Status)
			if c.Message != "" {
				s += fmt.Sprintf(" %q", run.live.safe(c.Message))
			}
			run.live.line("%s (%s)", s, c.Via)
		}
		run.taskChanges = len(tk.History)
	}
	if tk := r.Task; tk != nil && !tk.CancelAckAt.IsZero() && !run.taskAck {
		run.taskAck = true
		run.live.line("  tasks/cancel acknowledged %s after the cancel", report.After(tk.CancelAckAt.Sub(r.Cancel.At)))
	}
	if r.Notifications != run.notifications {
		run.notifications = r.Notifications
		run.live.line("  notification #%d: %s", r.Notifications, run.live.safe(describeNotification(ev.Msg)))
	}
}

// describeNotification is a subscription notification in one line: its
// method and what it names (a resource URI), without the protocol's _meta.
func describeNotification(m wire.Message) string {
	var p struct {
		URI string `json:"uri"`
	}
	_ = json.Unmarshal(m.Params, &p)
	if p.URI != "" {
		return m.Method + " " + p.URI
	}
	return m.Method
}

// SubscriptionReport is what a subscriptions/listen delivered.
type SubscriptionReport struct {
	Acknowledged  bool `json:"acknowledged"`
	Notifications int  `json:"notifications"`
	// NotificationsAfterCancel came after the client cancelled it.
	NotificationsAfterCancel int `json:"notificationsAfterCancel"`
}

// ReportOf is the Report of request r as tr followed it: everything in it
// comes from the tracker (the one judgement of late and crossed), plus the
// first response to r kept whole (nil: none came). now is the end of the
// run, for the elapsed time of a request still active.
func ReportOf(info event.ConnInfo, tr *session.Tracker, r *session.Request, response *wire.Message, now time.Time) Report {
	id := r.ID
	rep := Report{
		ID:              &id,
		Method:          r.Method,
		Target:          r.Target,
		Transport:       info.Transport.String(),
		Era:             info.Era.String(),
		ProtocolVersion: info.ProtocolVersion,
		Server:          report.ServerLabel(info),
		State:           r.State.String(),
		ExitCode:        ExitCodeFor(r.State),
		ElapsedMs:       ms(r.Elapsed(now)),
		Progress:        ProgressReport{Count: r.Progress.Count, Message: r.Progress.Message},
		ToolError:       r.ToolError,
	}
	if r.Method == wire.MethodSubscriptionsListen {
		rep.Subscription = &SubscriptionReport{Acknowledged: r.Acked, Notifications: r.Notifications,
			NotificationsAfterCancel: r.Late.NotificationsAfterCancel}
	}
	if r.Progress.Count > 0 {
		v := r.Progress.Value
		rep.Progress.Last = &v
		if r.Progress.HasTotal {
			t := r.Progress.Total
			rep.Progress.Total = &t
		}
	}
	if r.Cancel != nil {
		rep.Cancel = cancelReport(r)
	}
	if r.Cancel != nil || r.State == session.StateConnectionLost || r.Late.Response || r.Late.ProgressAfterCancel > 0 || r.Late.ProgressCrossed > 0 {
		rep.Late = lateReport(tr, r, response, now)
	}
	if response != nil && !r.Late.Response {
		rep.Result = nonNull(response.Result)
		rep.Error = rpcError(response.Error)
	}
	if rep.Error == nil && r.LocalError != "" {
		rep.Error = &ErrorReport{Message: r.LocalError, Local: true}
	}
	if rep.Error == nil && r.State == session.StateInputRequired && response != nil {
		// The result is shown as it came; this says why call stops there.
		rep.Error = &ErrorReport{Message: inputRequiredMessage(response.Result), Local: true}
	}
	taskReport(&rep, tr, r)
	conversationReport(&rep, r)
	rep.Violations = report.Violations(tr.Violations())
	return rep
}

// cancelReport is the report of r's cancel (r.Cancel is set).
func cancelReport(r *session.Request) *CancelReport {
	c := r.Cancel
	cr := &CancelReport{AtMs: ms(c.At.Sub(r.Created)), Reason: c.Reason, Cause: c.Cause.String()}
	if c.Signal != event.SignalNone {
		s := c.Signal.String()
		cr.Signal = &s
	}
	if c.Cause == session.CauseTimeout {
		cr.Limit = c.Limit.String()
	}
	return cr
}

// lateReport is what came (or was watched for) after r's cancel or the
// connection's loss, as of now: late progress and response, the crossing
// window and round trip judged by, whether the server still sends.
func lateReport(tr *session.Tracker, r *session.Request, response *wire.Message, now time.Time) *LateReport {
	lr := &LateReport{Response: r.Late.Response, Crossed: r.Late.Crossed, ProgressAfterCancel: r.Late.ProgressAfterCancel,
		ProgressCrossed: r.Late.ProgressCrossed, CrossingWindowMs: msFloat(tr.CrossingWindow())}
	if r.Late.Window > 0 {
		lr.CrossingWindowMs = msFloat(r.Late.Window) // the window the judgement used
	}
	if rt := tr.RoundTrip(); rt.Measured() {
		d := msFloat(rt.D)
		lr.RoundTripMs, lr.RoundTripSource = &d, rt.Source
	}
	base := r.Ended
	if r.Cancel != nil {
		base = r.Cancel.At
	}
	if !base.IsZero() && now.After(base) {
		lr.WatchedMs = ms(now.Sub(base))
	}
	if last := r.Late.LastAt; !last.IsZero() && !base.IsZero() {
		d := ms(last.Sub(base))
		lr.LastAfterCancelMs = &d
		ended := r.Late.Response && !r.Late.ResponseAt.Before(last) // a response ends the request
		lr.StillSending = !ended && report.StillSending(now.Sub(last), report.Spacing(r.Progress, r.Late))
	}
	if r.Late.Response {
		d := ms(r.Late.AfterCancel)
		lr.ResponseAfterCancelMs = &d
		if response != nil {
			lr.Result = nonNull(response.Result)
			lr.Error = rpcError(response.Error)
		}
	}
	return lr
}

// inputRequiredMessage explains an InputRequiredResult (the multi
// round-trip pattern): the server wants the client to gather input and
// retry with a new request, which a one-request headless run cannot do.
func inputRequiredMessage(result json.RawMessage) string {
	var r struct {
		InputRequests map[string]struct {
			Method string `json:"method"`
		} `json:"inputRequests"`
		RequestState *string `json:"requestState"`
	}
	_ = json.Unmarshal(result, &r)
	var asks []string
	for key, req := range r.InputRequests {
		asks = append(asks, fmt.Sprintf("%s (%s)", key, req.Method))
	}
	sort.Strings(asks)
	msg := "the server needs more input to finish this request (resultType input_required)"
	if len(asks) > 0 {
		msg += ": it asks for " + strings.Join(asks, ", ")
	}
	if r.RequestState != nil {
		msg += "; it gave a requestState to echo on the retry"
	}
	return msg + "; inflight call answers only from --answer-file, --decline and --root, so the request ends here"
}

func nonNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return raw
}

func rpcError(e *wire.Error) *ErrorReport {
	if e == nil {
		return nil
	}
	code := e.Code
	return &ErrorReport{Code: &code, Message: e.Message, Data: nonNull(e.Data)}
}

// ms rounds a duration to whole milliseconds.
func ms(d time.Duration) int64 { return d.Round(time.Millisecond).Milliseconds() }

// printCallSummary prints the human summary of a call.
func printCallSummary(w io.Writer, rep Report, red *redact.Redactor) {
	safe := func(s string) string { return termsafe.Line(red.String(s)) }
	row := func(k, v string) { fmt.Fprintf(w, "%-11s %s\n", k, v) }
	fmt.Fprintln(w)
	what := rep.Method
	if rep.Target != "" {
		what += " " + safe(rep.Target)
	}
	row("request", fmt.Sprintf("#%s %s", rep.ID, what))
	row("state", fmt.Sprintf("%s (exit %d)", rep.State, rep.ExitCode))
	row("elapsed", fmtMs(rep.ElapsedMs))
	switch p := rep.Progress; {
	case p.Count == 0:
		row("progress", "none")
	default:
		s := fmt.Sprintf("%d notification%s, last %s", p.Count, report.Plural(p.Count), report.Progress(*p.Last, p.Total))
		if p.Message != "" {
			s += fmt.Sprintf(" %q", safe(p.Message))
		}
		row("progress", s)
	}
	if c := rep.Cancel; c != nil {
		sig := "no signal needed (the answer was already in)"
		switch {
		case c.Signal == nil:
		case *c.Signal == event.SignalStreamClosed.String():
			// Modern Streamable HTTP: closing the stream is the cancel,
			// and nothing is sent.
			sig = "closed the request's stream"
		default:
			sig = "sent " + *c.Signal
		}
		cause := c.Cause
		if c.Limit != "" {
			cause += " (" + c.Limit + ")"
		}
		row("cancel", fmt.Sprintf("at %s by %s; %s; reason %q", fmtMs(c.AtMs), cause, sig, safe(c.Reason)))
	}
	if rep.TaskRequiredByTool {
		row("asked", "as a task without --task: tools/list says the tool runs only as one (execution.taskSupport \"required\")")
	}
	if t := rep.Task; t != nil {
		row("task", taskSummary(t, safe))
	}
	if l := rep.Late; l != nil {
		printLate(row, rep, l, safe)
	}
	printConversation(row, rep, safe)
	if len(rep.Violations) == 0 {
		row("violations", "none")
	}
	for i, v := range rep.Violations {
		k := ""
		if i == 0 {
			k = "violations"
		}
		row(k, fmt.Sprintf("%s: %s", v.Code, safe(v.Detail)))
	}
	if rep.Error != nil {
		row("error", describeError(rep.Error, safe))
	}
	if len(rep.Result) > 0 {
		label := "result"
		if rep.ToolError {
			label = "tool error"
		}
		fmt.Fprintf(w, "%s:\n%s\n", label, indent(termsafe.Block(red.String(renderResult(rep.Method, rep.Result))), "  "))
	}
}

// printLate prints what arrived after the request's end was decided: the
// "late" row after a cancel, or, when there was no cancel (the connection
// was lost, or the request failed locally), what happened instead, since
// "after the cancel" would describe a cancel that never happened.
func printLate(row func(k, v string), rep Report, l *LateReport, safe func(string) string) {
	if rep.Cancel == nil {
		s := "the connection was lost before an answer came"
		if rep.State != session.StateConnectionLost.String() {
			s = "the request ended (" + rep.State + ") before an answer came"
		}
		if l.Response {
			s += fmt.Sprintf("; a response came %s after that, ignored", fmtAfterMs(*l.ResponseAfterCancelMs))
		}
		if l.ProgressAfterCancel > 0 {
			s += fmt.Sprintf("; %d progress notification%s after that, ignored", l.ProgressAfterCancel, report.Plural(l.ProgressAfterCancel))
		}
		row("lost", s)
		if l.Response || l.ProgressAfterCancel > 0 {
			row("", watchedAfter(l, "the end"))
		}
	} else {
		var parts []string
		switch {
		case l.Response && l.Crossed:
			parts = append(parts, fmt.Sprintf("a response crossed the cancel (%s after it), ignored", fmtAfterMs(*l.ResponseAfterCancelMs)))
		case l.Response:
			parts = append(parts, fmt.Sprintf("LATE RESPONSE %s after the cancel, ignored", fmtAfterMs(*l.ResponseAfterCancelMs)))
		default:
			parts = append(parts, "no response after the cancel")
		}
		if l.ProgressCrossed > 0 {
			parts = append(parts, fmt.Sprintf("%d progress notification%s crossed the cancel in flight, ignored", l.ProgressCrossed, report.Plural(l.ProgressCrossed)))
		}
		switch {
		case l.ProgressAfterCancel > 0:
			parts = append(parts, fmt.Sprintf("%d progress notification%s after the cancel, ignored", l.ProgressAfterCancel, report.Plural(l.ProgressAfterCancel)))
		case l.ProgressCrossed == 0:
			parts = append(parts, "no progress after the cancel")
		}
		row("late", strings.Join(parts, "; "))
		row("", watchedAfter(l, "the cancel"))
		row("", crossingBasis(l))
	}
	if l.Error != nil {
		row("", "late error: "+describeError(l.Error, safe))
	}
	if len(l.Result) > 0 {
		row("", "late result (not the request's result): "+safe(oneLine(l.Result, 200)))
	}
}

// watchedAfter says for how long after the cancel (or the end) inflight
// read what the server sent, when the last of it came, and whether the
// server was still sending when it stopped: "no response" means none in
// that time, nothing more.
func watchedAfter(l *LateReport, after string) string {
	s := fmt.Sprintf("watched %s after %s", report.Span(time.Duration(l.WatchedMs)*time.Millisecond), after)
	if l.LastAfterCancelMs != nil {
		s += fmt.Sprintf("; the last message came %s after it", fmtAfterMs(*l.LastAfterCancelMs))
	}
	if l.StillSending {
		s += "; still sending when the watch ended"
	}
	return s
}

func describeError(e *ErrorReport, safe func(string) string) string {
	if e.Local {
		return safe(e.Message)
	}
	s := fmt.Sprintf("JSON-RPC error %d: %s", *e.Code, safe(e.Message))
	if len(e.Data) > 0 {
		s += " (data: " + safe(oneLine(e.Data, 200)) + ")"
	}
	return s
}

// renderResult shows a result for people: the text content of a tool
// result, else indented JSON.
func renderResult(method string, result json.RawMessage) string {
	if method == wire.MethodToolsCall {
		var r struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		}
		if json.Unmarshal(result, &r) == nil && len(r.Content) > 0 {
			var parts []string
			allText := true
			for _, c := range r.Content {
				if c.Type != "text" {
					allText = false
					break
				}
				parts = append(parts, c.Text)
			}
			if allText {
				return strings.Join(parts, "\n")
			}
		}
	}
	var buf bytes.Buffer
	if wire.IndentBounded(&buf, result, "", "  ", wire.MaxIndentDepth) != nil {
		return string(result)
	}
	return buf.String()
}

func oneLine(raw json.RawMessage, limit int) string {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		buf.Reset()
		buf.Write(raw)
	}
	s := buf.String()
	if len(s) > limit {
		s = s[:limit] + "…"
	}
	return s
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}

func fmtMs(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	if d < time.Second {
		return fmt.Sprintf("%dms", ms)
	}
	return fmt.Sprintf("%.2fs", d.Seconds())
}

// fmtAfterMs is how long after the cancel something came, from the whole
// milliseconds the report keeps: 0 is "under 1ms", not "0ms" (it did come
// after the cancel).
func fmtAfterMs(ms int64) string {
	if ms == 0 {
		return "under 1ms"
	}
	return fmtMs(ms)
}

// msFloat is d in milliseconds, to the microsecond.
func msFloat(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// crossingBasis says what "crossed" was judged by, so a reader can weigh it.
func crossingBasis(l *LateReport) string {
	msDur := func(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }
	window := msDur(l.CrossingWindowMs)
	if l.RoundTripMs == nil {
		return report.CrossingBasis(window, 0, "", 0, 0)
	}
	rt := msDur(*l.RoundTripMs)
	// The report keeps times to the microsecond, so half the round trip
	// can be a microsecond off the window: only more is --grace.
	grace := window - rt/2
	if grace <= time.Microsecond {
		grace = 0
	}
	return report.CrossingBasis(window, rt, l.RoundTripSource, 0, grace)
}
