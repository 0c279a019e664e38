package ui

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"inflight/client"
	"inflight/demo"
	"inflight/keymap"
	"inflight/session"
	"inflight/wire"
)

// demoStdioDialer serves the demo over kernel pipes for every connection,
// in the era of version ("" lets the client find it).
func demoStdioDialer(t *testing.T, version string) *liveDialer {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var stops []func()
	t.Cleanup(func() {
		mu.Lock()
		for _, stop := range stops {
			stop()
		}
		mu.Unlock()
		wg.Wait()
	})
	return &liveDialer{newCfg: func() (client.Config, error) {
		inR, inW, err := os.Pipe()
		if err != nil {
			return client.Config{}, err
		}
		outR, outW, err := os.Pipe()
		if err != nil {
			return client.Config{}, err
		}
		srv := demo.New(demo.Options{})
		ctx, cancel := context.WithCancel(context.Background())
		mu.Lock()
		stops = append(stops, cancel)
		mu.Unlock()
		wg.Go(func() {
			_ = srv.ServeStdio(ctx, inR, outW)
			srv.Close()
			inR.Close()
			outW.Close()
		})
		return client.Config{Pipes: &client.Pipes{Stdin: inW, Stdout: outR}, ProtocolVersion: version}, nil
	}}
}

// The demo's task_input asks for a name while its task waits (modern: the
// tasks/get's inputRequests): a on its row opens the answer form, enter
// sends the answer as tasks/update, and the task finishes with the
// greeting.
func TestTaskInputAnsweredOnTheDemoModern(t *testing.T) {
	params, _ := json.Marshal(map[string]any{"name": "task_input", "arguments": map[string]any{"seconds": 0.02, "wait": 20, "pollMs": 20}})
	l := newLiveWith(t, demoStdioDialer(t, wire.VersionModern), session.Config{}, func(o *Options) {
		o.Calls = []Call{{Method: wire.MethodToolsCall, Params: params}}
	})
	l.connected()
	var r *session.Request
	l.until("the task asks for input", 15*time.Second, func() bool {
		for i := range l.m.tracker.Len() {
			if c := l.m.tracker.At(i); c.Target == "task_input" {
				r = c
			}
		}
		return r != nil && len(r.TaskAsks()) > 0
	})
	if s := l.screen(); !strings.Contains(s, "waits for you") {
		t.Errorf("the row does not say the task waits for the user:\n%s", s)
	}
	l.m.screens.list = l.m.screens.list.Select(r.ID, false)
	l.key("a")
	if l.m.focus.mode != keymap.ModeAnswer || !strings.Contains(l.screen(), "What is your name?") {
		t.Fatalf("a on the task's row did not open the form on its question:\n%s", l.screen())
	}
	for _, c := range "Ada" {
		l.key(string(c))
	}
	l.key("enter")
	l.until("the task completes with the greeting", 15*time.Second, func() bool { return r.State.IsFinal() })
	raw, _, _ := l.m.tracker.TaskOutcome(r.ID)
	if r.State != session.StateCompleted || !strings.Contains(string(raw), "Hello, Ada!") {
		t.Fatalf("the task ended %v with %s", r.State, raw)
	}
	if r.Task.UpdateAckAt.IsZero() {
		t.Error("no tasks/update was acknowledged")
	}
	l.quitCleanly()
}
