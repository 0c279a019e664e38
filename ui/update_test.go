package ui

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"inflight/client"
	"inflight/event"
	"inflight/keymap"
	"inflight/session"
	"inflight/wire"
)

// startSlow composes and sends the slow tool the way a newcomer would:
// n, enter (choose the preselected tool), enter (send).
func startSlow(h *harness) int64 {
	h.t.Helper()
	h.key("n", "enter", "enter")
	if h.m.focus.mode != keymap.ModeList {
		h.t.Fatalf("composer still open after sending: %q", h.screen())
	}
	r := h.m.tracker.At(h.m.tracker.Len() - 1)
	id, _ := r.ID.Int()
	h.sentEvent(id)
	return id
}

func TestNewcomerPathSendsSlowWithDefaults(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	if !strings.Contains(h.screen(), "You have not sent a request yet") {
		t.Fatalf("the empty screen does not tell a newcomer what to do:\n%s", h.screen())
	}
	id := startSlow(h)
	if id != 2 {
		t.Fatalf("slow got ID %d, want 2 (tools/list was 1)", id)
	}
	sent := h.fake.sent[len(h.fake.sent)-1]
	if sent.Method != wire.MethodToolsCall || wire.Target(sent.Method, sent.Params) != "slow" {
		t.Fatalf("sent %s %s, want tools/call slow", sent.Method, sent.Params)
	}
	if !sent.ProgressToken.IsValid() {
		t.Fatal("no progress token sent")
	}
	var p struct {
		Arguments map[string]any `json:"arguments"`
	}
	if err := json.Unmarshal(sent.Params, &p); err != nil || len(p.Arguments) != 0 {
		t.Fatalf("empty fields must be left out so the server's defaults apply; params %s", sent.Params)
	}
}

func TestCancelRecordsIntentInUpdateAndSendsInACommand(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	id := startSlow(h)
	h.progress(id, 3, 10, "step 3 of 10")

	_, cancelsBefore := h.fake.calls()
	_, cmd := h.m.Update(keyMsg("c"))
	if _, after := h.fake.calls(); after != cancelsBefore {
		t.Fatal("Update called the client synchronously; it must only return a command")
	}
	if st := h.request(id).State; st != session.StateCancelRequested {
		t.Fatalf("state after c = %s, want cancel_requested before the signal even goes out", st)
	}
	h.run(cmd)
	if _, after := h.fake.calls(); after != cancelsBefore+1 {
		t.Fatalf("the cancel command did not call Cancel once (calls %d → %d)", cancelsBefore, after)
	}
	if got := h.fake.reasons[len(h.fake.reasons)-1]; got != "user requested cancellation" {
		t.Fatalf("reason %q", got)
	}
	h.cancelSent(id, event.SignalNotification)
	h.advance(400 * time.Millisecond)
	scr := h.screen()
	// The signal and its age first, then the late window running out (the
	// STATE column says cancelling already).
	if !strings.Contains(scr, "notifications/cancelled sent 0.4s ago · watching 4.6s more") {
		t.Fatalf("row does not show the cancel with its signal and age:\n%s", scr)
	}
	// Nothing more comes: after the late window it settles as cancelled.
	h.advance(5 * time.Second)
	if st := h.request(id).State; st != session.StateCancelled {
		t.Fatalf("state after the late window = %s, want cancelled", st)
	}
	if !strings.Contains(h.screen(), "⊗ cancelled") {
		t.Fatalf("row does not say cancelled:\n%s", h.screen())
	}
}

func TestLateResponseIsFlaggedNotFoldedIntoSuccess(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	id := startSlow(h)
	h.key("c")
	h.cancelSent(id, event.SignalNotification)
	h.advance(2 * time.Second)
	h.progress(id, 4, 10, "step 4 of 10")
	h.advance(300 * time.Millisecond)
	h.answer(id, `{"resultType":"complete","content":[{"type":"text","text":"done anyway"}]}`)
	r := h.request(id)
	if r.State != session.StateCancelled || !r.Late.Response {
		t.Fatalf("state %s late %+v, want cancelled with a late response", r.State, r.Late)
	}
	scr := h.screen()
	if !strings.Contains(scr, "⚑ late response ignored (+2.3s)") || !strings.Contains(scr, "1 progress after cancel") {
		t.Fatalf("row does not flag the late traffic:\n%s", scr)
	}
	if strings.Contains(scr, "done anyway") {
		t.Fatal("the late response's content is shown as the outcome")
	}
	if !strings.Contains(scr, "⚑ 1 flagged") {
		t.Fatalf("header does not count the flagged request:\n%s", scr)
	}
}

func TestCancelOnFinishedRequestSaysWhy(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	id := startSlow(h)
	h.answer(id, `{"resultType":"complete","content":[{"type":"text","text":"slow finished"}]}`)
	_, before := h.fake.calls()
	h.key("c")
	if _, after := h.fake.calls(); after != before {
		t.Fatal("c on a finished request sent a cancel")
	}
	if !strings.Contains(h.screen(), "is completed: there is nothing to cancel") {
		t.Fatalf("status line does not say why c did nothing:\n%s", h.screen())
	}
}

func TestCancelWithReason(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	startSlow(h)
	h.key("C")
	if !strings.Contains(h.screen(), "Cancel #2 with a reason") {
		t.Fatalf("no reason prompt:\n%s", h.screen())
	}
	h.typeText("too slow for the demo")
	h.key("enter")
	if got := h.fake.reasons[len(h.fake.reasons)-1]; got != "too slow for the demo" {
		t.Fatalf("reason sent = %q", got)
	}
	if r := h.request(2); r.Cancel == nil || r.Cancel.Reason != "too slow for the demo" {
		t.Fatalf("tracker reason = %+v", r.Cancel)
	}
}

func TestCancelReasonPromptEscKeepsRunning(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	startSlow(h)
	h.key("C", "esc")
	if st := h.request(2).State; st != session.StatePending {
		t.Fatalf("esc in the reason prompt cancelled anyway: %s", st)
	}
}

func TestCancelAllAsksFirst(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	startSlow(h)
	startSlow(h)
	h.key("X")
	if _, n := h.fake.calls(); n != 0 {
		t.Fatal("X cancelled before confirming")
	}
	if !strings.Contains(h.screen(), "Cancel all 2 requests in flight?") {
		t.Fatalf("no confirmation:\n%s", h.screen())
	}
	h.key("y")
	if _, n := h.fake.calls(); n != 2 {
		t.Fatalf("X then y cancelled %d requests, want 2", n)
	}
}

func TestCancelAllDeclined(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	startSlow(h)
	h.key("X", "n")
	if _, n := h.fake.calls(); n != 0 || h.request(2).State != session.StatePending {
		t.Fatal("declining X still cancelled")
	}
}

func TestQuitAsksWhenRequestsAreInFlightAndCancelsThem(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	startSlow(h)
	h.key("q")
	if h.quit {
		t.Fatal("q quit with a request in flight without asking")
	}
	h.key("y")
	if !h.quit {
		t.Fatal("y did not quit")
	}
	if len(h.fake.reasons) != 1 || h.fake.reasons[0] != "client shutting down" {
		t.Fatalf("cancels on quit: %v", h.fake.reasons)
	}
}

func TestQuitWithNothingInFlightIsImmediate(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	h.key("q")
	if !h.quit {
		t.Fatal("q did not quit")
	}
	if h.m.Interrupted() {
		t.Error("q reads as an interruption")
	}
}

func TestCtrlCCancelsWithReasonInterruptedAndQuits(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	startSlow(h)
	startSlow(h)
	h.key("ctrl+c")
	if !h.quit {
		t.Fatal("ctrl+c did not quit")
	}
	if len(h.fake.reasons) != 2 || h.fake.reasons[0] != "interrupted" {
		t.Fatalf("ctrl+c cancels: %v", h.fake.reasons)
	}
	if r := h.request(2); r.Cancel == nil || r.Cancel.Cause != session.CauseInterrupted {
		t.Fatalf("cause = %+v", r.Cancel)
	}
	if !h.m.Interrupted() {
		t.Error("ctrl+c does not read as an interruption: the TUI would exit 0")
	}
}

func TestTimeoutCancelsWithTheSameSignal(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	h.key("n", "enter")
	// Set this request's timeout to 2s in the form (the timeout field is
	// the first setting after the tool's two arguments).
	h.key("tab", "tab")
	h.typeText("2s")
	h.key("enter")
	h.sentEvent(2)
	if r := h.request(2); r.Timeout.Timeout != 2*time.Second {
		t.Fatalf("timeout from the composer = %s", r.Timeout.Timeout)
	}
	h.advance(1500 * time.Millisecond)
	if _, n := h.fake.calls(); n != 0 {
		t.Fatal("cancelled before the timeout")
	}
	h.advance(600 * time.Millisecond)
	if _, n := h.fake.calls(); n != 1 || h.fake.reasons[0] != "timeout" {
		t.Fatalf("timeout cancels = %v", h.fake.reasons)
	}
	if scr := h.screen(); !strings.Contains(scr, "expired") || !strings.Contains(scr, "timed out") {
		t.Fatalf("row does not say timed out:\n%s", h.screen())
	}
	h.advance(6 * time.Second)
	if st := h.request(2).State; st != session.StateTimedOut {
		t.Fatalf("state = %s, want timed_out", st)
	}
}

func TestPlusAndMinusAdjustTheSelectedTimeout(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	startSlow(h)
	before := h.request(2).Timeout.Timeout
	h.key("+")
	if got := h.request(2).Timeout.Timeout; got != before+10*time.Second {
		t.Fatalf("+ made the timeout %s, want %s", got, before+10*time.Second)
	}
	h.key("-", "-")
	if got := h.request(2).Timeout.Timeout; got != before-10*time.Second {
		t.Fatalf("- - made the timeout %s, want %s", got, before-10*time.Second)
	}
}

func TestNewestIsSelectedUnlessTheUserMoved(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	startSlow(h)
	if h.m.screens.list.Selected() != wire.IntID(2) {
		t.Fatalf("selected %s, want the newest (2)", h.m.screens.list.Selected())
	}
	h.key("up")
	// A request the user did not just compose (a --call, say) arrives.
	h.run(h.m.send(wire.MethodToolsCall, json.RawMessage(`{"name":"slow"}`), session.RequestOptions{}))
	if h.m.screens.list.Selected() != wire.IntID(1) {
		t.Fatalf("a new request stole the selection after the user moved: %s", h.m.screens.list.Selected())
	}
	h.key("G")
	if h.m.screens.list.Selected() != wire.IntID(3) {
		t.Fatalf("G did not go back to the newest: %s", h.m.screens.list.Selected())
	}
	h.run(h.m.send(wire.MethodToolsCall, json.RawMessage(`{"name":"slow"}`), session.RequestOptions{}))
	if h.m.screens.list.Selected() != wire.IntID(4) {
		t.Fatalf("following did not resume: %s", h.m.screens.list.Selected())
	}
	// Sending from the composer selects what the user just sent.
	h.key("up")
	startSlow(h)
	if h.m.screens.list.Selected() != wire.IntID(5) {
		t.Fatalf("a request the user just sent is not selected: %s", h.m.screens.list.Selected())
	}
}

func TestDetailAndBack(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	startSlow(h)
	h.key("enter")
	if h.m.focus.mode != keymap.ModeDetail || !strings.Contains(h.screen(), "REQUEST") {
		t.Fatalf("enter did not open the detail:\n%s", h.screen())
	}
	h.key("esc")
	if h.m.focus.mode != keymap.ModeList {
		t.Fatal("esc did not go back")
	}
}

func TestLogFilter(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	startSlow(h)
	h.progress(2, 1, 10, "step 1 of 10")
	h.key("l")
	if !strings.Contains(h.screen(), "notifications/progress") {
		t.Fatalf("log does not show progress:\n%s", h.screen())
	}
	h.key("/")
	h.typeText("tools/list")
	scr := h.screen()
	if strings.Contains(scr, "notifications/progress") || !strings.Contains(scr, "tools/list") {
		t.Fatalf("filter did not filter:\n%s", scr)
	}
	h.key("esc")
	if h.m.screens.logv.Filter() != "" {
		t.Fatal("esc did not clear the filter")
	}
}

func TestReissueSendsTheSameParamsWithANewID(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	startSlow(h)
	first := h.fake.sent[len(h.fake.sent)-1]
	h.key("r")
	second := h.fake.sent[len(h.fake.sent)-1]
	if second.ID == first.ID || second.Method != first.Method || string(second.Params) != string(first.Params) {
		t.Fatalf("reissue sent %s %s %s after %s %s %s", second.ID, second.Method, second.Params, first.ID, first.Method, first.Params)
	}
}

// A re-issue asks for the timeout its request began with, not one
// shortened with - since (issue 10: six presses of - left 1.4s, and the
// re-issued request timed out at once).
func TestReissueKeepsTheTimeoutItBeganWith(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	id := startSlow(h)
	asked := h.request(id).Timeout.Timeout
	h.key("-", "-", "-", "-", "-", "-")
	if got := h.request(id).Timeout.Timeout; got >= asked {
		t.Fatalf("- left the timeout at %s", got)
	}
	h.key("r")
	again := h.m.tracker.At(h.m.tracker.Len() - 1)
	if again.ID == h.request(id).ID || again.Timeout.Timeout != asked {
		t.Fatalf("re-issued #%s with timeout %s, want %s", again.ID, again.Timeout.Timeout, asked)
	}
}

// A status message about one request goes when the selection moves to
// another: "press c to cancel it" would then be about the wrong row.
func TestStatusAboutARequestGoesWithTheSelection(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	startSlow(h)
	startSlow(h)
	if !strings.Contains(h.screen(), "press c to cancel it") {
		t.Fatalf("no status after sending:\n%s", h.screen())
	}
	h.key("up")
	if strings.Contains(h.screen(), "press c to cancel it") {
		t.Errorf("the status about #3 stays with #2 selected:\n%s", h.screen())
	}
}

func TestConnectionLostBannerAndReconnect(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	startSlow(h)
	h.events(event.Event{Kind: event.TransportClosed, Err: errors.New("the server exited: exit status 1")})
	if st := h.request(2).State; st != session.StateConnectionLost {
		t.Fatalf("state = %s", st)
	}
	scr := h.screen()
	if !strings.Contains(scr, "connection lost: the server exited: exit status 1 — press R to reconnect (restarts the server)") {
		t.Fatalf("no banner:\n%s", scr)
	}
	old := h.fake
	h.fake = newFake()
	h.key("R")
	if !old.closed {
		t.Fatal("the old connection was not closed")
	}
	if h.fake.connected != 1 || h.m.conn.state != connUp {
		t.Fatalf("reconnect did not connect the new client (connected=%d state=%d)", h.fake.connected, h.m.conn.state)
	}
}

// Help lists every key of the screen: those that do not act on the
// selection now (c, C, + and - with nothing in flight) are dimmed, not
// hidden, so that a newcomer learning from help sees the cancel.
func TestHelpListsEveryKeyDimmingWhatDoesNotAct(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	h.key("?")
	scr := h.screen()
	if !strings.Contains(scr, "cancel with reason") || !strings.Contains(scr, "timeout +10s") {
		t.Fatalf("help hides the cancel keys with nothing in flight:\n%s", scr)
	}
	dimmed := h.m.theme.styles.Off.Render("cancel with reason")
	if !strings.Contains(h.m.View().Content, dimmed) {
		t.Fatalf("C is not dimmed with nothing in flight:\n%q", h.m.View().Content)
	}
	h.key("esc")
	startSlow(h)
	h.key("?")
	if !strings.Contains(h.screen(), "cancel with reason") || !strings.Contains(h.screen(), "timeout +10s") {
		t.Fatalf("help does not list C and + with a request in flight:\n%s", h.screen())
	}
	if strings.Contains(h.m.View().Content, dimmed) {
		t.Fatalf("C is dimmed with a request in flight")
	}
}

func TestServerStringsAreRenderedInert(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	startSlow(h)
	h.progress(2, 1, 10, "\x1b]52;c;ZXZpbA==\x07\x1b[2J\u202eevil")
	content := h.m.View().Content
	for _, bad := range []string{"\x1b]52", "\x1b[2J", "\u202e", "\x07"} {
		if strings.Contains(content, bad) {
			t.Fatalf("raw %q reached the terminal", bad)
		}
	}
	if !strings.Contains(h.screen(), "␛]52;c;ZXZpbA==") {
		t.Fatalf("the escape sequence is not shown as text:\n%s", h.screen())
	}
}

func TestExportWritesASnapshotInACommand(t *testing.T) {
	var got Snapshot
	var path string
	h := newHarness(t, 120, 35)
	h.m.opts.Export = func(p string, s Snapshot) (string, error) { path, got = p, s; return p + ".written", nil }
	h.connect()
	startSlow(h)
	h.key("e")
	if path == "" || len(got.Entries) == 0 {
		t.Fatalf("export wrote %q with %d entries", path, len(got.Entries))
	}
	if !strings.Contains(h.screen(), "trace written to "+path+".written") {
		t.Fatalf("status does not say where the trace went:\n%s", h.screen())
	}
}

func TestSendFailureEndsTheRequest(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	h.fake.sendErr = errors.New("broken pipe")
	h.key("n", "enter", "enter")
	r := h.request(2)
	if r.IsActive() {
		t.Fatalf("a request that could not be sent is still %s", r.State)
	}
}

func TestOnlyOneTickIsPending(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	startSlow(h)
	n := len(h.ticks)
	for i := 0; i < 50; i++ {
		h.progress(2, float64(i+1), 100, "tick")
	}
	if extra := len(h.ticks) - n; extra > 1 {
		t.Fatalf("%d ticks scheduled during a burst; one pending tick is enough", extra)
	}
}

func TestSecretsNeverReachTheScreen(t *testing.T) {
	h := newHarness(t, 140, 40)
	h.m.opts.Redact = func(s string) string { return strings.ReplaceAll(s, "s3cr3t-token", "[redacted]") }
	h.connect()
	id := startSlow(h)
	// A server echoing the Authorization header back in an error.
	raw := wire.ErrorResponse(wire.IntID(id), -32000, "bad credentials: Bearer s3cr3t-token")
	msg, _ := wire.Decode(raw)
	h.events(event.Event{Kind: event.Received, RequestID: wire.IntID(id), Raw: raw, Msg: msg},
		event.Event{Kind: event.Stderr, Text: "auth header was Bearer s3cr3t-token"})
	for _, view := range []string{"", "enter", "esc l", "esc s"} {
		if view != "" {
			h.key(strings.Fields(view)...)
		}
		if scr := h.m.View().Content; strings.Contains(scr, "s3cr3t") {
			t.Fatalf("a secret reached the screen in view %q:\n%s", view, h.screen())
		}
	}
	if !strings.Contains(h.screen(), "[redacted]") {
		t.Fatalf("the redaction marker is not shown:\n%s", h.screen())
	}
}

// A secret cut by truncation would no longer match the redactor, so text is
// redacted before it is fitted to a column.
func TestSecretsAreRedactedBeforeTruncation(t *testing.T) {
	const secret = "SECRETSECRETSECRETSECRET0123456789"
	h := newHarness(t, 80, 24)
	h.m.opts.Redact = func(s string) string { return strings.ReplaceAll(s, secret, "[redacted]") }
	h.connect()
	id := startSlow(h)
	h.progress(id, 1, 10, "using key "+secret+" for the upstream call")
	h.answer(id, `{"resultType":"complete","isError":true,"content":[{"type":"text","text":"bad key `+secret+`"}]}`)
	if scr := h.m.View().Content; strings.Contains(scr, "SECRETSEC") {
		t.Fatalf("part of a secret reached the screen:\n%s", h.screen())
	}
}

// Scrolled back, the log stays on what is being read while entries keep
// arriving, and g shows a full first page.
func TestLogScrollIsAnchored(t *testing.T) {
	h := newHarness(t, 120, 30)
	h.connect()
	id := startSlow(h)
	for i := 1; i <= 60; i++ {
		h.progress(id, float64(i), 100, fmt.Sprintf("step %d", i))
	}
	h.key("l", "k", "k", "k")
	before := h.screen()
	for i := 61; i <= 80; i++ {
		h.progress(id, float64(i), 100, fmt.Sprintf("step %d", i))
	}
	after := h.screen()
	body := func(s string) string { // the lines below the title
		lines := strings.Split(s, "\n")
		return strings.Join(lines[4:len(lines)-2], "\n")
	}
	if body(before) != body(after) {
		t.Fatalf("new entries moved the scrolled-back log:\n%s\n---\n%s", before, after)
	}
	h.key("g")
	if !strings.Contains(h.screen(), "showing 1–24 of") || !strings.Contains(h.screen(), "server/discover") && !strings.Contains(h.screen(), "connected") {
		t.Fatalf("g does not show a full first page:\n%s", h.screen())
	}
	h.key("G")
	if !strings.Contains(h.screen(), `"step 80"`) || !h.m.screens.logv.Following() {
		t.Fatalf("G did not return to the newest:\n%s", h.screen())
	}
}

func TestLogFilterScrollsOnlyMatches(t *testing.T) {
	h := newHarness(t, 120, 20)
	h.connect()
	id := startSlow(h)
	for i := 1; i <= 40; i++ {
		h.progress(id, float64(i), 100, fmt.Sprintf("step %d", i))
	}
	h.key("l", "/")
	h.typeText("tools/list")
	h.key("enter", "g")
	if !strings.Contains(h.screen(), "tools/list") {
		t.Fatalf("scrolling a filtered log reached an empty page:\n%s", h.screen())
	}
}

// The detail view stays on its request when a newer one is selected by
// following (here, the tools/list a reconnect sends).
func TestDetailStaysOnItsRequest(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	startSlow(h)
	h.key("enter")
	h.run(h.m.send(wire.MethodToolsList, nil, session.RequestOptions{}))
	if !strings.Contains(h.screen(), "#2 tools/call slow") {
		t.Fatalf("the detail view jumped to another request:\n%s", h.screen())
	}
	h.key("c")
	if r := h.request(2); r.State != session.StateCancelRequested {
		t.Fatalf("c in the detail view did not cancel the request shown (state %s)", r.State)
	}
}

func TestFailedCancelIsShown(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	startSlow(h)
	h.fake.cancelErr = errors.New("write to server stdin: the server is not reading its stdin")
	h.fake.signal = event.SignalNone
	h.key("c")
	// As the client does, it reports the failure as a CancelSent with it.
	h.events(event.Event{Kind: event.CancelSent, RequestID: h.m.screens.list.Selected(), Signal: event.SignalNone, Err: h.fake.cancelErr})
	if !strings.Contains(h.screen(), "the cancel could not be sent") {
		t.Fatalf("a failed cancel looks like a cancel on its way:\n%s", h.screen())
	}
	h.advance(6 * time.Second)
	if !strings.Contains(h.screen(), "the cancel could not be sent: write to server stdin") {
		t.Fatalf("the settled row hides that the cancel failed:\n%s", h.screen())
	}
}

func TestCouldNotConnectKeepsTheCause(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.m.conn.everConnected = false // as if the fake's Connect had failed
	h.send(connectedMsg{gen: h.m.conn.gen, err: errors.New(`start server "/nonexistent/server": fork/exec /nonexistent/server: no such file or directory`)})
	scr := h.screen()
	if !strings.Contains(scr, "could not connect") || !strings.Contains(scr, "no such file or directory") {
		t.Fatalf("the banner hides why the connection failed:\n%s", scr)
	}
}

// The status line's news about a request goes once the request's row tells
// its fate: "sent #2 — press c" must not linger over a failed #2.
func TestStatusAboutARequestGoesWithItsFate(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	startSlow(h)
	if !strings.Contains(h.screen(), "sent #2 tools/call — press c to cancel it") {
		t.Fatalf("no sent status:\n%s", h.screen())
	}
	h.answer(2, `{"resultType":"complete","content":[],"isError":true}`)
	if strings.Contains(h.screen(), "press c to cancel it") {
		t.Fatalf("the sent status outlived the request:\n%s", h.screen())
	}

	startSlow(h)
	h.key("c")
	if !strings.Contains(h.screen(), "#3: cancellation requested") {
		t.Fatalf("no cancel status:\n%s", h.screen())
	}
	h.progress(3, 1, 10, "still going") // news, but not the fate
	if !strings.Contains(h.screen(), "#3: cancellation requested") {
		t.Fatalf("the cancel status went before the fate was known:\n%s", h.screen())
	}
	h.answer(3, `{"resultType":"complete","content":[]}`)
	if strings.Contains(h.screen(), "#3: cancellation requested") {
		t.Fatalf("the cancel status outlived the fate:\n%s", h.screen())
	}
}

// X says how many it cancels, and the per-request acknowledgements do not
// overwrite that with the last one's.
func TestCancelAllStatusCountsThemAll(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	startSlow(h)
	startSlow(h)
	h.key("X", "y")
	if s := h.screen(); !strings.Contains(s, "› cancelling 2 requests") || strings.Contains(s, "› #") {
		t.Fatalf("status after X:\n%s", s)
	}
}

// On modern HTTP the cancel is a closed stream: C says the reason stays
// here, and the detail does not pretend it was sent.
func TestReasonOnModernHTTPIsNotSent(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.fake.info.Transport = event.TransportHTTP
	h.fake.signal = event.SignalStreamClosed
	h.connect()
	startSlow(h)
	h.key("C")
	if !strings.Contains(h.screen(), "kept here only: modern HTTP cancels by closing the stream") {
		t.Fatalf("the reason prompt does not say the reason stays here:\n%s", h.screen())
	}
	h.typeText("too slow")
	h.key("enter")
	h.events(event.Event{Kind: event.CancelSent, RequestID: wire.IntID(2), Signal: event.SignalStreamClosed, Reason: "too slow"})
	h.key("enter")
	if !strings.Contains(h.screen(), `reason "too slow" (not sent: a closed stream carries none)`) {
		t.Fatalf("the detail shows the reason as if sent:\n%s", h.screen())
	}
}

// An HTTP server that went away shows as lost once a request gets no
// response at all: the banner says why and R reconnects. A request that
// merely failed (an error answer) leaves the connection up.
func TestUnreachableHTTPServerShowsLost(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.fake.info.Transport = event.TransportHTTP
	h.connect()
	startSlow(h)
	h.events(event.Event{Kind: event.RequestFailed, RequestID: wire.IntID(2), Err: errors.New("HTTP 500"), LostConnection: true})
	if h.m.conn.state != connUp {
		t.Fatalf("an ordinary failure took the connection down:\n%s", h.screen())
	}
	startSlow(h) // #3, still running when the server goes
	startSlow(h) // #4, which finds it gone
	refused := fmt.Errorf("POST tools/call: %w", unreachableErr{errors.New("dial tcp 127.0.0.1:1: connect: connection refused")})
	h.events(event.Event{Kind: event.RequestFailed, RequestID: wire.IntID(4), Err: refused, LostConnection: true})
	if st := h.request(3).State; st != session.StateConnectionLost {
		t.Errorf("a request in flight when the server became unreachable is %s, want connection_lost", st)
	}
	s := h.screen()
	if !strings.Contains(s, "↯ disconnected") || !strings.Contains(s, "↯ server unreachable") ||
		!strings.Contains(s, "POST tools/call: dial tcp 127.0.0.1:1: connect: connection refused") || !strings.Contains(s, "press R to reconnect") {
		t.Fatalf("no lost-server banner:\n%s", s)
	}
	n := h.fake.connected
	h.key("R")
	if h.fake.connected != n+1 || h.m.conn.state != connUp {
		t.Fatalf("R did not reconnect (connects %d → %d, state %v)", n, h.fake.connected, h.m.conn.state)
	}
}

// unreachableErr is a network error marked as the HTTP transport marks one.
type unreachableErr struct{ err error }

func (u unreachableErr) Error() string   { return u.err.Error() }
func (u unreachableErr) Unwrap() []error { return []error{u.err, client.ErrUnreachable} }

// The protocol log shows a flood's merged progress as one line that
// counts it, so the rest of the log stays in view.
func TestLogShowsCoalescedProgress(t *testing.T) {
	h := newHarness(t, 140, 40)
	h.connect()
	startSlow(h)
	n := session.LogProgressPerRequest + 50
	for i := 1; i <= n; i++ {
		h.progress(2, float64(i), float64(n), "step")
	}
	h.key("l")
	want := fmt.Sprintf("progress ×%d", n-session.LogProgressPerRequest)
	if s := h.screen(); !strings.Contains(s, want) || !strings.Contains(s, "merged, until") {
		t.Fatalf("no %q line:\n%s", want, s)
	}
}

// When the marks crowd the end of the timeline (a stubborn server's late
// progress and late response after the cancel settled), every label is
// still shown.
func TestTimelineShowsEveryLabelWhenCrowded(t *testing.T) {
	for _, w := range []int{80, 120} {
		h := newHarness(t, w, 30)
		h.connect()
		startSlow(h)
		h.advance(500 * time.Millisecond)
		h.progress(2, 1, 10, "step 1")
		h.advance(2 * time.Second)
		h.key("c")
		h.cancelSent(2, event.SignalNotification)
		for i := 0; i < 6; i++ {
			h.advance(time.Second) // the late window passes: cancelled
		}
		h.advance(2 * time.Second)
		h.progress(2, 9, 10, "step 9")
		h.progress(2, 10, 10, "step 10")
		h.answer(2, `{"resultType":"complete","content":[]}`)
		h.key("enter")
		s := h.screen()
		for _, want := range []string{"sent 0s", "cancel +2.5s", "cancelled +7.5s", "2 late progress", "late response +10.5s"} {
			if !strings.Contains(s, want) {
				t.Errorf("%d columns: the timeline lost %q:\n%s", w, want, s)
			}
		}
	}
}

// Keys that cannot act now say why instead of doing nothing.
func TestKeysThatCannotActSayWhy(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	h.key("+") // tools/list, completed
	if !strings.Contains(h.screen(), "#1 is completed: its timeout no longer runs") {
		t.Errorf("+ on a finished request:\n%s", h.screen())
	}
	startSlow(h)
	h.key("c", "-")
	if !strings.Contains(h.screen(), "#2: cancellation already requested; its timeout no longer runs") {
		t.Errorf("- on a cancelling request:\n%s", h.screen())
	}
	h.events(event.Event{Kind: event.TransportClosed, Err: errors.New("the server exited")})
	h.key("n")
	if h.m.focus.mode != keymap.ModeList || !strings.Contains(h.screen(), "not connected: press R to reconnect first") {
		t.Errorf("n while disconnected:\n%s", h.screen())
	}
	h.m.focus.mode = keymap.ModeStderr
	h.m.syncKeys()
	if !h.m.keys.Export.Enabled() {
		t.Error("e does not export from the stderr view")
	}
}

// A long target loses its middle in the header, not all of itself: its
// start and end tell servers apart.
func TestHeaderShortensALongTarget(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.m.opts.Target = "npx -y @modelcontextprotocol/server-everything --with-a-long-flag /srv/data/project-alpha"
	h.connect()
	first := strings.SplitN(h.screen(), "\n", 2)[0]
	if !strings.Contains(first, "inflight · npx -y @") || !strings.Contains(first, "…") || !strings.Contains(first, "-alpha · stdio") {
		t.Fatalf("header: %q", first)
	}
}

// A command whose last argument is the transport's name (server-everything
// run as "… index.js stdio") does not read "stdio · stdio": the header
// says which word is the transport.
func TestHeaderTellsTransportFromLastArgument(t *testing.T) {
	for _, w := range []int{120, 80} {
		h := newHarness(t, w, 24)
		h.m.opts.Target = `"everything": /root/.cache/node /root/.cache/server-everything/dist/index.js stdio`
		h.connect()
		first := strings.SplitN(h.screen(), "\n", 2)[0]
		if !strings.Contains(first, ".js stdio · transport stdio") || strings.Contains(first, "stdio · stdio") {
			t.Errorf("header at %d: %q", w, first)
		}
	}
}

// The detail of a request that failed without a response heads what
// inflight saw as an error, not as the server's response.
func TestDetailLocalFailureIsNoResponse(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.connect()
	startSlow(h)
	h.events(event.Event{Kind: event.RequestFailed, RequestID: wire.IntID(2), Err: errors.New("HTTP 500 Internal Server Error: boom")})
	h.key("enter")
	s := h.screen()
	if !strings.Contains(s, "ERROR (seen by inflight; the server sent no response)") || strings.Contains(s, "\nRESPONSE") {
		t.Fatalf("detail:\n%s", s)
	}
}

// On a narrow terminal the footer keeps the keys without which a person
// is stuck — help and quit — rather than cutting them off.
func TestNarrowFooterKeepsHelpAndQuit(t *testing.T) {
	h := newHarness(t, 60, 20)
	h.connect()
	startSlow(h)
	lines := strings.Split(h.screen(), "\n")
	footer := lines[len(lines)-1]
	if !strings.Contains(footer, "? help") || !strings.Contains(footer, "q quit") || !strings.Contains(footer, "c cancel") {
		t.Fatalf("footer at 60 columns: %q", footer)
	}
}

// On modern HTTP the closed stream can settle a request before the cancel's
// acknowledgement reaches the UI: the acknowledgement then leaves no
// "cancellation requested" under a row that already says cancelled.
func TestCancelAckAfterTheFateSaysNothingStale(t *testing.T) {
	h := newHarness(t, 120, 35)
	h.fake.info.Transport = event.TransportHTTP
	h.fake.signal = event.SignalStreamClosed
	h.connect()
	startSlow(h)
	if _, err := h.m.tracker.RequestCancel(wire.IntID(2), "user", session.CauseUser, h.now); err != nil {
		t.Fatal("cancel refused")
	}
	h.events(event.Event{Kind: event.CancelSent, RequestID: wire.IntID(2), Signal: event.SignalStreamClosed},
		event.Event{Kind: event.StreamClosed, RequestID: wire.IntID(2), ByClient: true})
	if st := h.request(2).State; st != session.StateCancelled {
		t.Fatalf("state %s", st)
	}
	h.send(cancelDoneMsg{gen: h.m.conn.gen, id: wire.IntID(2), signal: event.SignalStreamClosed})
	if strings.Contains(h.screen(), "#2: cancellation requested") {
		t.Fatalf("a stale status under a settled row:\n%s", h.screen())
	}
}

// In the protocol log ↑/↓ select an entry and enter opens it whole: what
// the row cuts (a long payload) is all there; esc goes back to the log.
func TestLogEntryOpensWhole(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.connect()
	startSlow(h)
	long := strings.Repeat("a long progress message ", 8) + "THE END"
	h.progress(2, 1, 10, long)
	h.answer(2, `{"resultType":"complete","content":[]}`)
	h.key("l")
	if strings.Contains(h.screen(), "THE END") {
		t.Fatalf("the row was not cut, so the test proves nothing:\n%s", h.screen())
	}
	// The newest entries are the answer and its state line; the progress
	// comes two or three rows above.
	selectedHas := func(s string) bool {
		abs, ok := h.m.screens.logv.Selected(h.m.env())
		lg := h.m.tracker.Log()
		return ok && strings.Contains(string(lg.At(int(abs-(lg.Total()-int64(lg.Len())))).Raw), s)
	}
	for i := 0; i < 6 && !selectedHas("THE END"); i++ {
		h.key("up")
	}
	if !strings.Contains(h.screen(), "▌") {
		t.Fatalf("no selection mark after ↑:\n%s", h.screen())
	}
	h.key("enter")
	s := h.screen()
	if !h.m.screens.logv.EntryOpen() || !strings.Contains(s, "LOG ENTRY") || !strings.Contains(s, "THE END") || !strings.Contains(s, `"progressToken": 2`) {
		t.Fatalf("the entry is not shown whole:\n%s", s)
	}
	h.key("esc")
	if h.m.screens.logv.EntryOpen() || h.m.focus.mode != keymap.ModeLog || !strings.Contains(h.screen(), "PROTOCOL LOG") {
		t.Fatalf("esc did not go back to the log:\n%s", h.screen())
	}
}
