package client_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"inflight/internal/testkit/hostile"
	"inflight/wire"
)

// childEnv selects a child-server mode when the test binary is re-executed
// as a stdio MCP server (see runChild).
const childEnv = "INFLIGHT_CLIENT_TEST_CHILD"

func TestMain(m *testing.M) {
	hostile.RunFromEnv()
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(runChild(mode))
	}
	goleak.VerifyTestMain(m)
}

// runChild is a small legacy stdio server run in a child process, to test
// what only a real process shows: spawn, environment, working directory,
// stderr, exit codes and the shutdown escalation.
//
// Modes:
//   - "server": answers initialize, test/env (its environment variable
//     INFLIGHT_CHILD_VALUE and working directory), ignores test/hang, exits
//     with status 3 on test/exit, closes its stdout (and keeps running until
//     killed) on test/closestdout, and exits 0 at stdin EOF.
//   - "stubborn": like server, but ignores SIGTERM and stdin EOF, so only
//     SIGKILL ends it.
func runChild(mode string) int {
	fmt.Fprintln(os.Stderr, "child started")
	fmt.Fprintln(os.Stderr, "mode "+mode)
	if mode == "stubborn" {
		signal.Ignore(syscall.SIGTERM)
	}
	out := bufio.NewWriter(os.Stdout)
	reply := func(b []byte) {
		out.Write(b)
		out.WriteByte('\n')
		out.Flush()
	}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		msg, err := wire.Decode(sc.Bytes())
		if err != nil || msg.Kind != wire.KindRequest {
			continue
		}
		switch msg.Method {
		case wire.MethodInitialize:
			reply(wire.ResultResponse(msg.ID, json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"child","version":"1"}}`)))
		case "test/env":
			wd, _ := os.Getwd()
			res, _ := json.Marshal(map[string]any{"value": os.Getenv("INFLIGHT_CHILD_VALUE"), "cwd": wd, "pid": os.Getpid()})
			reply(wire.ResultResponse(msg.ID, res))
		case "test/hang":
		case "test/exit":
			fmt.Fprintln(os.Stderr, "exiting mid-request")
			os.Exit(3)
		case "test/closestdout":
			os.Stdout.Close()
			for { // keep running with no stdout, until a signal ends it
				time.Sleep(time.Hour)
			}
		default:
			reply(wire.ErrorResponse(msg.ID, wire.CodeMethodNotFound, "method not found"))
		}
	}
	if mode == "stubborn" {
		for {
			time.Sleep(time.Hour)
		}
	}
	return 0
}
