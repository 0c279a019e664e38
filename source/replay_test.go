package source

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"inflight/event"
	"inflight/internal/testkit/tracerun"
	"inflight/session"
	"inflight/trace"
	"inflight/wire"
)

// summary is what a view draws of a tracker: every request's state,
// progress, cancel and late traffic, the counts, and the logs' lengths.
func summary(tr *session.Tracker) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%+v log %d stderr %d violations %d\n", tr.Counts(), tr.Log().Len(), tr.Stderr().Len(), tr.Violations().Total())
	for i := range tr.Len() {
		r := tr.At(i)
		fmt.Fprintf(&b, "#%s %s %q %s created %s ended %s progress %d/%g violations %d late %v/%d/%v",
			r.ID, r.Method, r.Target, r.State, r.Created.Format(time.StampMicro), r.Ended.Format(time.StampMicro),
			r.Progress.Count, r.Progress.Value, r.Violations, r.Late.Response, r.Late.ProgressAfterCancel, r.Late.Crossed)
		if c := r.Cancel; c != nil {
			fmt.Fprintf(&b, " cancel %s by %v %q %v", c.At.Format(time.StampMicro), c.Cause, c.Reason, c.Signal)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// recordedRun is a TUI session as --trace records it, with every flag:
// a request answered, one the user cancels that answers late, one that
// times out, progress for a token nobody sent (a violation), stderr. It
// returns the trace and the recording tracker's summary at moments of
// the run.
func recordedRun(t *testing.T) ([]byte, map[time.Time]string) {
	t.Helper()
	var buf bytes.Buffer
	cfg := session.DefaultConfig()
	cfg.DefaultTimeout = 3 * time.Second
	cfg.Converse = true
	r := tracerun.New(&buf, t0, cfg)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	marks := map[time.Time]string{}
	mark := func(at time.Time) { marks[at] = summary(r.TR) }
	r.Connected(ms(1), event.EraModern)
	list := r.Begin(ms(2), wire.MethodToolsList, "")
	r.Answer(ms(4), list, `{"resultType":"complete","tools":[]}`)
	slow := r.Begin(ms(100), wire.MethodToolsCall, `{"name":"slow"}`)
	stubborn := r.Begin(ms(150), wire.MethodToolsCall, `{"name":"stubborn"}`)
	for i := range 20 {
		r.Progress(ms(200+i*50), slow, float64(i+1), 20)
		if i == 5 {
			mark(ms(200 + i*50))
		}
	}
	r.Apply(event.Event{Kind: event.Stderr, Time: ms(1300), Text: "working hard"})
	r.Cancel(ms(1400), slow, "user requested cancellation")
	mark(ms(1400))
	r.Progress(ms(1700), slow, 21, 20)
	r.Answer(ms(2000), slow, `{"resultType":"complete","content":[]}`)
	r.Progress(ms(2100), wire.IntID(99), 1, 2) // a token nobody sent
	mark(ms(2500))
	r.Tick(ms(3150)) // stubborn's timeout
	mark(ms(3150))
	r.Tick(ms(8150)) // its late window
	mark(ms(8150))
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	_ = stubborn
	return buf.Bytes(), marks
}

func openReplay(t *testing.T, data []byte, o ReplayOptions) *Replay {
	t.Helper()
	if o.Start.IsZero() {
		o.Start = t0
	}
	rp, err := OpenReplay(bytes.NewReader(data), int64(len(data)), o)
	if err != nil {
		t.Fatal(err)
	}
	return rp
}

func replayConfig() session.Config {
	cfg := session.DefaultConfig()
	cfg.DefaultTimeout = 3 * time.Second
	cfg.Converse = true
	return cfg
}

// TestReplayFollowsTheRecordedRun: at each moment the run was looked at,
// the replay's tracker says what the recording one said then — the
// requests begun, cancelled by the user and by their timeout, the late
// traffic and the violation — and it agrees with every verdict the trace
// carries.
func TestReplayFollowsTheRecordedRun(t *testing.T) {
	data, marks := recordedRun(t)
	rp := openReplay(t, data, ReplayOptions{Tracker: replayConfig(), Every: 5})
	if n, last := rp.Disagreements(); n != 0 {
		t.Errorf("%d disagreements, the latest: %s", n, last)
	}
	if rp.Damage() != nil || rp.Relayed() {
		t.Errorf("damage %v, relayed %v", rp.Damage(), rp.Relayed())
	}
	if _, at := rp.Position(); !at.Equal(rp.End()) {
		t.Errorf("opened at %v, not at the end %v", at, rp.End())
	}
	for at, want := range marks {
		rp.SeekTime(at)
		if got := summary(rp.Tracker()); got != want {
			t.Errorf("at %v:\nreplay:\n%s\nrecorded:\n%s", at.Sub(t0), got, want)
		}
	}
	rp.SeekTime(rp.End())
	r, ok := rp.Tracker().Get(wire.IntID(3))
	if !ok || r.Cancel == nil || r.Cancel.Cause != session.CauseTimeout {
		t.Errorf("the stubborn request at the end: %+v", r)
	}
}

// TestReplaySeeksAlike: whatever the order of the moves, the tracker at
// n items is the one reached by applying the n first items in order —
// from a checkpoint, from the cursor, backwards or forwards.
func TestReplaySeeksAlike(t *testing.T) {
	data, _ := recordedRun(t)
	ref := openReplay(t, data, ReplayOptions{Tracker: replayConfig(), Every: 1 << 30})
	want := make([]*session.Tracker, ref.Len()+1)
	for n := 0; n <= ref.Len(); n++ {
		ref.SeekItem(n)
		want[n] = ref.Tracker().Clone()
	}
	for _, every := range []int{1, 3, 7, 1000} {
		rp := openReplay(t, data, ReplayOptions{Tracker: replayConfig(), Every: every})
		if !reflect.DeepEqual(rp.Tracker(), want[rp.Len()]) {
			t.Fatalf("every %d: the first reading's tracker differs from the one played in order", every)
		}
		rng := rand.New(rand.NewPCG(uint64(every), 1))
		for range 200 {
			n := rng.IntN(rp.Len() + 1)
			if rng.IntN(3) == 0 {
				rp.Step(1 - 2*rng.IntN(2))
				n, _ = rp.Position()
			} else {
				rp.SeekItem(n)
			}
			if got, _ := rp.Position(); got != n {
				t.Fatalf("every %d: at %d items, wanted %d", every, got, n)
			}
			if !reflect.DeepEqual(rp.Tracker(), want[n]) {
				t.Fatalf("every %d: the tracker at %d items differs from the one played in order", every, n)
			}
		}
	}
}

// TestReplayMoments: a moment between items shows the items up to it;
// stepping back from it shows the last one applied, then the one before.
func TestReplayMoments(t *testing.T) {
	data, _ := recordedRun(t)
	rp := openReplay(t, data, ReplayOptions{Tracker: replayConfig()})
	rp.SeekTime(t0.Add(1350 * time.Millisecond))
	n, at := rp.Position()
	if !at.Equal(t0.Add(1350*time.Millisecond)) || !rp.ItemTime(n-1).Before(at) || (n < rp.Len() && !rp.ItemTime(n).After(at)) {
		t.Fatalf("at %v with %d items (the last at %v)", at.Sub(t0), n, rp.ItemTime(n-1).Sub(t0))
	}
	rp.Step(-1)
	if n2, at2 := rp.Position(); n2 != n || !at2.Equal(rp.ItemTime(n-1)) {
		t.Errorf("a step back from between items: %d at %v", n2, at2.Sub(t0))
	}
	rp.Step(-1)
	if n3, _ := rp.Position(); n3 != n-1 {
		t.Errorf("a second step back: %d items, want %d", n3, n-1)
	}
	rp.Step(1)
	rp.Step(1)
	if n4, at4 := rp.Position(); n4 != n+1 || !at4.Equal(rp.ItemTime(n)) {
		t.Errorf("two steps on: %d items at %v", n4, at4.Sub(t0))
	}
	rp.SeekTime(t0.Add(-time.Hour))
	if n5, at5 := rp.Position(); n5 != 0 || !at5.Equal(t0) {
		t.Errorf("before the start: %d items at %v", n5, at5)
	}
	rp.SeekTime(t0.Add(time.Hour))
	if n6, at6 := rp.Position(); n6 != rp.Len() || !at6.Equal(rp.End()) {
		t.Errorf("after the end: %d items at %v", n6, at6)
	}
}

// TestReplayFlags: ] and [ go through the run's flags in order — the
// late progress and response of the cancelled request (a flood of late
// progress is one flag), the violation, the timeout.
func TestReplayFlags(t *testing.T) {
	data, _ := recordedRun(t)
	rp := openReplay(t, data, ReplayOptions{Tracker: replayConfig()})
	rp.SeekItem(0)
	var got []string
	for {
		f, ok := rp.NextFlag()
		if !ok {
			break
		}
		if n, _ := rp.Position(); n != f.Item+1 {
			t.Errorf("flag %v: at %d items, not just after it", f, n)
		}
		got = append(got, fmt.Sprintf("%s #%s %s", f.Kind, f.ID, f.Text))
	}
	want := []string{"late #2 progress", "late #2 response", "violation #- unknown_progress_token", "timeout #3 " + timeoutReason(t, rp)}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("flags forward:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var back []string
	for {
		f, ok := rp.PrevFlag()
		if !ok {
			break
		}
		back = append(back, fmt.Sprintf("%s #%s %s", f.Kind, f.ID, f.Text))
	}
	if len(back) != len(want)-1 || back[0] != want[len(want)-2] {
		t.Errorf("flags back from the last: %q", back)
	}
}

func timeoutReason(t *testing.T, rp *Replay) string {
	t.Helper()
	for _, f := range rp.Flags() {
		if f.Kind == FlagTimeout {
			return f.Text
		}
	}
	t.Fatal("no timeout flag")
	return ""
}

// TestReplaySaysWhereItDisagrees: a verdict the trace carries that the
// replay's tracker does not reach is counted and said, from the item
// that carries it on, and the replay's own judgement is what it shows.
func TestReplaySaysWhereItDisagrees(t *testing.T) {
	data, _ := recordedRun(t)
	tampered := bytes.Replace(data, []byte(`,"verdict":"late"`), nil, 1)
	rp := openReplay(t, tampered, ReplayOptions{Tracker: replayConfig()})
	n, last := rp.Disagreements()
	if n != 1 || last != "#2: the trace judged timely, this replay late" {
		t.Fatalf("%d disagreements, the latest %q", n, last)
	}
	rp.SeekItem(0)
	if n, _ := rp.Disagreements(); n != 0 {
		t.Errorf("%d disagreements at the start", n)
	}
}

// TestReplayOfADamagedTrace: lines that are not records are skipped and
// said, a last line cut short too; a file with no record is not a trace.
func TestReplayOfADamagedTrace(t *testing.T) {
	data, _ := recordedRun(t)
	lines := bytes.SplitAfter(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	last := lines[len(lines)-1]
	cut := append(bytes.Join(lines[:len(lines)-1], nil), last[:len(last)/2]...)
	cut = append([]byte("garbage\n"), cut...)
	rp := openReplay(t, cut, ReplayOptions{Tracker: replayConfig()})
	d := rp.Damage()
	if d == nil || d.Skipped != 2 || d.First.Line != 1 || d.Broke != nil {
		t.Fatalf("damage %+v", d)
	}
	if got := d.Error(); got != "2 lines are not trace records (the first: line 1), skipped" {
		t.Errorf("said %q", got)
	}
	whole := openReplay(t, data, ReplayOptions{Tracker: replayConfig()})
	if rp.Len() != whole.Len()-1 {
		t.Errorf("%d items read, want %d", rp.Len(), whole.Len()-1)
	}
	for _, s := range []string{"", "\n\n", "hello\nworld\n", `{"a":1}`} {
		if _, err := OpenReplay(strings.NewReader(s), int64(len(s)), ReplayOptions{}); !errors.Is(err, ErrNotATrace) {
			t.Errorf("%q opened: %v", s, err)
		}
	}
}

// TestReplayOfAProxysTrace: a proxy's --trace plays as the host's
// requests, observed as its recorder observed them.
func TestReplayOfAProxysTrace(t *testing.T) {
	var buf bytes.Buffer
	tw := trace.NewWriter(&buf, t0, nil)
	tw.SetSenders("host", "server")
	call := wire.Request(wire.IntID(7), "tools/call", []byte(`{"name":"slow"}`))
	msg, _ := wire.Decode(call)
	_ = tw.Event(event.Event{Kind: event.Sent, Time: t0.Add(time.Millisecond), RequestID: wire.IntID(7), Raw: call, Msg: msg})
	answer := wire.ResultResponse(wire.IntID(7), []byte(`{"content":[]}`))
	amsg, _ := wire.Decode(answer)
	_ = tw.Event(event.Event{Kind: event.Received, Time: t0.Add(time.Second), RequestID: wire.IntID(7), Raw: answer, Msg: amsg})
	_ = tw.Close()
	rp := openReplay(t, buf.Bytes(), ReplayOptions{})
	if !rp.Relayed() {
		t.Fatal("a proxy's trace read as inflight's own")
	}
	r, ok := rp.Tracker().Get(wire.IntID(7))
	if !ok || !r.ByHost || r.State != session.StateCompleted {
		t.Fatalf("the host's request: %+v", r)
	}
	rp.SeekTime(t0.Add(500 * time.Millisecond))
	if r, _ := rp.Tracker().Get(wire.IntID(7)); r.State != session.StatePending {
		t.Errorf("half way: %s", r.State)
	}
}

// TestReplayOfAnExport: the TUI's export (e) writes the protocol log,
// which has no line that begins a request: the replay begins each when
// it is sent, and follows the run as it does the --trace of it.
func TestReplayOfAnExport(t *testing.T) {
	var buf bytes.Buffer
	r := tracerun.New(&buf, t0, replayConfig())
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	r.Connected(ms(1), event.EraModern)
	slow := r.Begin(ms(100), wire.MethodToolsCall, `{"name":"slow"}`)
	r.Progress(ms(300), slow, 1, 4)
	r.Cancel(ms(400), slow, "user requested cancellation")
	r.Progress(ms(600), slow, 2, 4)
	r.Answer(ms(900), slow, `{"resultType":"complete","content":[]}`)
	quick := r.Begin(ms(1000), wire.MethodToolsCall, `{"name":"quick"}`)
	r.Answer(ms(1100), quick, `{"resultType":"complete","content":[]}`)
	var export bytes.Buffer
	if err := trace.WriteLog(&export, r.TR.Log(), t0, nil); err != nil {
		t.Fatal(err)
	}
	rp := openReplay(t, export.Bytes(), ReplayOptions{Tracker: replayConfig()})
	if n, last := rp.Disagreements(); n != 0 {
		t.Errorf("%d disagreements, the latest: %s", n, last)
	}
	if got, want := summary(rp.Tracker()), summary(r.TR); got != want {
		t.Errorf("the export's replay:\n%s\nthe run:\n%s", got, want)
	}
}

// failingAt reads src, and fails past its first n bytes.
type failingAt struct {
	src []byte
	n   int64
}

var errDisk = errors.New("input/output error")

func (f failingAt) ReadAt(p []byte, off int64) (int, error) {
	if off >= f.n {
		return 0, errDisk
	}
	k := copy(p, f.src[off:min(int64(len(f.src)), f.n)])
	if off+int64(k) >= f.n {
		return k, errDisk
	}
	return k, nil
}

// TestReplayOfATraceThatBreaksOff: a file whose reading fails half way
// opens with what was read, and says after which line it broke off.
func TestReplayOfATraceThatBreaksOff(t *testing.T) {
	data, _ := recordedRun(t)
	half := int64(bytes.IndexByte(data[len(data)/2:], '\n') + len(data)/2 + 1)
	rp, err := OpenReplay(failingAt{data, half}, int64(len(data)), ReplayOptions{Start: t0, Tracker: replayConfig()})
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Count(data[:half], []byte("\n"))
	d := rp.Damage()
	if d == nil || !errors.Is(d.Broke, errDisk) || d.BrokeAfter != lines || d.Skipped != 0 {
		t.Fatalf("damage %+v, want broken off after line %d", d, lines)
	}
	if !strings.Contains(d.Error(), fmt.Sprintf("breaks off after line %d: input/output error", lines)) {
		t.Errorf("said %q", d.Error())
	}
	whole := openReplay(t, data, ReplayOptions{Tracker: replayConfig()})
	if rp.Len() == 0 || rp.Len() >= whole.Len() {
		t.Errorf("%d items of %d", rp.Len(), whole.Len())
	}
	if _, err := OpenReplay(failingAt{data, 0}, int64(len(data)), ReplayOptions{}); !errors.Is(err, errDisk) {
		t.Errorf("a file that cannot be read at all: %v", err)
	}
}
