package cli

import (
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/pflag"
)

// splitDash splits a command's arguments at a literal "--": what comes
// before is the command's own positional arguments, what follows is a stdio
// server's command line.
func splitDash(args []string, dash int) (positional, command []string) {
	if dash < 0 {
		return args, nil
	}
	return args[:dash], args[dash:]
}

// looksLikeURL reports whether a positional argument is an http(s) URL.
func looksLikeURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

// durationFlag is a duration flag that refuses negative values, and zero
// too when positive is set: "--timeout 0" must not quietly mean "no
// timeout", nor "--late-window -1s" the default.
type durationFlag struct {
	p        *time.Duration
	positive bool
}

func (f *durationFlag) String() string {
	if *f.p == 0 {
		return "0" // what pflag takes for "no default" in help
	}
	return f.p.String()
}
func (f *durationFlag) Type() string { return "duration" }

func (f *durationFlag) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		// A bare number is seconds, as the composer takes it.
		secs, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || math.IsNaN(secs) || math.IsInf(secs, 0) || math.Abs(secs) > 1e9 {
			return fmt.Errorf("not a duration (try 30s, 2m, or a number of seconds)")
		}
		d = time.Duration(secs * float64(time.Second))
	}
	switch {
	case d < 0:
		return fmt.Errorf("must not be negative")
	case d == 0 && f.positive:
		return fmt.Errorf("must be longer than zero")
	}
	*f.p = d
	return nil
}

// durationVar defines a duration flag with its default; positive refuses
// zero as well as negative values.
func durationVar(fs *pflag.FlagSet, p *time.Duration, name string, def time.Duration, usage string, positive bool) {
	*p = def
	fs.Var(&durationFlag{p: p, positive: positive}, name, usage)
}

// isTerminal reports whether w is a terminal, so that progress is drawn as
// a bar rather than printed as lines. (Not "a character device": /dev/null
// is one too, and a bar redrawn into it is only noise for whoever reads
// the output it stands for.)
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}
