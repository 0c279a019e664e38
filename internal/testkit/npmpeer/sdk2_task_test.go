package npmpeer_test

import (
	"encoding/json"
	"strings"
	"testing"

	"inflight/internal/testkit/npmpeer"
)

// The TypeScript SDK 2.x server (@modelcontextprotocol/server 2.4.0) and
// the modern tasks extension. The SDK does not implement the extension —
// its dist has no "io.modelcontextprotocol/tasks", no pollIntervalMs, no
// task store — but it leaves room for it on protocol revision 2026-07-28:
// a tools/call handler's resultType other than "complete" is passed
// through verbatim, and tasks/get and tasks/cancel registered with an
// explicit schema get past the era gate ("The names SEP-2663 re-defines
// for the Tasks extension"). sdk2TaskServer is a server written that way:
// the SDK does the wire (serveStdio's era choice, server/discover,
// per-request _meta, resultType stamping, errors); the script keeps its
// tasks. inflight follows its task to completion and cancels one with
// tasks/cancel.
const sdk2TaskServer = `
import { Server } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import * as z from "zod";

const EXT = "io.modelcontextprotocol/tasks";
const POLL_MS = 50;
const tasks = new Map();
let n = 0;

function view(t, withOutcome) {
  const out = { taskId: t.taskId, status: t.status, statusMessage: t.statusMessage, createdAt: t.createdAt,
    lastUpdatedAt: t.lastUpdatedAt, ttlMs: 60000, pollIntervalMs: POLL_MS };
  if (withOutcome && t.status === "completed") out.result = t.result;
  return out;
}

function notFound(id) {
  return Object.assign(new Error("no task " + id), { code: -32602 });
}

function build() {
  const server = new Server({ name: "sdk2-tasks", version: "1" }, { capabilities: { tools: {}, extensions: { [EXT]: {} } } });
  server.setRequestHandler("tools/list", () => ({
    tools: [{ name: "sdk2_task", description: "Works for ms milliseconds, as a task.",
      inputSchema: { type: "object", properties: { ms: { type: "number" } } }, execution: { taskSupport: "optional" } }],
  }));
  server.setRequestHandler("tools/call", (req) => {
    const ms = Number(req.params.arguments?.ms ?? 300);
    const now = new Date().toISOString();
    const t = { taskId: "sdk2-task-" + ++n, status: "working", statusMessage: "working", createdAt: now, lastUpdatedAt: now };
    tasks.set(t.taskId, t);
    t.timer = setTimeout(() => {
      Object.assign(t, { status: "completed", statusMessage: "done", lastUpdatedAt: new Date().toISOString(),
        result: { content: [{ type: "text", text: "sdk2_task worked " + ms + "ms" }], isError: false } });
    }, ms);
    return { resultType: "task", ...view(t, false) };
  });
  const byId = { params: z.object({ taskId: z.string() }).passthrough() };
  server.setRequestHandler("tasks/get", byId, (p) => {
    const t = tasks.get(p.taskId);
    if (!t) throw notFound(p.taskId);
    return { resultType: "complete", ...view(t, true) };
  });
  server.setRequestHandler("tasks/cancel", byId, (p) => {
    const t = tasks.get(p.taskId);
    if (!t) throw notFound(p.taskId);
    if (t.status === "working") {
      clearTimeout(t.timer);
      Object.assign(t, { status: "cancelled", statusMessage: "cancelled by tasks/cancel", lastUpdatedAt: new Date().toISOString() });
    }
    return { resultType: "complete" };
  });
  return server;
}

serveStdio(() => build());
`

type sdk2TaskReport struct {
	State  string          `json:"state"`
	Era    string          `json:"era"`
	Server string          `json:"server"`
	Result json.RawMessage `json:"result"`
	Cancel *struct {
		Signal string `json:"signal"`
	} `json:"cancel"`
	Task *struct {
		ID             string `json:"id"`
		Status         string `json:"status"`
		Polls          int    `json:"polls"`
		PollIntervalMs *int64 `json:"pollIntervalMs"`
		TTLMs          *int64 `json:"ttlMs"`
		History        []struct {
			Status string `json:"status"`
			Via    string `json:"via"`
		} `json:"history"`
		Cancel *struct {
			AckAtMs *int64 `json:"ackAtMs"`
		} `json:"cancel"`
	} `json:"task"`
	Violations []json.RawMessage `json:"violations"`
}

func runSDK2Task(t *testing.T, server []string, extra ...string) sdk2TaskReport {
	t.Helper()
	args := append([]string{"call", "--tool", "sdk2_task", "--task", "--json", "--protocol-version", "2026-07-28"}, extra...)
	out := runInflight(t, append(append(args, "--"), server...)...)
	var r sdk2TaskReport
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if r.Era != "modern" || !strings.Contains(r.Server, "sdk2-tasks") {
		t.Fatalf("era %s server %q: want the modern era on the SDK 2 server\n%s", r.Era, r.Server, out)
	}
	if len(r.Violations) != 0 {
		t.Errorf("violations %s", r.Violations)
	}
	return r
}

func TestSDK2ModernTask(t *testing.T) {
	t.Parallel()
	in := npmpeer.Need(t, npmpeer.Node, npmpeer.SDK2Server)
	server := in.Script(t, "sdk2-tasks.mjs", sdk2TaskServer)

	r := runSDK2Task(t, server, "--args", `{"ms":300}`)
	if r.State != "completed" || r.Task == nil || r.Task.Status != "completed" || r.Task.Polls < 2 ||
		r.Task.PollIntervalMs == nil || *r.Task.PollIntervalMs != 50 || r.Task.TTLMs == nil || *r.Task.TTLMs != 60000 {
		t.Fatalf("want a completed task polled at the server's 50ms: %+v", r.Task)
	}
	if !strings.Contains(string(r.Result), "sdk2_task worked 300ms") {
		t.Errorf("result %s: want the result the last tasks/get inlined", r.Result)
	}

	r = runSDK2Task(t, server, "--args", `{"ms":30000}`, "--cancel-after", "400ms", "--late-window", "1s")
	if r.State != "cancelled" || r.Cancel == nil || r.Cancel.Signal != "tasks/cancel" || r.Task == nil || r.Task.Cancel == nil ||
		r.Task.Cancel.AckAtMs == nil || r.Task.Status != "cancelled" {
		t.Fatalf("want the task cancelled with tasks/cancel, acknowledged, then polled cancelled: state %s cancel %+v task %+v", r.State, r.Cancel, r.Task)
	}
}

// check's tasks group on the same server. The 2026-07-28 wire has no
// execution.taskSupport (the SDK drops it from tools/list, as the
// extension defines none), so the task tool is named with --task-tool.
func TestSDK2ModernTaskCheck(t *testing.T) {
	t.Parallel()
	in := npmpeer.Need(t, npmpeer.Node, npmpeer.SDK2Server)
	server := in.Script(t, "sdk2-tasks.mjs", sdk2TaskServer)
	args := []string{"check", "--tool", "sdk2_task", "--args", `{"ms":600}`, "--task-tool", "sdk2_task", "--task-args", `{"ms":300}`,
		"--protocol-version", "2026-07-28", "--cancel-after", "200ms", "--late-window", "500ms", "--json", "--"}
	out := runInflight(t, append(args, server...)...)
	var rep struct {
		Findings []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
			Detail string `json:"detail"`
		} `json:"findings"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got := map[string]string{}
	for _, f := range rep.Findings {
		got[f.ID] = f.Status + " " + f.Detail
	}
	for _, id := range []string{"tasks.terminal_immutable", "tasks.cancel", "tasks.unknown_id", "tasks.no_notifications_cancelled"} {
		if !strings.HasPrefix(got[id], "PASS ") {
			t.Errorf("%s: %q, want a pass", id, got[id])
		}
	}
}
