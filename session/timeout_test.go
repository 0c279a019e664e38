package session

import (
	"inflight/event"
	"testing"
	"time"
)

func TestRemaining(t *testing.T) {
	on, off := true, false
	cfg := Config{DefaultTimeout: 10 * time.Second, MaxTimeout: 30 * time.Second}
	type probe struct {
		at    int // ms
		left  time.Duration
		limit Limit
	}
	cases := []struct {
		name     string
		reset    *bool
		progress []int // ms at which progress arrives
		probes   []probe
		expireAt int // first instant expire cancels it
		limit    Limit
	}{
		{
			name:     "no progress: the timeout is nearer",
			probes:   []probe{{0, 10 * time.Second, LimitTimeout}, {4000, 6 * time.Second, LimitTimeout}, {12_000, 0, LimitTimeout}},
			expireAt: 10_000, limit: LimitTimeout,
		},
		{
			name:     "progress resets the timeout",
			progress: []int{8000, 16_000},
			probes:   []probe{{17_000, 9 * time.Second, LimitTimeout}, {20_000, 6 * time.Second, LimitTimeout}},
			expireAt: 26_000, limit: LimitTimeout,
		},
		{
			name:     "the maximum wins over resets",
			progress: []int{8000, 16_000, 24_000},
			probes:   []probe{{25_000, 5 * time.Second, LimitMax}},
			expireAt: 30_000, limit: LimitMax,
		},
		{
			name:     "without reset progress changes nothing",
			reset:    &off,
			progress: []int{8000},
			probes:   []probe{{9000, time.Second, LimitTimeout}},
			expireAt: 10_000, limit: LimitTimeout,
		},
		{
			name:     "explicit reset",
			reset:    &on,
			progress: []int{8000},
			probes:   []probe{{9000, 9 * time.Second, LimitTimeout}},
			expireAt: 18_000, limit: LimitTimeout,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cc := cfg
			cc.ResetOnProgress = c.reset
			h := newHarness(t, cc, event.EraModern, event.TransportStdio)
			r := h.begin(0, "tools/call", "")
			for i, at := range c.progress {
				h.recv(at, progress(1, float64(i+1)))
			}
			for _, p := range c.probes {
				left, limit := r.Remaining(ms(p.at))
				if left != p.left || limit != p.limit {
					t.Errorf("Remaining(%dms) = %v %v, want %v %v", p.at, left, limit, p.left, p.limit)
				}
			}
			next, ok := h.tr.NextDeadline()
			expect(t, "has deadline", ok, true)
			expect(t, "next deadline", next, ms(c.expireAt))
			if got, _ := h.tr.expire(ms(c.expireAt - 1)); len(got) != 0 {
				t.Fatalf("expired early: %v", got)
			}
			got, _ := h.tr.expire(ms(c.expireAt))
			if len(got) != 1 || got[0].Limit != c.limit {
				t.Fatalf("expire = %+v, want one with limit %v", got, c.limit)
			}
			expect(t, "state", r.State, StateCancelRequested)
			expect(t, "cause", r.Cancel.Cause, CauseTimeout)
			expect(t, "reason", r.Cancel.Reason, "timeout")
			expect(t, "cancel limit", r.Cancel.Limit, c.limit)
			if _, l := r.Remaining(ms(c.expireAt)); l != LimitNone {
				t.Errorf("Remaining while cancelling = %v, want none", l)
			}
			next, _ = h.tr.NextDeadline()
			expect(t, "settle deadline", next, ms(c.expireAt).Add(DefaultLateWindow))
			checkInvariants(t, h.tr)
		})
	}
}

func TestRequestOptions(t *testing.T) {
	off := false
	tr := NewTracker(Config{})
	r := tr.Begin("tools/call", nil, RequestOptions{Timeout: 2 * time.Hour, MaxTimeout: time.Hour, ResetOnProgress: &off}, t0)
	expect(t, "timeout clamped to max", r.Timeout.Timeout, time.Hour)
	expect(t, "max", r.Timeout.Max, time.Hour)
	expect(t, "reset", r.Timeout.ResetOnProgress, false)
	d := tr.Begin("tools/call", nil, RequestOptions{}, t0)
	expect(t, "default timeout", d.Timeout.Timeout, DefaultTimeout)
	expect(t, "default max", d.Timeout.Max, DefaultMaxTimeout)
	expect(t, "default reset", d.Timeout.ResetOnProgress, true)
	expect(t, "ids from 1", r.ID, id(1))
	expect(t, "token is id", d.ProgressToken, id(2))
}

func TestNextDeadlinePicksNearest(t *testing.T) {
	h := newHarness(t, Config{DefaultTimeout: 10 * time.Second}, event.EraModern, event.TransportStdio)
	if _, ok := h.tr.NextDeadline(); ok {
		t.Fatal("deadline with nothing in flight")
	}
	a := h.begin(0, "tools/call", "")
	h.begin(1000, "tools/call", "")
	next, _ := h.tr.NextDeadline()
	expect(t, "first timeout", next, ms(10_000))
	h.cancel(2000, a, CauseUser)
	next, _ = h.tr.NextDeadline()
	expect(t, "settle of the cancel", next, ms(7000))
	h.tr.expire(next)
	next, _ = h.tr.NextDeadline()
	expect(t, "second timeout", next, ms(11_000))
	checkInvariants(t, h.tr)
}

func TestExpireOrdersByAge(t *testing.T) {
	h := newHarness(t, Config{DefaultTimeout: time.Second}, event.EraModern, event.TransportStdio)
	for range 5 {
		h.begin(0, "tools/call", "")
	}
	h.recv(10, result(2, complete)) // shuffles the active set
	got, _ := h.tr.expire(ms(1000))
	if len(got) != 4 {
		t.Fatalf("expire = %v", got)
	}
	for i, want := range []int{1, 3, 4, 5} {
		expect(t, "expired", got[i].ID, id(want))
	}
	checkInvariants(t, h.tr)
}

func TestAdjustTimeout(t *testing.T) {
	cfg := Config{DefaultTimeout: 10 * time.Second, MaxTimeout: 60 * time.Second}
	cases := []struct {
		name     string
		at       int
		delta    time.Duration
		ok       bool
		timeout  time.Duration
		deadline int
		why      bool
	}{
		{name: "lengthen", at: 1000, delta: 5 * time.Second, ok: true, timeout: 15 * time.Second, deadline: 15_000},
		{name: "shorten", at: 1000, delta: -5 * time.Second, ok: true, timeout: 5 * time.Second, deadline: 5000},
		{name: "shorten past now leaves a second", at: 8000, delta: -9 * time.Second, ok: true, timeout: 9 * time.Second, deadline: 9000, why: true},
		{name: "never beyond the max", at: 1000, delta: time.Hour, ok: true, timeout: time.Minute, deadline: 60_000, why: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, cfg, event.EraModern, event.TransportStdio)
			r := h.begin(0, "tools/call", "")
			ok, why := adjusted(h.tr.AdjustTimeout(r.ID, c.delta, ms(c.at)))
			expect(t, "ok", ok, c.ok)
			expect(t, "why given", why != "", c.why)
			expect(t, "timeout", r.Timeout.Timeout, c.timeout)
			expect(t, "deadline", r.Timeout.Deadline, ms(c.deadline))
			expect(t, "max deadline unchanged", r.Timeout.MaxDeadline, ms(60_000))
		})
	}
	t.Run("after progress counts from the last progress", func(t *testing.T) {
		h := newHarness(t, cfg, event.EraModern, event.TransportStdio)
		r := h.begin(0, "tools/call", "")
		h.recv(4000, progress(1, 1))
		ok, _ := adjusted(h.tr.AdjustTimeout(r.ID, 10*time.Second, ms(5000)))
		expect(t, "ok", ok, true)
		expect(t, "deadline", r.Timeout.Deadline, ms(24_000))
	})
	t.Run("refused when not running", func(t *testing.T) {
		h := newHarness(t, cfg, event.EraModern, event.TransportStdio)
		r := h.begin(0, "tools/call", "")
		h.cancel(10, r, CauseUser)
		if ok, why := adjusted(h.tr.AdjustTimeout(r.ID, time.Second, ms(20))); ok || why == "" {
			t.Errorf("cancelling: ok=%v why=%q", ok, why)
		}
		h.recv(30, result(1, complete))
		if ok, why := adjusted(h.tr.AdjustTimeout(r.ID, time.Second, ms(40))); ok || why == "" {
			t.Errorf("final: ok=%v why=%q", ok, why)
		}
		if ok, _ := adjusted(h.tr.AdjustTimeout(id(9), time.Second, ms(40))); ok {
			t.Error("unknown request adjusted")
		}
	})
}
