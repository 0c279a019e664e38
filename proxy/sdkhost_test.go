package proxy

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"inflight/event"
	"inflight/internal/testkit/testbin"
	"inflight/replay"
	"inflight/session"
	"inflight/trace"
	"inflight/wire"
)

// TestSDKHostTimesOut puts a real host in front of the proxy: go-sdk's
// client, whose request timeout (150 ms) is shorter than the demo's
// stubborn tool (600 ms), which ignores cancels. The host's own cancel
// goes through the proxy and is judged; the server's answer after it is
// forwarded and flagged late; the host's close ends the server; and the
// trace replays as the host's story. (go-sdk v1.8 opens in the modern era,
// with server/discover; the proxy learns the era from its _meta.)
func TestSDKHostTimesOut(t *testing.T) {
	inflight := testbin.Build(t, "inflight")
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var traceBuf syncBuffer
	tw := trace.NewWriter(&traceBuf, time.Now(), nil)
	tw.SetSenders("host", "server")
	var stderr syncBuffer
	var tr *session.Tracker
	lateSeen := make(chan struct{}, 1)
	opts := Options{Name: "demo", Stderr: &stderr, Trace: tw, OnEvent: func(ev event.Event, changes []session.Change, t *session.Tracker) {
		tr = t
		for _, ch := range changes {
			if ch.Kind == session.ChangeLate && ch.What == session.ArrivalResponse {
				select {
				case lateSeen <- struct{}{}:
				default:
				}
			}
		}
	}}
	done := make(chan Result, 1)
	go func() {
		res, err := Run(context.Background(), Host{In: inR, Out: outW}, inflight, []string{"demo-server"}, opts)
		if err != nil {
			t.Errorf("Run: %v", err)
		}
		outW.Close()
		done <- res
	}()

	client := mcp.NewClient(&mcp.Implementation{Name: "sdk-host", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatalf("connect through the proxy: %v", err)
	}
	callCtx, callCancel := context.WithTimeout(ctx, 150*time.Millisecond)
	_, err = cs.CallTool(callCtx, &mcp.CallToolParams{Name: "stubborn", Arguments: map[string]any{"seconds": 0.6, "steps": 6},
		Meta: mcp.Meta{"progressToken": "sdk-1"}})
	callCancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the host's call ended with %v, want its own timeout", err)
	}
	select {
	case <-lateSeen:
	case <-time.After(5 * time.Second):
		t.Fatal("no late response seen after the host's cancel")
	}
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	inW.Close()
	res := <-done
	inR.Close()
	outR.Close()
	if res.End != EndHostClosed || res.Stopped != "" {
		t.Errorf("end %v, stopped %q: want the host's close and the server gone with its stdin", res.End, res.Stopped)
	}

	var call *session.Request
	for i := 0; i < tr.Len(); i++ {
		if r := tr.At(i); r.Method == wire.MethodToolsCall {
			call = r
		}
	}
	if call == nil {
		t.Fatal("the host's tools/call was not tracked")
	}
	if !call.ByHost || call.State != session.StateCancelled || call.Cancel == nil || call.Cancel.Cause != session.CauseHost ||
		call.Cancel.Signal != event.SignalNotification {
		t.Errorf("tools/call: state %s, cancel %+v; want cancelled by the host's notifications/cancelled", call.State, call.Cancel)
	}
	if !call.Late.Response || call.Late.Crossed || call.Progress.Count == 0 {
		t.Errorf("tools/call: late %+v progress %d; want a late (not crossed) response and progress before the cancel", call.Late, call.Progress.Count)
	}
	for i := 0; i < tr.Violations().Len(); i++ {
		if v := tr.Violations().At(i); strings.HasPrefix(v.Code, "host_") {
			t.Errorf("go-sdk's host flagged: %s %s", v.Code, v.Detail)
		}
	}
	if !strings.Contains(stderr.String(), "⚑ late response to tools/call stubborn") {
		t.Errorf("stderr does not flag the late response:\n%s", stderr.String())
	}

	// The trace replays: the host's call, its cancel, the late answer.
	_ = tw.Close()
	var out, errOut bytes.Buffer
	if code := replay.Reader(strings.NewReader(traceBuf.String()), "proxy", replay.Options{}, &out, &errOut); code != 0 {
		t.Fatalf("replay exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{"tools/call stubborn: cancelled", "notifications/cancelled", "LATE RESPONSE", "modern era", "inflight-demo"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("replay lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.Contains(traceBuf.String(), `"dir":"out","by":"host"`) || !strings.Contains(traceBuf.String(), `"dir":"in","by":"server"`) {
		t.Errorf("the trace does not say who sent what")
	}
}
