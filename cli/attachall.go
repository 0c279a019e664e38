package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"sync"

	tea "charm.land/bubbletea/v2"

	"inflight/exitcode"
	"inflight/proxy"
	"inflight/termsafe"
	"inflight/ui"
)

// proxyJoiner attaches to the proxies running in a socket directory, each
// once: the ones there when attach --all starts, then, asked again every
// second by the view, those that started since. A proxy is known by its
// name and process, so one started again under the same name joins anew.
// One that could not be attached to (it refused: it has as many viewers
// as it takes) is tried again at the next ask, and said until it joins or
// goes.
type proxyJoiner struct {
	dir string

	mu    sync.Mutex
	seen  map[string]bool
	conns []net.Conn
	// failed says why a running proxy could not be attached to, at the
	// last ask, by name.
	failed map[string]string
}

func newProxyJoiner(dir string) *proxyJoiner {
	return &proxyJoiner{dir: dir, seen: map[string]bool{}, failed: map[string]string{}}
}

// join attaches to every running proxy not attached to yet and returns
// their members (nil when none is new or the directory cannot be read),
// and the running proxies it could not attach to.
func (j *proxyJoiner) join() ([]ui.Member, []ui.Unjoined) {
	running, err := proxy.List(j.dir)
	if err != nil {
		return nil, nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []ui.Member
	failed := map[string]string{}
	for _, r := range running {
		if r.Ended || r.Stale {
			continue
		}
		id := r.Proxy + "\x00" + strconv.Itoa(r.PID)
		if j.seen[id] {
			continue
		}
		m, conn, err := attachMember(j.dir, r.Proxy)
		if err != nil {
			failed[r.Proxy] = err.Error()
			continue
		}
		j.seen[id] = true
		j.conns = append(j.conns, conn)
		out = append(out, m)
	}
	j.failed = failed
	return out, j.failures()
}

// failures is j.failed, by name (under j.mu).
func (j *proxyJoiner) failures() []ui.Unjoined {
	var out []ui.Unjoined
	for _, name := range slices.Sorted(maps.Keys(j.failed)) {
		out = append(out, ui.Unjoined{Name: name, Why: j.failed[name]})
	}
	return out
}

// close closes every socket attached to.
func (j *proxyJoiner) close() {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, c := range j.conns {
		c.Close()
	}
}

// attachMember attaches to the proxy name: the view's member for it, and
// its socket.
func attachMember(dir, name string) (ui.Member, net.Conn, error) {
	conn, err := proxy.Attach(dir, name)
	if err != nil {
		return ui.Member{}, nil, err
	}
	br := bufio.NewReaderSize(conn, 64<<10)
	hello, err := proxy.ReadHello(br)
	if err != nil {
		conn.Close()
		if hello.Refused != "" {
			err = errors.New("refused: " + hello.Refused)
		}
		return ui.Member{}, nil, err
	}
	opts, err := attachOptions(hello, br, conn, false)
	if err != nil {
		conn.Close()
		return ui.Member{}, nil, err
	}
	return ui.Member{Name: hello.Proxy, Options: opts}, conn, nil
}

// attachAll is attach --all: every running proxy in one view, and those
// that start later joining it.
func (c *cli) attachAll(ctx context.Context, dir string) int {
	j := newProxyJoiner(dir)
	defer j.close()
	members, failed := j.join()
	for _, u := range failed {
		fmt.Fprintf(c.stderr, "inflight attach: %s: %s\n", termsafe.Line(u.Name), termsafe.Line(u.Why))
	}
	f, err := ui.NewFleet(members, ui.FleetOptions{Join: j.join, Unjoined: failed, Dark: true})
	if err != nil {
		fmt.Fprintf(c.stderr, "inflight attach: %s\n", termsafe.Line(err.Error()))
		return 1
	}
	err = runProgramThen(ctx, f, func() {
		f.Stop()
		j.close()
	})
	if err != nil && !errors.Is(err, tea.ErrInterrupted) && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(c.stderr, "inflight attach: %s\n", termsafe.Line(err.Error()))
		return 1
	}
	return exitcode.Completed
}
