//go:build !unix

package runner

import "os/exec"

func setProcessGroup(*exec.Cmd) {}

// signalGroup kills the server: without Unix signals there is no gentler
// step.
func signalGroup(cmd *exec.Cmd, _ bool) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
