package waterfall

import (
	"fmt"
	"strconv"
	"time"

	"inflight/session"
)

// axisMode says how the time axis is placed.
type axisMode uint8

const (
	// fitRun spans the whole run, from the first request kept to now,
	// and keeps spanning it as it grows (F).
	fitRun axisMode = iota
	// followNow keeps now at the right edge, at a fixed zoom (N, G/end,
	// and zooming from fitRun).
	followNow
	// panned stays where it was moved to (←, →).
	panned
)

// axisState is the axis as the user left it: how it is placed, the time a
// cell stands for (followNow, panned) and the left edge's time from the
// origin (panned).
type axisState struct {
	mode axisMode
	per  time.Duration
	from time.Duration
}

// axis is the axis of one frame: cells cells from start, each per long,
// labelled from origin (0s).
type axis struct {
	origin, start time.Time
	per           time.Duration
	cells         int
}

// Zoom bounds: a cell stands for no less than a millisecond and no more
// than an hour.
const (
	minPer = time.Millisecond
	maxPer = time.Hour
)

// zoomLevels are the cell lengths i and I step through.
var zoomLevels = []time.Duration{
	time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond,
	10 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour,
}

// tickSteps are the steps the axis's labels may come at.
var tickSteps = append(zoomLevels[:len(zoomLevels):len(zoomLevels)], 2*time.Hour, 6*time.Hour, 12*time.Hour, 24*time.Hour)

// tickGap is the fewest cells between two labels of the axis: room for
// one ("1m30s") and a space.
const tickGap = 8

// origin is the time the axis labels 0s: when the connection was made, or
// when the first request kept was created if that was earlier (a trace
// that begins mid-run) or no connection is known; now for an empty run.
func origin(t *session.Tracker, now time.Time) time.Time {
	if t.Len() == 0 {
		if c := t.ConnectedAt(); !c.IsZero() {
			return c
		}
		return now
	}
	first := t.At(0).Created
	if c := t.ConnectedAt(); !c.IsZero() && !c.After(first) {
		return c
	}
	return first
}

// fitStart is where the whole run begins: the first request kept.
func fitStart(t *session.Tracker, now time.Time) time.Time {
	if t.Len() == 0 {
		return now
	}
	return t.At(0).Created
}

// place is the axis of a frame of cells cells at now.
func (s axisState) place(t *session.Tracker, now time.Time, cells int) axis {
	cells = max(cells, 1)
	a := axis{origin: origin(t, now), cells: cells, per: clampPer(s.per)}
	switch s.mode {
	case fitRun:
		// As when following, now is on the last cell, so that zooming
		// from here keeps the right edge where it is.
		a.per = fitPer(now.Sub(fitStart(t, now)), cells)
		a.start = now.Add(-a.per * time.Duration(cells-1))
	case followNow:
		a.start = now.Add(-a.per * time.Duration(cells-1))
	case panned:
		a.start = a.origin.Add(s.from)
	}
	return a
}

// fitPer is the shortest cell, to the millisecond, that fits span into
// cells cells with its end on the last one.
func fitPer(span time.Duration, cells int) time.Duration {
	if cells <= 1 {
		return clampPer(span)
	}
	per := span / time.Duration(cells-1)
	if span%time.Duration(cells-1) != 0 {
		per++
	}
	if r := per % time.Millisecond; r != 0 {
		per += time.Millisecond - r
	}
	return clampPer(per)
}

func clampPer(per time.Duration) time.Duration { return min(max(per, minPer), maxPer) }

// zoomIn is the zoom level below per; zoomOut the one above.
func zoomIn(per time.Duration) time.Duration {
	for i := len(zoomLevels) - 1; i >= 0; i-- {
		if zoomLevels[i] < per {
			return zoomLevels[i]
		}
	}
	return zoomLevels[0]
}

func zoomOut(per time.Duration) time.Duration {
	for _, l := range zoomLevels {
		if l > per {
			return l
		}
	}
	return zoomLevels[len(zoomLevels)-1]
}

// col is the cell at time at, which may lie outside 0…cells-1.
func (a axis) col(at time.Time) int {
	d := at.Sub(a.start)
	c := d / a.per
	if d < 0 && d%a.per != 0 {
		c-- // floor, not toward zero
	}
	return int(c)
}

// tick is one label of the axis.
type tick struct {
	col   int
	label string
}

// ticks are the axis's labels: at a round step from the origin, far
// enough apart to read.
func (a axis) ticks() []tick {
	step := tickSteps[len(tickSteps)-1]
	for _, s := range tickSteps {
		if s >= a.per*tickGap {
			step = s
			break
		}
	}
	from := a.start.Sub(a.origin)
	k := from / step
	if from > 0 && from%step != 0 {
		k++
	}
	var out []tick
	for ; ; k++ {
		at := a.origin.Add(k * step)
		c := a.col(at)
		if c >= a.cells {
			break
		}
		if c >= 0 {
			out = append(out, tick{c, tickLabel(k * step)})
		}
	}
	return out
}

// tickLabel is a time from the origin as the axis says it: 0s, 500ms,
// 1.5s, 2m, 1m30s, 1h.
func tickLabel(d time.Duration) string {
	sign := ""
	if d < 0 {
		sign, d = "-", -d
	}
	var s string
	switch {
	case d == 0:
		s = "0s"
	case d < time.Second:
		s = fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		s = seconds(d)
	default:
		if h := d / time.Hour; h > 0 {
			s += fmt.Sprintf("%dh", h)
		}
		if m := d % time.Hour / time.Minute; m > 0 {
			s += fmt.Sprintf("%dm", m)
		}
		if sec := d % time.Minute; sec > 0 {
			s += seconds(sec)
		}
	}
	return sign + s
}

// seconds is d in seconds, with as many decimals as it needs.
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}
