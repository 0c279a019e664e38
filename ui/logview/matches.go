package logview

import (
	"sort"
	"strings"

	"inflight/ui/screen"
)

// matches is the filter's result: the absolute positions of the matching
// entries among those scanned so far. New entries are scanned as they
// come; a needle that extends the last one searches only its matches,
// which keeps typing in a full log quick.
type matches struct {
	needle  string
	scanned int64 // log Total when last scanned
	abs     []int64
}

// items is the log as the view shows it: every entry, or with a filter
// only the matching ones (refreshMatches found them).
func (m *Model) items(env screen.Env) items {
	lg := env.Tracker.Log()
	first := lg.Total() - int64(lg.Len())
	if m.filter.Value() == "" {
		return items{n: lg.Len(), abs: func(i int) int64 { return first + int64(i) }}
	}
	match := m.matches.abs
	// Entries the bounded log dropped since are skipped.
	skip := sort.Search(len(match), func(i int) bool { return match[i] >= first })
	match = match[skip:]
	return items{n: len(match), abs: func(i int) int64 { return match[i] }}
}

// refreshMatches scans what the filter has not seen: the entries logged
// since, or the whole log for a new needle.
func (m *Model) refreshMatches(env screen.Env) {
	needle := strings.ToLower(m.filter.Value())
	mt := &m.matches
	if needle == "" {
		*mt = matches{}
		return
	}
	lg := env.Tracker.Log()
	first := lg.Total() - int64(lg.Len())
	skip := sort.Search(len(mt.abs), func(i int) bool { return mt.abs[i] >= first })
	mt.abs = mt.abs[skip:]
	switch {
	case needle == mt.needle:
	case mt.needle != "" && strings.Contains(needle, mt.needle):
		// Narrowed: only what matched before can match now.
		kept := mt.abs[:0]
		for _, abs := range mt.abs {
			if entryMatches(env, lg.At(int(abs-first)), needle) {
				kept = append(kept, abs)
			}
		}
		mt.abs = kept
	default:
		mt.abs, mt.scanned = nil, first
	}
	mt.needle = needle
	for abs := max(mt.scanned, first); abs < lg.Total(); abs++ {
		if entryMatches(env, lg.At(int(abs-first)), needle) {
			mt.abs = append(mt.abs, abs)
		}
	}
	mt.scanned = lg.Total()
}
