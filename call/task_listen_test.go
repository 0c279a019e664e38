package call

import (
	"bytes"
	"context"
	"testing"
	"time"

	"inflight/internal/testkit/hostile"
	"inflight/internal/testkit/testserver"
	"inflight/runner"
	"inflight/session"
	"inflight/wire"
)

// Modern notifications/tasks on a subscriptions/listen stream: a listen
// naming a task in notifications.taskIds gets the task's completion as a
// notification carrying the listen's ID (_meta subscriptionId), not the
// task's request's. It reaches its task by taskId — the task request
// completes with the result the notification inlined, though inflight
// never polled — and counts as a notification of the subscription.

// listenForTask runs a task on peer — inflight itself opens the listen for
// its notifications/tasks — and returns both once the task's request is
// final (or after a bound).
func listenForTask(t *testing.T, peer hostile.Stdio) (*runner.Conn, *session.Request, *session.Request) {
	t.Helper()
	ctx := context.Background()
	cn, err := runner.Dial(ctx, testserver.InProcess(peer, testserver.Modern.Version)(t), runner.Options{LateWindow: testserver.Late, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cn.Close)
	call, err := cn.Begin(ctx, wire.MethodToolsCall, testserver.ToolParams(t, hostile.ToolName, `{}`), session.RequestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cn.Wait(ctx, func() bool { return call.IsTask() || call.State.IsFinal() }, time.Now().Add(5*time.Second))
	if !call.IsTask() {
		t.Fatalf("the call did not become a task: %s", call.State)
	}
	cn.Wait(ctx, func() bool { return call.State.IsFinal() }, time.Now().Add(5*time.Second))
	listen, ok := cn.Tracker().Get(call.Task.ListenID())
	if !ok || listen.Role != session.RoleListen || !bytes.Contains(listen.ChildParams, []byte(`"taskIds":["`+call.Task.ID+`"]`)) {
		t.Fatalf("inflight opened no subscriptions/listen naming the task (%+v)", listen)
	}
	return cn, call, listen
}

func TestCallTaskNotificationOnListen(t *testing.T) {
	t.Parallel()
	cn, call, listen := listenForTask(t, hostile.TaskListen)
	tr := cn.Tracker()
	if call.State != session.StateCompleted || call.Task.Status != wire.TaskCompleted || call.Task.Polls != 0 {
		t.Fatalf("call %s, task %+v: want completed by the notification, never polled", call.State, call.Task)
	}
	if h := call.Task.History; len(h) != 2 || h[1].Via != session.ViaNotification {
		t.Errorf("history %+v: want the completion via the notification", h)
	}
	if raw, isErr, ok := tr.TaskOutcome(call.ID); !ok || isErr || !bytes.Contains(raw, []byte("the work of task-1 is done")) {
		t.Errorf("outcome %s (error %t, kept %t): want the result the notification inlined", raw, isErr, ok)
	}
	if !listen.Acked || listen.Notifications != 1 {
		t.Errorf("listen %s acked %t notifications %d: want one notification on the acknowledged subscription", listen.State, listen.Acked, listen.Notifications)
	}
	// The task is over: inflight closes the listen it opened for it.
	cn.Wait(context.Background(), func() bool { return listen.State.IsFinal() }, time.Now().Add(5*time.Second))
	if listen.State != session.StateCancelled {
		t.Errorf("listen %s after its task ended: want it cancelled by inflight", listen.State)
	}
	if n := tr.Violations().Total(); n != 0 {
		t.Errorf("%d violations: %+v", n, tr.Violations().At(0))
	}
}

// The same notification before the subscription's acknowledgment is
// flagged on the subscription, and still ends its task.
func TestCallTaskNotificationOnListenBeforeAck(t *testing.T) {
	t.Parallel()
	cn, call, listen := listenForTask(t, hostile.TaskListenBeforeAck)
	if call.State != session.StateCompleted {
		t.Errorf("call %s: the notification did not reach its task", call.State)
	}
	if got := cn.Tracker().Violations().ForRequest(listen.ID); len(got) != 1 || got[0].Code != session.ViolationNotificationBeforeAck {
		t.Errorf("listen violations %+v: want notification_before_ack", got)
	}
}
