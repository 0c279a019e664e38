package cli

import (
	"context"
	"errors"
	"fmt"
	"os"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"

	"inflight/exitcode"
	"inflight/target"
	"inflight/termsafe"
	"inflight/ui"
	"inflight/wire"
)

// manyServers reports whether the TUI opens several servers of --config:
// --server given more than once, or none given for a file of several on a
// terminal (then names is nil: the picker chooses). Anything else, and any
// error reading the file, is the one server's path (Resolve says what is
// wrong).
func manyServers(tf *target.Flags, command []string, bare string) (names []string, many bool) {
	if tf.Config() == "" || len(command) > 0 || bare != "" {
		return nil, false
	}
	if given := tf.Servers(); len(given) > 1 {
		names, err := tf.ConfigServers()
		return names, err == nil && len(names) > 1
	} else if len(given) == 1 {
		return nil, false
	}
	all, err := tf.ConfigServers()
	if err != nil || len(all) < 2 || !term.IsTerminal(os.Stdin.Fd()) || !term.IsTerminal(os.Stdout.Fd()) {
		return nil, false
	}
	return nil, true
}

// runInteractiveMany opens the TUI on several servers of --config (the
// ones named, or those the picker chose), each connected on its own, its
// requests in the one list.
func runInteractiveMany(ctx context.Context, tf *target.Flags, names []string, callFlags []string, opts InteractiveOptions) int {
	fail := func(code int, err error) int {
		fmt.Fprintf(opts.Stderr, "inflight: %s\n", termsafe.Line(err.Error()))
		return code
	}
	if !term.IsTerminal(os.Stdin.Fd()) || !term.IsTerminal(os.Stdout.Fd()) {
		return fail(exitcode.Usage, errors.New("the interactive view needs a terminal; for scripts use `inflight call` or `inflight check --all`"))
	}
	if opts.TracePath != "" {
		return fail(exitcode.Usage, errors.New("--trace records one server: give one --server NAME"))
	}
	if names == nil {
		chosen, err := pickServers(ctx, tf)
		if err != nil {
			return fail(1, err)
		}
		if len(chosen) == 0 {
			return exitcode.Completed
		}
		names = chosen
	}
	for _, call := range callFlags {
		_, params, _ := ParseCallFlag(call)
		opts.Calls = append(opts.Calls, ui.Call{Method: wire.MethodToolsCall, Params: params})
	}
	if len(names) == 1 {
		t, err := tf.ResolveServer(names[0])
		if err != nil {
			return fail(exitcode.Usage, err)
		}
		if t.Auth != nil {
			t.Auth.Prompt = nil
		}
		return runInteractive(ctx, t, opts)
	}
	members := make([]ui.Member, 0, len(names))
	for _, name := range names {
		members = append(members, ui.Member{Name: name, Options: memberOptions(ctx, tf, name, opts)})
	}
	f, err := ui.NewFleet(members, ui.FleetOptions{Dark: true})
	if err != nil {
		return fail(exitcode.Usage, err)
	}
	runErr := runProgramThen(ctx, f, func() {
		f.Stop()
		for _, m := range f.Members() {
			if c := m.Conn(); c != nil {
				_ = c.Close()
			}
		}
	})
	code := tuiExitCode(runErr, f.Interrupted())
	if code == 1 {
		return fail(code, runErr)
	}
	return code
}

// memberOptions are the root model's options for one server of the
// fleet; a server whose entry cannot be used fails to connect, saying
// why, and the others still open.
func memberOptions(ctx context.Context, tf *target.Flags, name string, opts InteractiveOptions) ui.Options {
	t, err := tf.ResolveServer(name)
	var o ui.Options
	if err == nil {
		if t.Auth != nil {
			t.Auth.Prompt = nil
		}
		// The target's description begins with its name in the file.
		o, err = interactiveOptions(ctx, t, opts, nil)
	}
	if err != nil {
		why := errors.New(t.Redactor().Error(err))
		return ui.Options{Target: name, Transport: t.Transport(), Redact: t.Redactor().String, Dark: true,
			Dial: func() (ui.Client, error) { return nil, why }}
	}
	return o
}

// pickServers offers the config's servers and returns the ones chosen.
func pickServers(ctx context.Context, tf *target.Flags) ([]string, error) {
	all, err := tf.ConfigServers()
	if err != nil {
		return nil, err
	}
	offer := make([]ui.PickServer, len(all))
	for i, name := range all {
		t, err := tf.ResolveServer(name)
		offer[i] = ui.PickServer{Name: name, Transport: t.Transport(), Describe: headerTarget(t), Err: err}
		if err != nil {
			offer[i].Err = errors.New(t.Redactor().Error(err))
		}
	}
	p := ui.NewPicker(offer, true)
	if _, err := tea.NewProgram(p, tea.WithContext(ctx)).Run(); err != nil && !errors.Is(err, tea.ErrProgramKilled) {
		return nil, err
	}
	return p.Chosen(), nil
}
