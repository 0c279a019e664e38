package hostile

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// Environment variables that make a re-executed test binary a hostile peer.
const (
	// EnvPeer names the stdio peer to serve.
	EnvPeer = "INFLIGHT_HOSTILE_PEER"
	// EnvRecord, when set, is a file that receives every line the client
	// wrote, appended as it arrives, so a test can read what a child
	// received after the child is gone.
	EnvRecord = "INFLIGHT_HOSTILE_RECORD"
)

// ExitCrashed is the exit status of a peer that crashed on purpose.
const ExitCrashed = 3

// RunFromEnv serves the peer EnvPeer names on this process's stdin and
// stdout and exits; without EnvPeer it returns at once. A TestMain calls it
// first, so that the test binary re-executed by Command is the peer.
func RunFromEnv() {
	name := os.Getenv(EnvPeer)
	if name == "" {
		return
	}
	p, ok := Lookup(name)
	if !ok {
		fmt.Fprintf(os.Stderr, "hostile: no peer named %q\n", name)
		os.Exit(2)
	}
	if p.Stubborn {
		signal.Ignore(syscall.SIGTERM)
	}
	s := newSession(name, os.Stdout, os.Stdout.Close)
	s.exit = func() { os.Exit(ExitCrashed) }
	s.stderr = os.Stderr
	if path := os.Getenv(EnvRecord); path != "" {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			fmt.Fprintf(os.Stderr, "hostile: %v\n", err)
			os.Exit(2)
		}
		s.record = f
	}
	fmt.Fprintf(os.Stderr, "hostile %s: started, pid %d\n", name, os.Getpid())
	p.serve(s, os.Stdin)
	fmt.Fprintf(os.Stderr, "hostile %s: stdin ended, exiting\n", name)
	os.Exit(0)
}

// Command returns how to start p as a child process: this very binary,
// re-executed with the environment RunFromEnv reads. record, when not
// empty, is the file that receives what the client wrote.
func Command(p Stdio, record string) (path string, env []string, err error) {
	exe, err := os.Executable()
	if err != nil {
		return "", nil, fmt.Errorf("hostile: find the test binary: %w", err)
	}
	// Under -race a process sleeps a second before it exits (GORACE
	// atexit_sleep_ms); a peer that exits at once must look like one.
	env = []string{EnvPeer + "=" + p.Name, "GORACE=atexit_sleep_ms=0"}
	if record != "" {
		env = append(env, EnvRecord+"="+record)
	}
	return exe, env, nil
}
