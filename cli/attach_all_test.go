//go:build unix

package cli

import (
	"bufio"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"inflight/proxy"
	"inflight/ui"
)

// fleetDriver drives the view over many proxies (a ui.Fleet).
type fleetDriver = teaDriver[tea.Model]

func newFleetDriver(t *testing.T, m tea.Model) *fleetDriver {
	return newTeaDriver(t, m, 15*time.Second)
}

func (d *teaDriver[M]) shows(re string) func() bool {
	r := regexp.MustCompile(re)
	return func() bool { return r.MatchString(d.screen()) }
}

// attach --all: two proxies running when it opens, a third that starts
// later and joins, one whose host goes (the proxy ends: marked ended, its
// rows kept); every proxy's requests in one list with a SERVER column; a
// key on a row acts through that row's proxy alone.
func TestAttachAllProxies(t *testing.T) {
	runDir := t.TempDir()
	alpha := startProxyIn(t, runDir, "alpha")
	beta := startProxyIn(t, runDir, "beta")
	j := newProxyJoiner(alpha.sockets)
	defer j.close()
	members, _ := j.join()
	if len(members) != 2 {
		t.Fatalf("attached to %d proxies, want 2 (%v)", len(members), j.failed)
	}
	f, err := ui.NewFleet(members, ui.FleetOptions{Join: j.join, JoinEvery: 100 * time.Millisecond, Dark: true})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Stop()
	d := newFleetDriver(t, f)
	d.until("both proxies' history", d.shows(`(?m)^[▌ ] +alpha\s+\d+\s+⇄ server/discover`))
	d.until("beta's history", d.shows(`(?m)^[▌ ] +beta\s+\d+\s+⇄ server/discover`))
	d.until("the header", d.shows(`2 servers · .*\n.*alpha ● .*beta ● `))

	// A proxy started later joins.
	gamma := startProxyIn(t, runDir, "gamma")
	d.until("gamma joining", d.shows(`3 servers`))
	gammaCall := gamma.call("slow", 5, 50, 20*time.Second)
	d.until("gamma's call", d.shows(`(?m)^▌ gamma\s+\d+\s+⇄ slow\s+\S+ (pending|running)`))

	// h on the selected row (gamma's call, the newest) holds its answer
	// at gamma's proxy; the others are untouched.
	d.update(tea.KeyPressMsg{Code: 'h', Text: "h"})
	d.until("the hold", d.shows(`(?m)^▌ gamma\s+\d+\s+⇄ slow.*held by you`))
	if strings.Contains(d.screen(), "could not ask the proxy") {
		t.Errorf("the proxy refused the hold:\n%s", d.screen())
	}
	// u releases it, and the host gets its answer.
	d.update(tea.KeyPressMsg{Code: 'u', Text: "u"})
	select {
	case err := <-gammaCall:
		if err != nil {
			t.Errorf("gamma's host call after the release: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("gamma's host never got its answer after u")
	}

	// beta's host goes: beta's proxy ends; its rows stay, marked ended.
	beta.cs.Close()
	d.until("beta ended", d.shows(`beta ■ ended`))
	if !regexp.MustCompile(`(?m)^[▌ ] +beta\s+\d+\s+⇄ server/discover`).MatchString(d.screen()) {
		t.Errorf("beta's rows went with it:\n%s", d.screen())
	}
	if !strings.Contains(d.screen(), "alpha ● ") {
		t.Errorf("alpha is not shown live:\n%s", d.screen())
	}

	d.update(tea.KeyPressMsg{Code: 'q', Text: "q"})
	d.until("the view to quit", func() bool { return d.quit })
}

// attach --all on a proxy that has as many viewers as it takes: the
// refusal is said (the server's chip, the status line), never a bare "0
// servers"; once viewers leave, the proxy joins at the next ask; and
// attach --all's asks, once a second, hold no viewer's place: besides its
// own, exactly maxViewers-1 more are taken.
func TestAttachAllSaysARefusal(t *testing.T) {
	runDir := t.TempDir()
	full := startProxyIn(t, runDir, "full")
	viewer := func() (net.Conn, error) {
		c, err := proxy.Attach(full.sockets, "full")
		if err != nil {
			return nil, err
		}
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := proxy.ReadHello(bufio.NewReader(c)); err != nil {
			c.Close()
			return nil, err
		}
		return c, nil
	}
	const most = 32 // the proxy's maxViewers
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for i := range most {
		c, err := viewer()
		if err != nil {
			t.Fatalf("viewer %d: %v", i, err)
		}
		held = append(held, c)
	}

	j := newProxyJoiner(full.sockets)
	defer j.close()
	members, unjoined := j.join()
	if len(members) != 0 || len(unjoined) != 1 || unjoined[0].Name != "full" || !strings.Contains(unjoined[0].Why, "refused: 32 viewers are attached already") {
		t.Fatalf("join on a full proxy: %d members, unjoined %+v; want the refusal", len(members), unjoined)
	}
	f, err := ui.NewFleet(members, ui.FleetOptions{Join: j.join, JoinEvery: 100 * time.Millisecond, Unjoined: unjoined, Dark: true})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Stop()
	d := newFleetDriver(t, f)
	d.until("the refusal in the header", d.shows(`0 servers · .*\n.*full ✗ not attached`))
	d.until("the refusal on the status line", d.shows(`✗ could not attach to full: refused: 32 viewers are attached already`))

	for _, c := range held {
		c.Close()
	}
	held = nil
	d.until("full joining once viewers left", d.shows(`1 server · .*\n.*full ● `))
	if strings.Contains(d.screen(), "not attached") {
		t.Errorf("the refusal is still said after full joined:\n%s", d.screen())
	}
	polled := time.Now()
	d.until("a few more asks", func() bool { return time.Since(polled) > 700*time.Millisecond })

	for i := range most - 1 {
		c, err := viewer()
		if err != nil {
			t.Fatalf("viewer %d besides attach --all, after its asks: %v (its asks hold places)", i+1, err)
		}
		held = append(held, c)
	}
	if c, err := viewer(); err == nil {
		c.Close()
		t.Errorf("a viewer past attach --all and %d others was taken: attach --all is not counted", most-1)
	}
	d.update(tea.KeyPressMsg{Code: 'q', Text: "q"})
	d.until("the view to quit", func() bool { return d.quit })
}
