package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
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
type proxyJoiner struct {
	dir string

	mu    sync.Mutex
	seen  map[string]bool
	conns []net.Conn
	// failed says why a proxy could not be attached to, once each.
	failed map[string]string
}

func newProxyJoiner(dir string) *proxyJoiner {
	return &proxyJoiner{dir: dir, seen: map[string]bool{}, failed: map[string]string{}}
}

// join attaches to every running proxy not attached to yet and returns
// their members (nil when none is new or the directory cannot be read).
func (j *proxyJoiner) join() []ui.Member {
	running, err := proxy.List(j.dir)
	if err != nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []ui.Member
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
			j.failed[r.Proxy] = err.Error()
			continue
		}
		j.seen[id] = true
		j.conns = append(j.conns, conn)
		out = append(out, m)
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
	members := j.join()
	for name, why := range j.failed {
		fmt.Fprintf(c.stderr, "inflight attach: %s: %s\n", termsafe.Line(name), termsafe.Line(why))
	}
	f, err := ui.NewFleet(members, ui.FleetOptions{Join: j.join, Dark: true})
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
