package waterfall

import (
	"fmt"
	"strings"
	"time"

	"inflight/ui/look"
	"inflight/ui/screen"
	"inflight/wire"
)

// Lane is one server's requests for Lanes: its name and the Env they are
// read through (its own tracker and sanitiser).
type Lane struct {
	Name string
	Env  screen.Env
}

// Lanes draws several servers' requests on one time axis, fitted to
// every server's run: a lane per server, a row naming it and then its
// newest requests' bars (as many as its share of the height holds, the
// selected one kept in sight), so that a timeout on one server can be
// read against the load on the others. sel names the selected request's
// lane and ID (ok false: none). env gives the styles and the clock.
func Lanes(env screen.Env, lanes []Lane, selLane int, selID wire.ID, width, height int) string {
	labelW, cells := geometry(width)
	a := sharedAxis(lanes, env.Now, cells)
	pens := newPens(env.Styles)
	lines := make([]string, 0, height)
	total := 0
	for _, l := range lanes {
		total += l.Env.Tracker.Len()
	}
	title := env.Styles.Title.Render("waterfall") + env.Styles.Dim.Render(fmt.Sprintf(" · %d servers · %d requests · a cell is %s · the whole run",
		len(lanes), total, tickLabel(a.per)))
	lines = append(lines, look.Fit(title, width))
	body := max(0, height-chromeLines)
	share := 0
	if len(lanes) > 0 {
		share = max(0, body/len(lanes)-1)
	}
	var head *frame
	for i, l := range lanes {
		t := l.Env.Tracker
		rows := buildRows(t)
		tr := &trails{}
		tr.read(t)
		lenv := l.Env
		lenv.Styles, lenv.Now = env.Styles, env.Now
		f := &frame{env: lenv, t: t, rows: &rows, a: a, ticks: a.ticks(), labelW: labelW, width: width, method: labelW >= 34,
			pens: pens, bar: newBar(a, env.Now), trails: tr}
		if head == nil {
			head = f
			lines = append(lines, f.header())
		}
		lines = append(lines, laneLabel(env, l, rows.requests, width))
		n := rows.len(t)
		pos, ok := -1, false
		if i == selLane {
			pos, ok = rows.posOf(t, selID)
		}
		from := max(0, n-share)
		if ok && pos < from {
			from = pos
		}
		f.idW = f.idWidth(from, min(n, from+share))
		var b strings.Builder
		for p := from; p < min(n, from+share); p++ {
			b.Reset()
			f.row(&b, rows.at(p), ok && p == pos)
			lines = append(lines, b.String())
		}
	}
	for len(lines) < height-1 {
		lines = append(lines, "")
	}
	if head != nil {
		lines = append(lines, head.legend())
	}
	if len(lines) > height {
		lines = lines[:max(0, height)]
	}
	return strings.Join(lines, "\n")
}

// laneLabel is the row naming a lane's server.
func laneLabel(env screen.Env, l Lane, requests int, width int) string {
	name := env.Styles.Bold.Render("── " + env.Line(l.Name) + " ")
	return look.Fit(name+env.Styles.Dim.Render(fmt.Sprintf("%d %s", requests, look.CountNoun(requests, "request", "requests"))), width)
}

// sharedAxis is the axis fitted to every lane's run: from the first
// request any server kept to now, labelled from the earliest origin.
func sharedAxis(lanes []Lane, now time.Time, cells int) axis {
	cells = max(cells, 1)
	origin0, start := now, now
	for _, l := range lanes {
		t := l.Env.Tracker
		if o := origin(t, now); o.Before(origin0) {
			origin0 = o
		}
		if s := fitStart(t, now); s.Before(start) {
			start = s
		}
	}
	a := axis{origin: origin0, cells: cells, per: fitPer(now.Sub(start), cells)}
	a.start = now.Add(-a.per * time.Duration(cells-1))
	return a
}
