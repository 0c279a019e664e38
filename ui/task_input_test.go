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
	// The header counts it as the legacy question is counted.
	if s := l.screen(); !strings.Contains(s, "? 1 waiting for you") {
		t.Errorf("the header does not count the task waiting for the user:\n%s", s)
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

// The legacy task_input asks on tasks/result, which the TUI calls when the
// task says input_required: the question is the server's own request tied
// to the task, and a on the task's row opens the form on it.
func TestTaskInputAnsweredOnTheDemoLegacy(t *testing.T) {
	params, _ := json.Marshal(map[string]any{"name": "task_input", "arguments": map[string]any{"seconds": 0.02, "wait": 20, "pollMs": 20},
		"task": map[string]any{"ttl": 60000}})
	// As the TUI dials (cli/tui.go): it declares what it answers, and its
	// questions are the server's requests.
	questions := NewQuestions(nil, 0)
	d := demoStdioDialer(t, wire.Version20251125)
	newCfg := d.newCfg
	d.newCfg = func() (client.Config, error) {
		cfg, err := newCfg()
		cfg.Answers = client.Answers{Elicitation: true}
		cfg.ServerRequests = questions.Serve
		return cfg, err
	}
	l := newLiveWith(t, d, session.Config{}, func(o *Options) {
		o.Calls = []Call{{Method: wire.MethodToolsCall, Params: params}}
		o.Questions = questions
	})
	l.connected()
	var r *session.Request
	l.until("the task's question arrives", 15*time.Second, func() bool {
		for i := range l.m.tracker.Len() {
			if c := l.m.tracker.At(i); c.Target == "task_input" {
				r = c
			}
		}
		return r != nil && l.m.questions.asks(l.m.tracker, r)
	})
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
	qs := l.m.tracker.ServerRequests()
	if len(qs) != 1 || qs[0].TiedBy != session.TiedTask || qs[0].State != session.ServerAnswered {
		t.Fatalf("the question: %+v, want one, tied to the task, answered", qs)
	}
	// The terminal status follows the outcome, and one poll confirms it
	// (no second tasks/result: the outcome is in).
	l.until("the task's end confirmed", 15*time.Second, func() bool {
		for i := range l.m.tracker.Len() {
			if !l.m.tracker.At(i).State.IsFinal() {
				return false
			}
		}
		tk := r.Task
		return tk.Terminal() && tk.LastPollAt.After(tk.TerminalAt)
	})
	results := 0
	for i := range l.m.tracker.Len() {
		if l.m.tracker.At(i).Method == wire.MethodTasksResult {
			results++
		}
	}
	if results != 1 {
		t.Errorf("%d tasks/result sent, want the one called on input_required", results)
	}
	l.quitCleanly()
}
