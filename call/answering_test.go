package call

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"inflight/client"
	"inflight/event"
	"inflight/exitcode"
	"inflight/internal/testkit/testserver"
	"inflight/runner"
	"inflight/session"
	"inflight/target"
	"inflight/wire"
)

func answerFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "answers.json")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// The demo's questions answered from a file, in both eras on both
// transports: modern as input_required rounds retried under new IDs,
// legacy as the server's own requests answered while the call runs.
func TestCallAnswers(t *testing.T) {
	file := `{"name":{"name":"Grace"},"colour":{"colour":"blue"},"confirm":{"confirm":true},
		"elicitation/create":{},"sampling/createMessage":"Paris."}`
	tests := []struct {
		tool    string
		decline bool
		roots   []string
		want    string // in the result
		legacy  string // in the legacy result, when it differs: the legacy server asks by method only
		rounds  int    // modern
		asked   int    // legacy server requests
	}{
		{tool: "confirm", want: "deleted 3 files", legacy: "the form said no", rounds: 2, asked: 1},
		{tool: "confirm", decline: true, want: "deleted 3 files", legacy: "the form said no", rounds: 2, asked: 1},
		{tool: "two_rounds", want: "likes", rounds: 3, asked: 2},
		{tool: "sample", want: "the model says: Paris.", rounds: 2, asked: 1},
		{tool: "roots", roots: []string{"/tmp"}, want: "file:///tmp", rounds: 2, asked: 1},
	}
	testserver.ForEach(t, func(t *testing.T, tc testserver.Transport, e testserver.Era) {
		path := answerFile(t, file)
		for _, c := range tests {
			rep, code, stderr := runCall(t, Options{Target: tc.Target(t, e), Method: "tools/call",
				Params: testserver.ToolParams(t, c.tool, `{}`), AnswerFile: path, Decline: c.decline, Roots: c.roots})
			if e == testserver.Legacy && c.legacy != "" {
				c.want = c.legacy
			}
			if code != exitcode.Completed || !strings.Contains(string(rep.Result), c.want) {
				t.Fatalf("%s: exit %d state %s result %s error %+v, want %q\n%s", c.tool, code, rep.State, rep.Result, rep.Error, c.want, stderr)
			}
			if len(rep.Violations) != 0 {
				t.Errorf("%s: violations %+v", c.tool, rep.Violations)
			}
			if e == testserver.Modern {
				if len(rep.Rounds) != c.rounds || len(rep.ServerRequests) != 0 {
					t.Fatalf("%s: %d rounds, %d server requests; want %d rounds", c.tool, len(rep.Rounds), len(rep.ServerRequests), c.rounds)
				}
				for i, rd := range rep.Rounds {
					if rd.ID.String() != rep.Rounds[0].ID.String() && i == 0 || (i > 0 && rd.ID == rep.Rounds[i-1].ID) {
						t.Errorf("%s: round %d reuses ID %s", c.tool, i+1, rd.ID)
					}
					last := i == len(rep.Rounds)-1
					if want := map[bool]string{true: "completed", false: "input_required"}[last]; rd.Outcome != want {
						t.Errorf("%s: round %d outcome %s, want %s", c.tool, i+1, rd.Outcome, want)
					}
					if !last && (len(rd.Asked) == 0 || len(rd.Answered) != len(rd.Asked)) {
						t.Errorf("%s: round %d asked %+v answered %v", c.tool, i+1, rd.Asked, rd.Answered)
					}
				}
				if rep.ID.String() != rep.Rounds[len(rep.Rounds)-1].ID.String() {
					t.Errorf("%s: report id %s, want the last round's", c.tool, rep.ID)
				}
				continue
			}
			if len(rep.ServerRequests) != c.asked || len(rep.Rounds) != 0 {
				t.Fatalf("%s: %d server requests %+v, %d rounds; want %d server requests", c.tool, len(rep.ServerRequests), rep.ServerRequests, len(rep.Rounds), c.asked)
			}
			for _, sr := range rep.ServerRequests {
				wantTie := "only_request_in_flight"
				if tc.Name == "http" {
					wantTie = "stream"
				}
				if sr.State != "answered" || sr.TiedBy != wantTie {
					t.Errorf("%s: server request %+v, want answered, tied by %s", c.tool, sr, wantTie)
				}
			}
		}
	})
}

// TestCallRequestStateEchoed: the retry carries requestState byte for byte
// (the demo's two_rounds verifies its own base64 state and fails
// otherwise), and the report shows each round's state as it came.
func TestCallRequestStateEchoed(t *testing.T) {
	tracePath := filepath.Join(t.TempDir(), "trace.jsonl")
	rep, code, _ := runCall(t, Options{Target: testserver.Stdio(t, testserver.Modern), Method: "tools/call", TracePath: tracePath,
		Params: testserver.ToolParams(t, "two_rounds", `{}`), AnswerFile: answerFile(t, `{"name":{"name":"A&<b>"},"colour":{"colour":"red"}}`)})
	// The trace has every round: its request, its answer, and a state line
	// that ties it to the first.
	tr, err := os.ReadFile(tracePath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"id":1,"msg":{"jsonrpc":"2.0","id":1,"method":"tools/call"`, `"id":3,"msg":{"jsonrpc":"2.0","id":3,"method":"tools/call"`,
		`"state":"waiting_input","from":"pending"`, `"round":2,"conversation":1`, `"round":3,"conversation":1`, `"inputResponses":{"colour"`} {
		if !strings.Contains(string(tr), want) {
			t.Errorf("the trace lacks %s", want)
		}
	}
	if code != exitcode.Completed || !strings.Contains(string(rep.Result), `A\u0026\u003cb\u003e likes red`) && !strings.Contains(string(rep.Result), "A&<b> likes red") {
		t.Fatalf("exit %d result %s", code, rep.Result)
	}
	if got := string(rep.Rounds[1].RequestState); !strings.HasPrefix(got, `"r2:`) {
		t.Errorf("round 2 requestState %s", got)
	}
}

func TestCallRoundCapAndNoAnswers(t *testing.T) {
	t.Run("cap", func(t *testing.T) {
		rep, code, _ := runCall(t, Options{Target: testserver.Stdio(t, testserver.Modern), Method: "tools/call",
			Params: testserver.ToolParams(t, "never_done", `{}`), AnswerFile: answerFile(t, `{"again":{}}`), MaxRounds: 3})
		if code != exitcode.Failed || rep.State != "input_required" || len(rep.Rounds) != 3 {
			t.Fatalf("exit %d state %s rounds %d", code, rep.State, len(rep.Rounds))
		}
		if rep.Error == nil || !strings.Contains(rep.Error.Message, "gave up after 3 rounds") {
			t.Errorf("error %+v, want gave up after 3 rounds", rep.Error)
		}
	})
	t.Run("default cap", func(t *testing.T) {
		rep, _, _ := runCall(t, Options{Target: testserver.Stdio(t, testserver.Modern), Method: "tools/call",
			Params: testserver.ToolParams(t, "never_done", `{}`), Decline: true})
		if len(rep.Rounds) != session.DefaultMaxRounds || !strings.Contains(rep.Error.Message, "gave up after 10 rounds") {
			t.Errorf("rounds %d error %+v, want gave up after 10 rounds", len(rep.Rounds), rep.Error)
		}
	})
	t.Run("no answer for it", func(t *testing.T) {
		rep, code, _ := runCall(t, Options{Target: testserver.Stdio(t, testserver.Modern), Method: "tools/call",
			Params: testserver.ToolParams(t, "sample", `{}`), AnswerFile: answerFile(t, `{"confirm":{}}`)})
		if code != exitcode.Failed || rep.State != "input_required" || len(rep.Rounds) != 1 {
			t.Fatalf("exit %d state %s rounds %d", code, rep.State, len(rep.Rounds))
		}
		if !strings.Contains(rep.Error.Message, "inflight call has no answer for capital (sampling/createMessage)") {
			t.Errorf("error %q", rep.Error.Message)
		}
	})
	t.Run("sampling declined: not retried", func(t *testing.T) {
		rep, _, _ := runCall(t, Options{Target: testserver.Stdio(t, testserver.Modern), Method: "tools/call",
			Params: testserver.ToolParams(t, "sample", `{}`), Decline: true})
		if rep.State != "input_required" || len(rep.Rounds) != 1 || !strings.Contains(rep.Error.Message, "declined capital (sampling/createMessage); not retried") {
			t.Errorf("state %s rounds %d error %+v", rep.State, len(rep.Rounds), rep.Error)
		}
	})
	t.Run("nothing given: nothing declared, so the demo does not ask", func(t *testing.T) {
		// (A server that asks anyway ends input_required, listing what it
		// asked: TestCallInputRequired.)
		rep, code, _ := runCall(t, Options{Target: testserver.Stdio(t, testserver.Modern), Method: "tools/call",
			Params: testserver.ToolParams(t, "confirm", `{}`)})
		if code != exitcode.Failed || !rep.ToolError || !strings.Contains(string(rep.Result), "did not declare elicitation") || len(rep.Rounds) != 0 {
			t.Fatalf("exit %d state %s result %s rounds %+v", code, rep.State, rep.Result, rep.Rounds)
		}
	})
	t.Run("legacy, nothing given: nothing declared, so nothing asked", func(t *testing.T) {
		// Without answers inflight declares no elicitation capability,
		// and go-sdk's server then does not ask.
		rep, _, _ := runCall(t, Options{Target: testserver.Stdio(t, testserver.Legacy), Method: "tools/call",
			Params: testserver.ToolParams(t, "confirm", `{}`)})
		if len(rep.ServerRequests) != 0 || !rep.ToolError || !strings.Contains(string(rep.Result), "client does not support elicitation") {
			t.Errorf("server requests %+v result %s, want none and the server's refusal to ask", rep.ServerRequests, rep.Result)
		}
	})
}

func TestCallLogs(t *testing.T) {
	testserver.ForEach(t, func(t *testing.T, tc testserver.Transport, e testserver.Era) {
		rep, code, _ := runCall(t, Options{Target: tc.Target(t, e), Method: "tools/call",
			Params: testserver.ToolParams(t, "chatty", `{"steps":2,"seconds":0.05}`), LogLevel: "info"})
		if code != exitcode.Completed || rep.Logs == nil || rep.Logs.Count != 2 {
			t.Fatalf("exit %d logs %+v", code, rep.Logs)
		}
		var d map[string]any
		if err := json.Unmarshal(rep.Logs.Lines[0].Data, &d); err != nil || rep.Logs.Lines[0].Level != "info" || d["step"] != 1.0 {
			t.Errorf("first line %+v", rep.Logs.Lines[0])
		}
		// Without --log-level the server sends none.
		rep, _, _ = runCall(t, Options{Target: tc.Target(t, e), Method: "tools/call",
			Params: testserver.ToolParams(t, "chatty", `{"steps":2,"seconds":0.05}`)})
		if rep.Logs != nil {
			t.Errorf("logs %+v without --log-level", rep.Logs)
		}
	})
}

// TestServerWithdrawsItsQuestion: a legacy server that cancels its own
// elicitation/create with notifications/cancelled closes it; the handler
// answering it sees its ctx end, and no answer is sent.
func TestServerWithdrawsItsQuestion(t *testing.T) {
	for _, tc := range testserver.Transports {
		t.Run(tc.Name, func(t *testing.T) {
			ctx := context.Background()
			asked := make(chan struct{}, 1)
			cn, err := runner.Dial(ctx, tc.Target(t, testserver.Legacy), runner.Options{
				Timeout: 10 * time.Second, MaxTimeout: time.Minute, LateWindow: testserver.Late,
				Answers: client.Answers{Elicitation: true},
				ServerRequests: func(ctx context.Context, method string, _ json.RawMessage) (json.RawMessage, *wire.Error) {
					asked <- struct{}{}
					<-ctx.Done() // a person who never answers
					return nil, &wire.Error{Code: -32603, Message: "too late"}
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer cn.Close()
			r, err := cn.Begin(ctx, wire.MethodToolsCall, testserver.ToolParams(t, "withdrawn", `{"seconds":0.2}`), session.RequestOptions{})
			if err != nil {
				t.Fatal(err)
			}
			cn.Wait(ctx, func() bool { return r.State.IsFinal() }, time.Now().Add(10*time.Second))
			<-asked
			if r.State != session.StateCompleted {
				t.Fatalf("call %s", r.State)
			}
			if raw, _ := cn.Tracker().RawResponse(r.ID); !strings.Contains(string(raw), "the server withdrew its question") {
				t.Errorf("result %s", raw)
			}
			srs := cn.Tracker().ServerRequests()
			// go-sdk may send its notifications/cancelled after the result.
			watch := 5 * time.Second
			if tc.Name == "http" {
				watch = 300 * time.Millisecond
			}
			cn.Wait(ctx, func() bool { return len(srs) == 1 && srs[0].State == session.ServerWithdrawn }, time.Now().Add(watch))
			if testing.Verbose() {
				for i := 0; i < cn.Tracker().Log().Len(); i++ {
					e := cn.Tracker().Log().At(i)
					t.Logf("%s %s %s %s", e.Time.Format("05.000"), e.Dir, e.Method, e.Raw)
				}
			}
			want := session.ServerWithdrawn
			if tc.Name == "http" && srs[0].State == session.ServerAbandoned {
				// Over legacy HTTP go-sdk's cancel races the result on the
				// call's stream and is lost when the stream closes first:
				// then what is seen is the call answered while it was open.
				want = session.ServerAbandoned
			}
			if len(srs) != 1 || srs[0].State != want || srs[0].During != r.ID {
				t.Fatalf("server requests %+v, want one withdrawn, tied to %s", *srs[0], r.ID)
			}
			for i := 0; i < cn.Tracker().Log().Len(); i++ {
				e := cn.Tracker().Log().At(i)
				if e.Dir == session.DirOut && strings.Contains(string(e.Raw), "too late") {
					t.Errorf("inflight answered a withdrawn question: %s", e.Raw)
				}
			}
		})
	}
}

// rawRounds is a raw modern Streamable HTTP peer: every tools/call without
// the expected requestState is answered input_required with state (and
// one elicitation), and one that echoes it exactly completes, unless
// never is set.
func rawRounds(t *testing.T, state string, never bool, bodies *[]string) target.Target {
	t.Helper()
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		m, err := wire.Decode(body)
		if err != nil || m.Kind != wire.KindRequest {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		result := `{"resultType":"input_required","inputRequests":{"ok":{"method":"elicitation/create","params":{"message":"OK?","requestedSchema":{"type":"object"}}}},"requestState":` + state + `}`
		switch {
		case m.Method == wire.MethodDiscover:
			result = `{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"rounds","version":"1"}}}`
		case !never && bytes.Contains(body, []byte(`"requestState":`+state)):
			result = `{"resultType":"complete","content":[{"type":"text","text":"state came back exactly"}]}`
		}
		if m.Method == wire.MethodToolsCall {
			mu.Lock()
			*bodies = append(*bodies, string(body))
			mu.Unlock()
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(wire.ResultResponse(m.ID, json.RawMessage(result)))
	}))
	t.Cleanup(srv.Close)
	return target.Target{URL: srv.URL}
}

func TestCallRawPeerRounds(t *testing.T) {
	// Bytes encoding/json would rewrite, escapes it would decode.
	const state = `"a<b>&\u00e9\"q\/"`
	t.Run("requestState echoed byte for byte", func(t *testing.T) {
		var bodies []string
		rep, code, _ := runCall(t, Options{Target: rawRounds(t, state, false, &bodies), Method: "tools/call",
			Params: testserver.ToolParams(t, "x", `{}`), Decline: true})
		if code != exitcode.Completed || len(bodies) != 2 {
			t.Fatalf("exit %d state %s, %d tools/call; bodies %q", code, rep.State, len(bodies), bodies)
		}
		if strings.Contains(bodies[0], "requestState") || strings.Contains(bodies[0], "inputResponses") {
			t.Errorf("the first round carried a requestState or inputResponses: %s", bodies[0])
		}
		if !strings.Contains(bodies[1], `"inputResponses":{"ok":{"action":"decline"}}`) {
			t.Errorf("the retry lacks the declined answer: %s", bodies[1])
		}
		if got := string(rep.Rounds[0].RequestState); got != state {
			t.Errorf("report requestState %s, want %s", got, state)
		}
	})
	t.Run("a server that never completes meets the cap", func(t *testing.T) {
		var bodies []string
		rep, code, _ := runCall(t, Options{Target: rawRounds(t, state, true, &bodies), Method: "tools/call",
			Params: testserver.ToolParams(t, "x", `{}`), Decline: true, MaxRounds: 4})
		if code != exitcode.Failed || rep.State != "input_required" || len(bodies) != 4 || len(rep.Rounds) != 4 {
			t.Fatalf("exit %d state %s, %d sent, %d rounds", code, rep.State, len(bodies), len(rep.Rounds))
		}
		ids := map[string]bool{}
		for _, rd := range rep.Rounds {
			ids[rd.ID.String()] = true
		}
		if len(ids) != 4 {
			t.Errorf("round IDs %v, want 4 different", ids)
		}
		if !strings.Contains(rep.Error.Message, "gave up after 4 rounds") {
			t.Errorf("error %+v", rep.Error)
		}
	})
}

// TestCancelWhileWaiting: a conversation waiting for its answer has
// nothing on the wire, so its cancel sends nothing and ends it at once.
func TestCancelWhileWaiting(t *testing.T) {
	for _, tc := range testserver.Transports {
		t.Run(tc.Name, func(t *testing.T) {
			ctx := context.Background()
			cn, err := runner.Dial(ctx, tc.Target(t, testserver.Modern), runner.Options{
				Timeout: 10 * time.Second, MaxTimeout: time.Minute, LateWindow: testserver.Late,
				Converse: true, Answers: client.Answers{Elicitation: true},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer cn.Close()
			r, err := cn.Begin(ctx, wire.MethodToolsCall, testserver.ToolParams(t, "confirm", `{}`), session.RequestOptions{})
			if err != nil {
				t.Fatal(err)
			}
			first := r.ID
			cn.Wait(ctx, func() bool { return r.State == session.StateWaitingInput || r.State.IsFinal() }, time.Now().Add(5*time.Second))
			if r.State != session.StateWaitingInput {
				t.Fatalf("state %s, want waiting_input", r.State)
			}
			if err := cn.Cancel(first, "the user walked away", session.CauseUser); err != nil {
				t.Fatal(err)
			}
			cn.Watch(100 * time.Millisecond)
			if r.State != session.StateCancelled || r.Cancel.Signal != event.SignalNone || r.Conv.Stopped != "no request in flight; the conversation was dropped" {
				t.Errorf("state %s, cancel %+v, stopped %q", r.State, r.Cancel, r.Conv.Stopped)
			}
			for i := 0; i < cn.Tracker().Log().Len(); i++ {
				if e := cn.Tracker().Log().At(i); e.Dir == session.DirOut && strings.Contains(string(e.Raw), wire.NotifyCancelled) {
					t.Errorf("a cancel went out for a conversation with nothing in flight: %s", e.Raw)
				}
			}
		})
	}
}

// The report says how many of the server's requests it does not list
// (the oldest ended ones past the bound), beside those it does.
func TestConversationReportSaysWhatIsNotListed(t *testing.T) {
	now := time.Unix(1000, 0)
	r := &session.Request{Created: now, Conv: &session.Conversation{
		ServerRequests:        []*session.ServerRequest{{ID: wire.IntID(5), Method: wire.MethodElicitationCreate, At: now}},
		ServerRequestsDropped: 1200,
	}}
	var rep Report
	conversationReport(&rep, r)
	if len(rep.ServerRequests) != 1 || rep.ServerRequestsDropped != 1200 {
		t.Fatalf("listed %d, dropped %d; want 1 and 1200", len(rep.ServerRequests), rep.ServerRequestsDropped)
	}
	b, _ := json.Marshal(rep)
	if !strings.Contains(string(b), `"serverRequestsDropped":1200`) {
		t.Errorf("the JSON lacks serverRequestsDropped: %s", b)
	}
}
