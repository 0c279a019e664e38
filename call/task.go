package call

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"inflight/session"
	"inflight/wire"
)

// TaskReport is what --json says of a request that became a task.
type TaskReport struct {
	ID            string `json:"id"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	// HandleAtMs is when the task handle arrived, from the request's start.
	HandleAtMs int64 `json:"handleAtMs"`
	// History is every status change seen, with where it came from
	// (handle, poll, notification, cancel).
	History []TaskStatusReport `json:"history"`
	// Polls is the number of tasks/get answered; PollIntervalMs the
	// server's last suggestion (null: none, the default was used).
	Polls          int    `json:"polls"`
	PollIntervalMs *int64 `json:"pollIntervalMs"`
	// TTLMs is the task's time to live (null: unlimited or not given).
	TTLMs *int64 `json:"ttlMs"`
	// TTLOutOfRange: the server's TTL was more than inflight's clock
	// holds (wire.MaxTaskMs); TTLMs is that largest value.
	TTLOutOfRange bool `json:"ttlOutOfRange,omitempty"`
	// Cancel is the tasks/cancel, when one was sent.
	Cancel *TaskCancelReport `json:"cancel,omitempty"`
	// EndedAfterCancel is the terminal status other than cancelled the
	// task reached after tasks/cancel, and when; ResultAfterCancel the
	// outcome it brought, kept as late and never counted a success.
	EndedAfterCancel     string          `json:"endedAfterCancel,omitempty"`
	EndedAfterCancelMs   *int64          `json:"endedAfterCancelMs,omitempty"`
	ResultAfterCancel    json.RawMessage `json:"resultAfterCancel,omitempty"`
	HandleAfterCancel    bool            `json:"handleAfterCancel,omitempty"`
	InputRequests        json.RawMessage `json:"inputRequests,omitempty"`
	StatusChangesOmitted int             `json:"statusChangesOmitted,omitempty"`
}

// TaskStatusReport is one status change.
type TaskStatusReport struct {
	AtMs    int64  `json:"atMs"`
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
	Via     string `json:"via"`
}

// TaskCancelReport is the task's tasks/cancel: when it left (from the
// request's start), when the server acknowledged it, or its error.
type TaskCancelReport struct {
	SentAtMs *int64       `json:"sentAtMs"`
	AckAtMs  *int64       `json:"ackAtMs"`
	Error    *ErrorReport `json:"error,omitempty"`
}

func msPtr(d time.Duration) *int64 { v := ms(d); return &v }

// taskReport fills the task parts of rep: the task object, and the
// outcome (timely, or late after tasks/cancel) in place of the handle.
func taskReport(rep *Report, tr *session.Tracker, r *session.Request) {
	tk := r.Task
	if tk == nil {
		return
	}
	tp := &TaskReport{ID: tk.ID, Status: tk.Status, StatusMessage: tk.Message, HandleAtMs: ms(tk.HandleAt.Sub(r.Created)),
		Polls: tk.Polls, EndedAfterCancel: tk.EndedAfterCancel, HandleAfterCancel: tk.AfterCancelHandle,
		StatusChangesOmitted: tk.HistoryDropped, History: []TaskStatusReport{}}
	for _, c := range tk.History {
		tp.History = append(tp.History, TaskStatusReport{AtMs: ms(c.At.Sub(r.Created)), Status: c.Status, Message: c.Message, Via: c.Via.String()})
	}
	if tk.PollInterval > 0 {
		tp.PollIntervalMs = msPtr(tk.PollInterval)
	}
	if tk.TTLKnown && !tk.TTLUnlimited {
		tp.TTLMs = msPtr(tk.TTL)
		// The server's value was clamped where it was read (wire.MaxTaskMs);
		// the task keeps no more than the clamped value, so its reaching
		// the bound is what says so.
		tp.TTLOutOfRange = *tp.TTLMs >= int64(wire.MaxTaskMs)
	}
	if json.Valid([]byte(tk.InputRequests)) {
		tp.InputRequests = json.RawMessage(tk.InputRequests)
	}
	if !tk.CancelID.IsZero() {
		c := &TaskCancelReport{Error: rpcError(tk.CancelError)}
		if !tk.CancelSentAt.IsZero() {
			c.SentAtMs = msPtr(tk.CancelSentAt.Sub(r.Created))
		}
		if !tk.CancelAckAt.IsZero() {
			c.AckAtMs = msPtr(tk.CancelAckAt.Sub(r.Created))
		}
		tp.Cancel = c
	}
	if tk.EndedAfterCancel != "" {
		tp.EndedAfterCancelMs = msPtr(tk.AfterCancel + r.Cancel.At.Sub(r.Created))
	}
	rep.Task = tp
	if rep.Late != nil {
		// The late "response" of a task is its outcome (resultAfterCancel),
		// not the handle.
		rep.Late.Result, rep.Late.Error = nil, nil
	}
	raw, isErr, ok := tr.TaskOutcome(r.ID)
	switch {
	case !ok:
		// The handle is not the request's result.
		rep.Result = nil
	case tk.EndedAfterCancel != "":
		tp.ResultAfterCancel = json.RawMessage(raw)
		rep.Result = nil
	case isErr:
		rep.Result = nil
		var e wire.Error
		if json.Unmarshal(raw, &e) == nil {
			rep.Error = rpcError(&e)
		}
	default:
		rep.Result = json.RawMessage(raw)
	}
}

// taskSummary is the summary's "task" row.
func taskSummary(t *TaskReport, safe func(string) string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", safe(t.ID), t.Status)
	if t.StatusMessage != "" {
		fmt.Fprintf(&b, " %q", safe(t.StatusMessage))
	}
	fmt.Fprintf(&b, "; handle at %s; %d poll%s", fmtMs(t.HandleAtMs), t.Polls, plural(t.Polls))
	if t.PollIntervalMs != nil {
		fmt.Fprintf(&b, " (server's interval %s)", fmtMs(*t.PollIntervalMs))
	}
	switch {
	case t.TTLOutOfRange:
		b.WriteString("; ttl out of range (the server's value is more than inflight keeps: taken as unlimited in practice)")
	case t.TTLMs != nil:
		fmt.Fprintf(&b, "; ttl %s", fmtMs(*t.TTLMs))
	}
	if c := t.Cancel; c != nil {
		switch {
		case c.AckAtMs != nil:
			fmt.Fprintf(&b, "; tasks/cancel acknowledged at %s", fmtMs(*c.AckAtMs))
		case c.Error != nil:
			fmt.Fprintf(&b, "; tasks/cancel refused: %s", describeError(c.Error, safe))
		default:
			b.WriteString("; tasks/cancel not acknowledged")
		}
	}
	if t.EndedAfterCancel != "" && t.EndedAfterCancelMs != nil {
		fmt.Fprintf(&b, "; ⚑ %s after tasks/cancel (at %s)", t.EndedAfterCancel, fmtMs(*t.EndedAfterCancelMs))
	}
	return b.String()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
