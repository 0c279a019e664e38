package session

import (
	"strconv"
	"strings"

	"time"

	"inflight/event"
	"inflight/wire"
)

// Polling guidance and the server's rate limits (issue 11): "Servers MAY
// rate-limit clients polling more frequently than the recorded
// pollIntervalMs" — only those. A tasks/get refused as rate-limited is the
// server ignoring its own guidance when it gave no interval for the task
// (there was nothing to poll slower than), or when inflight had waited the
// whole interval it gave (the tracker never polls sooner; pollWait says
// how long it did wait).
//
// A refusal is rate limiting when it is said so: HTTP 429 Too Many
// Requests on the poll's POST, or a JSON-RPC error whose message names a
// rate limit ("rate limit", "rate-limit", "too many requests"); JSON-RPC
// has no code for it, so no code alone is taken for one.

// isRateLimitMessage reports whether a JSON-RPC error message says the
// request was refused for coming too often.
func isRateLimitMessage(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "rate limit") || strings.Contains(m, "rate-limit") || strings.Contains(m, "ratelimit") ||
		strings.Contains(m, "too many requests")
}

// onPollHTTPStatus judges an HTTP 429 that answered a task's poll.
func (t *Tracker) onPollHTTPStatus(ev *event.Event) {
	if ev.Status != 429 {
		return
	}
	if c := t.byID[ev.RequestID]; c != nil && c.Role == RolePoll {
		t.pollRefused(t.byID[c.Parent], c, ev, ev.Status)
	}
}

// pollRefused records ViolationTaskPollRateLimited when poll c of p's
// task was refused as rate-limited although inflight kept to the
// server's guidance. httpStatus is the HTTP status that refused it (0: a
// JSON-RPC error, judged by its message).
func (t *Tracker) pollRefused(p, c *Request, ev *event.Event, httpStatus int) {
	if p == nil || p.Task == nil {
		return
	}
	tk := p.Task
	if tk.rateJudged == c.ID {
		return
	}
	how := "HTTP " + strconv.Itoa(httpStatus)
	if httpStatus == 0 {
		if ev.Msg.Kind != wire.KindError || ev.Msg.Error == nil || !isRateLimitMessage(ev.Msg.Error.Message) {
			return
		}
		how = strconv.Itoa(ev.Msg.Error.Code) + " " + strconv.Quote(clip(ev.Msg.Error.Message, 128))
	}
	tk.rateJudged = c.ID
	var why string
	switch {
	case tk.PollInterval <= 0:
		why = "the server had given no poll interval for it; inflight polled " + fine(tk.pollWait) + " after the " + t.pollFromWhat(tk)
	case tk.pollWait >= tk.PollInterval:
		why = "inflight had waited " + fine(tk.pollWait) + ", no less than the " + fine(tk.PollInterval) + " interval the server gave"
	default:
		return // polled sooner than asked: the server may refuse it
	}
	t.violate(ViolationTaskPollRateLimited, "tasks/get of task "+strconv.Quote(clip(tk.ID, 128))+" was refused as rate-limited ("+how+"), though "+why, p, c.ID, ev)
}

// pollFromWhat names what the poll's wait is counted from.
func (t *Tracker) pollFromWhat(tk *Task) string {
	if tk.pollFirst {
		return "handle"
	}
	return "previous poll"
}

// onTasksOnListen accounts a modern notifications/tasks delivered on a
// subscriptions/listen stream (it carries the listen's ID in
// _meta.io.modelcontextprotocol/subscriptionId) to that subscription, as
// any notification on it is: counted, and flagged when it comes before the
// acknowledgment or names no subscription. The task it describes is found
// by its taskId, not by the subscription (onTaskNotification).
func (t *Tracker) onTasksOnListen(ev *event.Event) {
	if ev.Msg.Method != wire.NotifyTasks {
		return
	}
	if _, ok := wire.SubscriptionID(ev.Msg.Params); !ok {
		return
	}
	t.onNotification(ev)
}

// fine is d to the millisecond, for a violation's detail.
func fine(d time.Duration) string { return d.Round(time.Millisecond).String() }
