package call

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"inflight/answer"
	"inflight/event"
	"inflight/report"
	"inflight/runner"
	"inflight/session"
	"inflight/wire"
)

// RoundReport is one round of a multi round-trip request.
type RoundReport struct {
	ID wire.ID `json:"id"`
	// AtMs is when the round began, since the request did; ResponseMs
	// when its answer came (null while none did).
	AtMs       int64  `json:"atMs"`
	ResponseMs *int64 `json:"responseMs"`
	// Outcome is input_required, or the request's final state.
	Outcome string `json:"outcome"`
	// Asked is what the server asked for; RequestState its requestState,
	// exactly as it came (null when none).
	Asked        []AskedReport   `json:"asked,omitempty"`
	RequestState json.RawMessage `json:"requestState,omitempty"`
	// Answered is what inflight answered, by key (null: not answered).
	Answered map[string]json.RawMessage `json:"answered,omitempty"`
}

// AskedReport is one input request.
type AskedReport struct {
	Key    string          `json:"key"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// ServerRequestReport is one of a legacy server's own requests.
type ServerRequestReport struct {
	ID     wire.ID         `json:"id"`
	Method string          `json:"method"`
	State  string          `json:"state"`
	TiedBy string          `json:"tiedBy"`
	AtMs   int64           `json:"atMs"`
	Params json.RawMessage `json:"params,omitempty"`
	Answer json.RawMessage `json:"answer,omitempty"`
	Error  *ErrorReport    `json:"error,omitempty"`
}

// LogsReport is the request's notifications/message lines.
type LogsReport struct {
	// Level is the level asked for ("" when none was).
	Level string `json:"level,omitempty"`
	// Count counts every line; Lines holds the first session.MaxLogLines.
	Count int         `json:"count"`
	Lines []LogReport `json:"lines"`
}

// LogReport is one log line.
type LogReport struct {
	AtMs   int64           `json:"atMs"`
	Level  string          `json:"level"`
	Logger string          `json:"logger,omitempty"`
	Data   json.RawMessage `json:"data,omitempty"`
}

// conversationReport fills the report's rounds, server requests and logs.
func conversationReport(rep *Report, r *session.Request) {
	c := r.Conv
	if c == nil {
		return
	}
	since := func(t time.Time) int64 { return ms(t.Sub(r.Created)) }
	for _, rd := range c.Rounds {
		rr := RoundReport{ID: rd.ID, AtMs: since(rd.Began), Outcome: rd.Outcome.String(), RequestState: rd.RequestState}
		if !rd.ResponseAt.IsZero() {
			v := since(rd.ResponseAt)
			rr.ResponseMs = &v
		}
		for _, q := range rd.Asked {
			rr.Asked = append(rr.Asked, AskedReport{Key: q.Key, Method: q.Method, Params: q.Params})
		}
		rr.Answered = rd.Answers
		rep.Rounds = append(rep.Rounds, rr)
	}
	for _, s := range c.ServerRequests {
		sr := ServerRequestReport{ID: s.ID, Method: s.Method, State: s.State.String(), TiedBy: s.TiedBy.String(),
			AtMs: since(s.At), Params: s.Params, Answer: s.Answer, Error: rpcError(s.Error)}
		rep.ServerRequests = append(rep.ServerRequests, sr)
	}
	rep.ServerRequestsDropped = c.ServerRequestsDropped
	if c.LogCount > 0 || c.LogLevel != "" {
		lr := &LogsReport{Level: c.LogLevel, Count: c.LogCount, Lines: []LogReport{}}
		for _, l := range c.Logs {
			d := json.RawMessage(l.Data)
			if !json.Valid(d) {
				d = nil
			}
			lr.Lines = append(lr.Lines, LogReport{AtMs: since(l.At), Level: l.Level, Logger: l.Logger, Data: d})
		}
		rep.Logs = lr
	}
	if c.Stopped != "" && rep.Error != nil && rep.Error.Local && r.State == session.StateInputRequired && !c.GaveUp {
		rep.Error.Message += " (" + c.Stopped + ")"
	}
}

// book makes the answers of a call from its options; nil when the call
// answers nothing.
func (o Options) book() (*answer.Book, error) {
	var file map[string]json.RawMessage
	if o.AnswerFile != "" {
		var err error
		if file, err = answer.Load(o.AnswerFile); err != nil {
			return nil, fmt.Errorf("--answer-file: %w", err)
		}
	}
	b, err := answer.New(file, o.Decline, o.Roots)
	if err != nil || !b.Enabled() {
		return nil, err
	}
	return b, nil
}

// runnerAnswers wires a book into the connection: the legacy server's
// requests answered by it, the capabilities it answers declared, modern
// rounds held for it.
func runnerAnswers(ro *runner.Options, b *answer.Book, maxRounds int) {
	ro.MaxRounds = maxRounds
	if b == nil {
		return
	}
	ro.Converse = true
	ro.ServerRequests = b.Serve
	ro.Answers.Elicitation, ro.Answers.Sampling, ro.Answers.Roots = true, true, true
}

// withLogLevel asks for log lines: in the modern era in the request's
// _meta; in the legacy era with logging/setLevel, sent and waited for
// first (it is a request of its own in the trace).
func (run *callRun) withLogLevel(ctx context.Context, level string, params json.RawMessage) (json.RawMessage, error) {
	if level == "" {
		return params, nil
	}
	if run.cn.Info().Era == event.EraModern {
		return wire.SetMeta(params, map[string]any{wire.MetaLogLevel: level})
	}
	lp, _ := json.Marshal(map[string]string{"level": level})
	r, err := run.cn.Begin(ctx, wire.MethodLoggingSetLevel, lp, session.RequestOptions{})
	if err != nil {
		return params, nil // it failed in the tracker, and the trace says so
	}
	run.cn.Wait(ctx, func() bool { return r.State.IsFinal() }, time.Time{})
	if r.State != session.StateCompleted {
		run.live.line("  logging/setLevel %s ended %s; the call goes on without it", run.live.safe(level), r.State)
	} else {
		run.live.line("  logging/setLevel %s: %s", run.live.safe(level), r.State)
	}
	return params, nil
}

// answerRound answers the request waiting for input from the book, or
// ends it input_required when the book has no answer for something asked.
func (run *callRun) answerRound(ctx context.Context, b *answer.Book) {
	r := run.req
	asked, _ := r.Asked()
	answers := map[string]json.RawMessage{}
	var missing, declined []string
	for _, q := range asked {
		res, out := b.Input(q.Key, q.Method, q.Params)
		switch {
		case out == answer.Declined && res == nil:
			declined = append(declined, q.Key+" ("+q.Method+")")
		case out == answer.None:
			missing = append(missing, q.Key+" ("+q.Method+")")
		default:
			answers[q.Key] = res
		}
	}
	switch {
	case len(missing) > 0:
		sort.Strings(missing)
		_ = run.cn.EndConversation(r.ID, "inflight call has no answer for "+strings.Join(missing, ", "))
		return
	case len(declined) > 0:
		// "If an error occurs or the user declines the sampling request,
		// the client does not need to replay the initial call" (sampling.mdx).
		sort.Strings(declined)
		_ = run.cn.EndConversation(r.ID, "declined "+strings.Join(declined, ", ")+"; not retried")
		return
	}
	keys := make([]string, 0, len(answers))
	for k := range answers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	rt, err := run.cn.Answer(ctx, r.ID, answers)
	if err != nil {
		run.live.note("answer: " + err.Error())
		return
	}
	// The round's response is the one that counts from now on.
	run.haveResponse = false
	what := "nothing (the server asked for none)"
	if len(keys) > 0 {
		what = strings.Join(keys, ", ")
	}
	run.live.line("%s", run.live.safe(fmt.Sprintf("  ↺ round %d: answered %s; retried as %s #%s", rt.Round, what, rt.Method, rt.ID)))
}

// taskAsksNew reports whether a modern task waits for input the run has
// not looked up yet (and the run has answers to look in).
func (run *callRun) taskAsksNew(b *answer.Book) bool {
	if !b.Enabled() {
		return false
	}
	for _, q := range run.req.TaskAsks() {
		if !run.taskAsked[q.Key] {
			return true
		}
	}
	return false
}

// answerTask answers a modern task's input requests from the book: the
// tracker keeps the answers and the run's next wait sends them as
// tasks/update; the task goes on (an input request the book has no
// answer for is left for the task to give up on, and said).
func (run *callRun) answerTask(b *answer.Book) {
	r := run.req
	if run.taskAsked == nil {
		run.taskAsked = map[string]bool{}
	}
	answers := map[string]json.RawMessage{}
	var unanswered []string
	for _, q := range r.TaskAsks() {
		if run.taskAsked[q.Key] {
			continue
		}
		run.taskAsked[q.Key] = true
		res, out := b.Input(q.Key, q.Method, q.Params)
		if out == answer.None || res == nil {
			unanswered = append(unanswered, q.Key+" ("+q.Method+")")
			continue
		}
		answers[q.Key] = res
	}
	if len(unanswered) > 0 {
		sort.Strings(unanswered)
		run.live.line("%s", run.live.safe("  task input: no answer for "+strings.Join(unanswered, ", ")+"; the task waits"))
	}
	if len(answers) == 0 {
		return
	}
	if err := run.cn.Tracker().AnswerTask(r.ID, answers, time.Now()); err != nil {
		run.live.note("answer: " + err.Error())
		return
	}
	keys := slices.Sorted(maps.Keys(answers))
	run.live.line("%s", run.live.safe("  ↺ task input: answered "+strings.Join(keys, ", ")+" with tasks/update; the task goes on"))
}

// printConversation prints the rounds, the server's own requests and the
// log lines of the summary.
func printConversation(row func(k, v string), rep Report, safe func(string) string) {
	for i, rd := range rep.Rounds {
		k := ""
		if i == 0 {
			k = "rounds"
		}
		s := fmt.Sprintf("%d. #%s at %s: %s", i+1, rd.ID, fmtMs(rd.AtMs), rd.Outcome)
		var asks []string
		for _, q := range rd.Asked {
			a := q.Key + " (" + q.Method
			if m := askMessage(q); m != "" {
				a += " " + strconv.Quote(m)
			}
			a += ")"
			if ans, ok := rd.Answered[q.Key]; ok {
				a += " → " + string(ans)
			}
			asks = append(asks, a)
		}
		if len(asks) > 0 {
			s += "; asked " + strings.Join(asks, ", ")
		}
		if rd.RequestState != nil {
			s += fmt.Sprintf("; requestState %d bytes", len(rd.RequestState))
		}
		row(k, safe(s))
	}
	for i, sr := range rep.ServerRequests {
		k := ""
		if i == 0 {
			k = "asked"
		}
		s := fmt.Sprintf("↘ %s (the server's #%s) at %s: %s", sr.Method, sr.ID, fmtMs(sr.AtMs), sr.State)
		if sr.State == session.ServerWithdrawn.String() {
			s += " (the server withdrew this question)"
		}
		row(k, safe(s))
	}
	if l := rep.Logs; l != nil {
		s := fmt.Sprintf("%d line%s", l.Count, report.Plural(l.Count))
		if l.Level != "" {
			s += " (asked for " + l.Level + ")"
		}
		row("logs", safe(s))
		for _, ln := range l.Lines {
			row("", safe(fmt.Sprintf("%s %s %s %s", fmtMs(ln.AtMs), ln.Level, ln.Logger, string(ln.Data))))
		}
	}
}

// askMessage is an input request's message, if it has one.
func askMessage(q AskedReport) string {
	var p struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(q.Params, &p)
	if r := []rune(p.Message); len(r) > 80 {
		return string(r[:80]) + "…"
	}
	return p.Message
}

// serverTraffic shows a legacy server's own requests as they come and go:
// the question, then inflight's answer (or the server withdrawing it).
func (run *callRun) serverTraffic(ev event.Event) {
	if !ev.Internal || run.cn.Info().Era == event.EraModern {
		return
	}
	m := ev.Msg
	switch {
	case ev.Kind == event.Received && m.Kind == wire.KindRequest && m.Method != wire.MethodPing:
		s := fmt.Sprintf("  ↘ the server asks %s (its #%s)", m.Method, m.ID)
		if msg := askMessage(AskedReport{Params: m.Params}); msg != "" {
			s += " " + strconv.Quote(msg)
		}
		run.live.line("%s", run.live.safe(s))
	case ev.Kind == event.Sent && (m.Kind == wire.KindResult || m.Kind == wire.KindError):
		for _, s := range run.cn.Tracker().ServerRequests() {
			if s.ID == m.ID && !s.Ended.IsZero() && s.Ended.Equal(ev.Time) {
				run.live.line("%s", run.live.safe(fmt.Sprintf("  ↗ %s #%s: %s", s.Method, s.ID, s.State)))
			}
		}
	case ev.Kind == event.Received && m.Method == wire.NotifyCancelled:
		if c, err := wire.DecodeCancelled(m.Params); err == nil {
			run.live.line("%s", run.live.safe(fmt.Sprintf("  ↘ the server withdrew its question #%s", c.RequestID)))
		}
	}
}
