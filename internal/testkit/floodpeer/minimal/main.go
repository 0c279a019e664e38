// Command minimal is the least a client can do with a flood: it starts the
// server given after --, sends one tools/call of floodpeer's flood tool for
// -n notifications, reads every line until the answer, checks each is JSON
// with the right progress token (floodpeer.Count), closes the server's
// stdin, waits for it and prints the count. It is the floor `inflight call`
// is measured against, process start to exit:
//
//	minimal -n 1000000 -- ./peer
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"

	"inflight/internal/testkit/floodpeer"
)

func main() {
	n := flag.Int("n", floodpeer.DefaultCount, "how many progress notifications to ask for")
	flag.Parse()
	if err := run(*n, flag.Args()); err != nil {
		fmt.Fprintf(os.Stderr, "minimal: %v\n", err)
		os.Exit(1)
	}
}

func run(n int, argv []string) error {
	if len(argv) == 0 {
		return errors.New("give the server's command after --")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	if _, err := stdin.Write(append(floodpeer.Request(n), '\n')); err != nil {
		return fmt.Errorf("send the request: %w", err)
	}
	got, err := floodpeer.Count(stdout)
	_ = stdin.Close()
	if werr := cmd.Wait(); err == nil && werr != nil {
		err = fmt.Errorf("the server: %w", werr)
	}
	if err != nil {
		return err
	}
	if got != n {
		return fmt.Errorf("counted %d progress notifications, asked for %d", got, n)
	}
	fmt.Println(got)
	return nil
}
