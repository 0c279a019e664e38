//go:build !unix

package proxy

import (
	"os"
	"os/exec"
)

var (
	sigTerm = os.Kill
	sigKill = os.Kill
	// No signal asks for a release here.
	sigRelease os.Signal
)

func ownGroup(*exec.Cmd) {}

func groupAlive(*exec.Cmd) bool { return false }

func signalGroup(cmd *exec.Cmd, sig os.Signal) {
	if cmd.Process != nil {
		_ = cmd.Process.Signal(sig)
	}
}

// ownerOf is unknown here: the directory's mode alone is checked.
func ownerOf(os.FileInfo) (int, bool) { return 0, false }

// noFollow is unix's O_NOFOLLOW, which other systems lack: what opens
// with it looks for a link itself first.
const noFollow = 0
