package ui

import (
	"context"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/charmbracelet/x/vt"

	"inflight/client"
	"inflight/demo"
	"inflight/event"
	"inflight/session"
)

// demoDialer connects to the real demo server in-process over pipes, the
// way `go run .` does over a child's stdio.
type demoDialer struct {
	mu      sync.Mutex
	clients []*client.Client
	wg      sync.WaitGroup
}

func (d *demoDialer) dial() (Client, error) {
	// Kernel pipes, like a child's stdio: an io.Pipe hands each write over
	// synchronously, which would throttle a flood to goroutine switches.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	srv := demo.New(demo.Options{})
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		_ = srv.ServeStdio(context.Background(), inR, outW)
		srv.Close()
		inR.Close()
		outW.Close()
	}()
	c, err := client.New(client.Config{Pipes: &client.Pipes{Stdin: inW, Stdout: outR}})
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.clients = append(d.clients, c)
	d.mu.Unlock()
	return c, nil
}

func (d *demoDialer) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, c := range d.clients {
		c.Close()
	}
	d.wg.Wait()
}

// vtScreen replays the program's output into a terminal emulator, so tests
// read the screen a person would see: the renderer only writes what
// changed, so the raw output never holds a whole screen.
type vtScreen struct {
	tm  *teatest.TestModel
	vt  *vt.Emulator
	raw []byte
}

func newScreen(t *testing.T, tm *teatest.TestModel, w, h int) *vtScreen {
	e := vt.NewEmulator(w, h)
	// Without a TTY on its input, Bubble Tea's renderer assumes the
	// terminal maps "\n" to CR LF (tea.go: mapNl) and moves down a line
	// with a bare "\n" wherever that is shorter. The emulator must agree,
	// or whichever frame takes that path lands shifted right: set LNM.
	_, _ = e.Write([]byte("\x1b[20h"))
	// The emulator answers terminal queries (colours, cursor position) on
	// its own pipe; drain it or the writes block.
	// Closing the emulator races with a blocked Read inside vt, so the
	// drain stops on a flag instead, woken by one last input event.
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 512)
		for !stop.Load() {
			if _, err := e.Read(buf); err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		stop.Store(true)
		e.SendText("x")
		<-done
	})
	return &vtScreen{tm: tm, vt: e}
}

// waitFor polls the screen until it shows want.
func (s *vtScreen) waitFor(t *testing.T, want string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		b, _ := io.ReadAll(s.tm.Output())
		s.raw = append(s.raw, b...)
		_, _ = s.vt.Write(b)
		text := s.vt.String()
		if strings.Contains(text, want) {
			return
		}
		if time.Now().After(deadline) {
			if p := os.Getenv("INFLIGHT_E2E_RAW"); p != "" {
				_ = os.WriteFile(p, s.raw, 0o644)
			}
			t.Fatalf("the screen did not show %q within %s; it shows:\n%s", want, d, text)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestEndToEndCancelOnTheDemoServer(t *testing.T) {
	d := &demoDialer{}
	defer d.close()
	cfg := session.DefaultConfig()
	cfg.LateWindow = 600 * time.Millisecond
	m, err := New(Options{Target: "demo", Transport: "stdio", Dial: d.dial, Tracker: cfg, Dark: true})
	if err != nil {
		t.Fatal(err)
	}
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 35))
	scr := newScreen(t, tm, 120, 35)
	waitScreen := func(t *testing.T, _ *teatest.TestModel, want string, d time.Duration) {
		t.Helper()
		scr.waitFor(t, want, d)
	}
	waitScreen(t, tm, "You have not sent a request yet", 5*time.Second)
	// The composer lists the tools once tools/list is answered. Each wait
	// below is for text only the awaited state shows: the empty screen
	// already says "slow", and the pick step shows the schema's "seconds".
	waitScreen(t, tm, "17 tools", 5*time.Second)

	// slow: n, enter (slow is preselected), fill seconds and steps, send.
	tm.Send(keyMsg("n"))
	waitScreen(t, tm, "↑/↓ tool · ←/→ kind", 2*time.Second)
	tm.Send(keyMsg("enter"))
	waitScreen(t, tm, "tab/↓ next field", 2*time.Second)
	for _, r := range "5" {
		tm.Send(keyMsg(string(r)))
	}
	tm.Send(keyMsg("tab"))
	for _, r := range "50" {
		tm.Send(keyMsg(string(r)))
	}
	tm.Send(keyMsg("enter"))
	waitScreen(t, tm, "step 3 of 50", 5*time.Second)
	tm.Send(keyMsg("c"))
	waitScreen(t, tm, "notifications/cancelled sent 0.", 3*time.Second)
	waitScreen(t, tm, "nothing more came", 3*time.Second)

	// stubborn ignores the cancel: its late response must be flagged.
	tm.Send(keyMsg("n"))
	waitScreen(t, tm, "↑/↓ tool · ←/→ kind", 2*time.Second)
	tm.Send(keyMsg("down"))
	tm.Send(keyMsg("enter"))
	waitScreen(t, tm, "tab/↓ next field", 2*time.Second)
	waitScreen(t, tm, "Demonstrates a server that ignores", 2*time.Second)
	for _, r := range "1.5" {
		tm.Send(keyMsg(string(r)))
	}
	tm.Send(keyMsg("tab"))
	tm.Send(keyMsg("5"))
	tm.Send(keyMsg("enter"))
	waitScreen(t, tm, "step 1 of 5", 5*time.Second)
	tm.Send(keyMsg("c"))
	waitScreen(t, tm, "cancellation requested", 3*time.Second)
	waitScreen(t, tm, "late response ignored", 5*time.Second)

	tm.Send(keyMsg("q"))
	final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)
	var slow, stubborn *session.Request
	tr := final.Tracker()
	for i := 0; i < tr.Len(); i++ {
		switch r := tr.At(i); r.Target {
		case "slow":
			slow = r
		case "stubborn":
			stubborn = r
		}
	}
	if slow == nil || slow.State != session.StateCancelled || slow.Late.Response || slow.Late.ProgressAfterCancel != 0 {
		t.Fatalf("slow ended as %+v; want cancelled with nothing late", slow)
	}
	if stubborn == nil || stubborn.State != session.StateCancelled || !stubborn.Late.Response {
		t.Fatalf("stubborn ended as %+v; want cancelled with a late response", stubborn)
	}
	if slow.Cancel.Signal != event.SignalNotification {
		t.Fatalf("slow's cancel signal over stdio = %s", slow.Cancel.Signal)
	}
}
