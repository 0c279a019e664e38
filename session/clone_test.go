package session

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
	"unsafe"

	"inflight/event"
	"inflight/wire"
)

// op is one step a tracker's caller takes: an event applied, a request
// begun or cancelled, the clock's Due. Each is deterministic given the
// tracker's state, so that one list of ops drives two trackers alike.
type op struct {
	name string
	do   func(tr *Tracker)
}

// randomOps is a session of n steps chosen by seed: requests of several
// kinds (plain, subscriptions/listen, tasks), progress, answers on time
// and late, cancels by the user and by timeouts, the server's own
// requests and cancels, stderr, garbage, and a connection lost and made
// again — what a replay's checkpoints hold.
func randomOps(seed uint64, n int, era event.Era, start int) []op {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	at := start
	begun := 0
	var ops []op
	add := func(name string, do func(tr *Tracker)) { ops = append(ops, op{name, do}) }
	info := &event.ConnInfo{Era: era, Transport: event.TransportStdio, ProtocolVersion: "x"}
	add("connected", func(tr *Tracker) { tr.Apply(event.Event{Kind: event.Connected, Time: ms(at), Info: info}) })
	for len(ops) < n {
		at += rng.IntN(400)
		now := at
		pick := func() int { return 1 + rng.IntN(max(begun, 1)) }
		switch k := rng.IntN(14); {
		case k < 3 || begun == 0:
			begun++
			method, params := wire.MethodToolsCall, `{"name":"slow","_meta":{"progressToken":`+fmt.Sprint(begun)+`}}`
			switch rng.IntN(4) {
			case 1:
				method, params = "subscriptions/listen", `{"notifications":{"resources/updated":{}}}`
			case 2:
				params = `{"name":"slow","task":{"ttl":60000}}`
			}
			timeout := time.Duration(1+rng.IntN(20)) * time.Second
			add("begin", func(tr *Tracker) {
				r := tr.Begin(method, json.RawMessage(params), RequestOptions{Timeout: timeout}, ms(now))
				raw := wire.Request(r.ID, method, json.RawMessage(params))
				msg, _ := wire.Decode(raw)
				tr.Apply(event.Event{Kind: event.Sent, Time: ms(now), RequestID: r.ID, Raw: raw, Msg: msg})
			})
		case k < 5:
			id, v := pick(), float64(rng.IntN(100))
			add("progress", func(tr *Tracker) { tr.Apply(received(now, progress(id, v))) })
		case k < 6:
			id := pick()
			add("result", func(tr *Tracker) { tr.Apply(received(now, result(id, `{"content":[]}`))) })
		case k < 7:
			id := pick()
			add("task handle", func(tr *Tracker) {
				tr.Apply(received(now, result(id, `{"task":{"taskId":"t`+fmt.Sprint(id)+`","status":"working","pollInterval":500}}`)))
			})
		case k < 8:
			id := pick()
			add("error", func(tr *Tracker) { tr.Apply(received(now, rpcError(id, -32603, "failed"))) })
		case k < 9:
			id := pick()
			add("cancel", func(tr *Tracker) {
				if _, err := tr.RequestCancel(wire.IntID(int64(id)), "user", CauseUser, ms(now)); err == nil {
					tr.Apply(event.Event{Kind: event.CancelSent, Time: ms(now), RequestID: wire.IntID(int64(id)), Signal: event.SignalNotification, Reason: "user"})
				}
			})
		case k < 10:
			add("due", func(tr *Tracker) {
				d := tr.Due(ms(now))
				for _, r := range d.Requests {
					raw := wire.Request(r.ID, r.Method, r.ChildParams)
					msg, _ := wire.Decode(raw)
					tr.Apply(event.Event{Kind: event.Sent, Time: ms(now), RequestID: r.ID, Raw: raw, Msg: msg})
				}
			})
		case k < 11:
			id := pick()
			add("server cancel", func(tr *Tracker) { tr.Apply(received(now, serverCancel(id))) })
		case k < 12:
			add("stderr", func(tr *Tracker) { tr.Apply(event.Event{Kind: event.Stderr, Time: ms(now), Text: "line"}) })
		case k < 13:
			add("malformed", func(tr *Tracker) { tr.Apply(malformed(now, `{"jsonrpc":`)) })
		default:
			if rng.IntN(4) == 0 {
				add("lost", func(tr *Tracker) { tr.Apply(event.Event{Kind: event.TransportClosed, Time: ms(now)}) })
				add("reconnected", func(tr *Tracker) { tr.Apply(event.Event{Kind: event.Connected, Time: ms(now), Info: info}) })
			} else {
				rtt := time.Duration(1+rng.IntN(5)) * time.Millisecond
				add("round trip", func(tr *Tracker) { tr.Apply(event.Event{Kind: event.RoundTrip, Time: ms(now), RTT: rtt}) })
			}
		}
	}
	return ops
}

// received is a message the client read at ms(at), as msgEvent builds it.
func received(at int, raw string) event.Event {
	msg, _ := wire.Decode([]byte(raw))
	ev := event.Event{Kind: event.Received, Time: ms(at), Raw: []byte(raw), Msg: msg}
	if msg.Kind != wire.KindNotification {
		ev.RequestID = msg.ID
	}
	if msg.Method == wire.NotifyProgress {
		if p, err := wire.DecodeProgress(msg.Params); err == nil {
			ev.Progress = &p
		}
	}
	return ev
}

func run(tr *Tracker, ops []op) *Tracker {
	for _, o := range ops {
		o.do(tr)
	}
	return tr
}

// smallConfig bounds everything tightly so that the rings wrap and the
// history evicts within a short session.
func smallConfig() Config {
	return Config{HistoryLimit: 8, LogEntries: 20, StderrLines: 5, Violations: 6, RawStoreBytes: 2048, LateWindow: time.Second, Converse: true}
}

// TestCloneThenApplyEqualsApply: for random sessions cut anywhere, a clone
// taken at the cut and played on equals the original played on, and the
// original, played on, equals a tracker that played the whole session
// from the start: cloning changes nothing, and loses nothing.
func TestCloneThenApplyEqualsApply(t *testing.T) {
	for seed := range uint64(40) {
		era := event.EraLegacy
		if seed%2 == 0 {
			era = event.EraModern
		}
		cfg := Config{}
		if seed%3 == 0 {
			cfg = smallConfig()
		}
		ops := randomOps(seed, 120, era, 0)
		cut := int(seed*7) % len(ops)
		tr := run(NewTracker(cfg), ops[:cut])
		clone := tr.Clone()
		if !reflect.DeepEqual(clone, tr) {
			t.Fatalf("seed %d: a fresh clone differs from its original", seed)
		}
		run(clone, ops[cut:])
		run(tr, ops[cut:])
		whole := run(NewTracker(cfg), ops)
		if !reflect.DeepEqual(clone, whole) {
			t.Errorf("seed %d (cut at %d of %d): the clone played on differs from the whole session played", seed, cut, len(ops))
		}
		if !reflect.DeepEqual(tr, whole) {
			t.Errorf("seed %d (cut at %d of %d): the original played on differs from the whole session played", seed, cut, len(ops))
		}
	}
}

// TestCloneEvolvesIndependently: a clone and its original, each given a
// different future, each end as a tracker that lived only its own.
func TestCloneEvolvesIndependently(t *testing.T) {
	for seed := range uint64(20) {
		cfg := Config{}
		if seed%2 == 1 {
			cfg = smallConfig()
		}
		past := randomOps(seed, 80, event.EraLegacy, 0)
		futureA := randomOps(seed+100, 60, event.EraLegacy, 1_000_000)[1:]
		futureB := randomOps(seed+200, 60, event.EraModern, 1_000_000)[1:]
		orig := run(NewTracker(cfg), past)
		clone := orig.Clone()
		before := run(NewTracker(cfg), past)
		run(clone, futureB)
		if !reflect.DeepEqual(orig, before) {
			t.Fatalf("seed %d: playing the clone changed the original", seed)
		}
		run(orig, futureA)
		wantA := run(run(NewTracker(cfg), past), futureA)
		wantB := run(run(NewTracker(cfg), past), futureB)
		if !reflect.DeepEqual(orig, wantA) {
			t.Errorf("seed %d: the original differs from the past and its own future", seed)
		}
		if !reflect.DeepEqual(clone, wantB) {
			t.Errorf("seed %d: the clone differs from the past and its own future", seed)
		}
	}
}

// TestCloneSharesNothingMutable walks a clone and its original side by
// side: no pointer, map or slice of the clone is its original's, except
// the bytes and values Clone documents as shared (raw bytes, ConnInfo,
// errors), which the tracker never writes into. A field added to the
// tracker and forgotten by Clone fails here.
func TestCloneSharesNothingMutable(t *testing.T) {
	tr := run(NewTracker(smallConfig()), randomOps(7, 300, event.EraLegacy, 0))
	tr2 := run(NewTracker(Config{}), randomOps(8, 300, event.EraModern, 0))
	for _, orig := range []*Tracker{tr, tr2} {
		c := orig.Clone()
		w := sharedWalk{seen: map[[2]uintptr]bool{}}
		w.walk(reflect.ValueOf(orig).Elem(), reflect.ValueOf(c).Elem(), "Tracker")
		for _, p := range w.shared {
			t.Errorf("the clone shares %s with its original", p)
		}
		if w.pointers == 0 {
			t.Fatal("the walk followed no pointer")
		}
	}
}

type sharedWalk struct {
	seen     map[[2]uintptr]bool
	shared   []string
	pointers int
}

var (
	connInfoType = reflect.TypeFor[event.ConnInfo]()
	errorType    = reflect.TypeFor[error]()
)

func (w *sharedWalk) walk(a, b reflect.Value, path string) {
	if a.Type() == errorType || a.Type() == connInfoType {
		return // immutable, shared by design
	}
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return
		}
		if a.Type().Elem() == connInfoType {
			return
		}
		w.pointers++
		if a.Pointer() == b.Pointer() {
			w.shared = append(w.shared, path)
			return
		}
		key := [2]uintptr{a.Pointer(), b.Pointer()}
		if w.seen[key] {
			return
		}
		w.seen[key] = true
		w.walk(a.Elem(), b.Elem(), path)
	case reflect.Struct:
		for i := range a.NumField() {
			w.walk(field(a, i), field(b, i), path+"."+a.Type().Field(i).Name)
		}
	case reflect.Slice:
		if a.Type().Elem().Kind() == reflect.Uint8 {
			return // bytes: shared by design
		}
		if a.Cap() > 0 && b.Cap() > 0 && a.Pointer() == b.Pointer() {
			w.shared = append(w.shared, path+" (slice)")
			return
		}
		for i := range min(a.Len(), b.Len()) {
			w.walk(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
	case reflect.Array:
		for i := range a.Len() {
			w.walk(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
	case reflect.Map:
		if a.IsNil() || b.IsNil() {
			return
		}
		if a.Pointer() == b.Pointer() {
			w.shared = append(w.shared, path+" (map)")
			return
		}
		iter := a.MapRange()
		for iter.Next() {
			if bv := b.MapIndex(iter.Key()); bv.IsValid() {
				w.walk(iter.Value(), bv, fmt.Sprintf("%s[%v]", path, iter.Key()))
			}
		}
	case reflect.Interface:
		if !a.IsNil() && !b.IsNil() {
			w.walk(a.Elem(), b.Elem(), path)
		}
	}
}

// field reads a struct's field, exported or not.
func field(v reflect.Value, i int) reflect.Value {
	f := v.Field(i)
	if f.CanInterface() || !f.CanAddr() {
		return f
	}
	return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
}
