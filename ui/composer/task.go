package composer

import "inflight/keymap"

// taskCall reports whether a call of tool t is sent as a task: in the
// legacy era, always for a tool that requires it, when asked (ctrl+t) for
// one that allows it.
func (c *Model) taskCall(t Tool) bool {
	return c.legacy && (t.TaskSupport == "required" || (t.TaskSupport == "optional" && c.asTask))
}

// toggleTask is ctrl+t in a tool's form; it says what it did.
func (c *Model) toggleTask() string {
	t, ok := c.tool()
	switch {
	case c.kind != KindTool || !ok:
		return keymap.Key(c.keys.AsTask) + " runs a tool call as a task; this is no tool call"
	case !c.legacy:
		return "in the modern era the server decides whether a call becomes a task (inflight always declares the tasks extension)"
	case t.TaskSupport == "required":
		return "this tool requires a task: it is always sent as one"
	case t.TaskSupport != "optional":
		return "this tool does not support tasks (its execution.taskSupport is not optional or required)"
	}
	c.asTask = !c.asTask
	if c.asTask {
		return "this call will run as a task (tasks/get polls it; c sends tasks/cancel)"
	}
	return "this call will run as an ordinary request"
}

// taskLine is the tool form's line about tasks, "" when none applies.
func (c *Model) taskLine(t Tool) string {
	switch {
	case !c.legacy && (t.TaskSupport == "required" || t.TaskSupport == "optional"):
		return "the tool supports tasks: the server decides whether this call becomes one"
	case !c.legacy:
		return ""
	case t.TaskSupport == "required":
		return "runs as a task: the tool requires one (tasks/get polls it; c sends tasks/cancel)"
	case t.TaskSupport == "optional" && c.asTask:
		return "runs as a task · " + keymap.Key(c.keys.AsTask) + " to send it as an ordinary request"
	case t.TaskSupport == "optional":
		return "an ordinary request · " + keymap.Key(c.keys.AsTask) + " to run it as a task (the tool allows one)"
	}
	return ""
}
