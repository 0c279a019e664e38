package check

import (
	"cmp"
	"strings"
	"testing"
	"time"

	"inflight/internal/testkit/hostile"
	"inflight/internal/testkit/testserver"
)

// The tasks group against misbehaving task peers of ours (package hostile,
// task_peers.go): each check of the group that a peer breaks fails, with
// a detail that says what the server did.

func TestCheckTaskPeers(t *testing.T) {
	for _, tc := range []struct {
		name  string
		peer  hostile.Stdio
		era   testserver.Era
		check string
		says  string
		// or is another detail that says the same (""; none): the flip is
		// seen by the tasks/get of the check's own, or first by the one
		// more poll the tracker makes after a terminal status.
		or string
		// late is the check's late window (0: 300ms).
		late time.Duration
	}{
		{"flip/modern", hostile.TaskFlip, testserver.Modern, CheckTaskTerminal, `was completed; a tasks/get after that said working`,
			`said another status after it was completed (a violation the tracker recorded)`, 0},
		{"flip/legacy", hostile.TaskFlip, testserver.Legacy, CheckTaskTerminal, `task "task-1" said another status after it was completed`, "", 0},
		{"cancelled-notification/modern", hostile.TaskCancelledNotification, testserver.Modern, CheckTaskNoCancelled, "the server sent notifications/cancelled for a task", "", 0},
		{"cancelled-notification/legacy", hostile.TaskCancelledNotification, testserver.Legacy, CheckTaskNoCancelled, "the server sent notifications/cancelled for a task", "", 0},
		{"cancel-accepts-terminal/legacy", hostile.TaskCancelAcceptsTerminal, testserver.Legacy, CheckTaskCancelTerminal, "tasks/cancel of the completed task ended completed instead of an error", "", 0},
		{"cancel-not-cancelled/legacy", hostile.TaskCancelNotCancelled, testserver.Legacy, CheckTaskCancel, "then ended completed", "",
			// The peer suggests 20ms polls and completes after 8 of them:
			// polled at session.MinPollInterval, that is about a second.
			1500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rep, _ := runCheck(t, Options{Target: testserver.InProcess(tc.peer, tc.era.Version)(t), Tool: hostile.ToolName,
				CancelAfter: 100 * time.Millisecond, LateWindow: cmp.Or(tc.late, 300*time.Millisecond), Timeout: 2 * time.Second})
			f, ok := findingsByID(rep)[tc.check]
			if !ok {
				t.Fatalf("no %s finding; findings %+v skipped %+v", tc.check, rep.Findings, rep.Skipped)
			}
			if f.Status != StatusFail || !strings.Contains(f.Detail, tc.says) && (tc.or == "" || !strings.Contains(f.Detail, tc.or)) {
				t.Errorf("%s: %s %q, want FAIL saying %q", tc.check, f.Status, f.Detail, tc.says)
			}
		})
	}
}
