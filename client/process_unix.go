//go:build unix

package client

import (
	"os/exec"
	"syscall"
)

const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

// setProcessGroup puts the server in its own process group, so that a
// Ctrl+C at the terminal reaches inflight (which cancels what is in flight
// first) and not the server directly, and so that a stop signal reaches
// whatever the server started too.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// groupAlive reports whether any process is left in the server's process
// group (the server itself, or whatever it started and left behind). A
// zombie counts: it holds no pipe, but it is gone only once reaped.
func groupAlive(cmd *exec.Cmd) bool {
	if cmd.Process == nil {
		return false
	}
	return syscall.Kill(-cmd.Process.Pid, 0) == nil
}

func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process == nil {
		return
	}
	if err := syscall.Kill(-cmd.Process.Pid, sig); err != nil {
		_ = cmd.Process.Signal(sig)
	}
}
