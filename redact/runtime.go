package redact

import (
	"container/list"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Secrets learnt while running are known to no Redactor built before
// them, so every Redactor also masks them: a token a server echoes back is
// masked in the TUI, traces and errors like the secrets on the command
// line. They come in two kinds.
//
// AddRuntime's secrets — the OAuth access and refresh tokens a run obtains,
// a registered client's secret — are kept for the whole run. They are few
// (one more per refresh), and a token in use must never be forgotten.
//
// Hold's are the credentials a proxy's host sends on its requests
// (Authorization, Cookie, any secret-named header, an Idempotency-Key
// too): a host may send a new one on every request, so keeping them all
// would grow without end. A held value is masked while its exchange is in
// flight and until its lines have been written (the caller releases it
// then); after that it stays among the newest RecentSecrets released
// values and is then forgotten.
//
// Why forgetting is safe for what inflight writes: the proxy never writes a
// header's value — headers are masked by name (IsSecretName), so a header
// needs no memory of values. What a value protects is a server's message
// that echoes the credential, and a server answers the request that carried
// it: that answer is written while the value is held. Only a server that
// repeats a credential in a later exchange, after RecentSecrets newer ones,
// could show it unmasked — a credential by then rotated out hundreds of
// times over.
//
// Matching does not rebuild anything when a value comes or goes: values
// are indexed by their first minRuntimeSecret bytes, and a text is scanned
// once whatever their number, so the cost of a request does not grow with
// the credentials seen before it.
var runtimeSecrets runtimeStore

// RecentSecrets is how many released credentials (Hold) stay masked after
// their exchange: the newest, by last use.
const RecentSecrets = 4096

// minRuntimeSecret is the shortest runtime secret masked; it is also the
// length of the anchor values are indexed by.
const minRuntimeSecret = 8

// AddRuntime marks v as secret for every Redactor from now on, for the
// rest of the run. It is cheap to call again with a value already known.
func AddRuntime(v string) {
	v = strings.TrimSpace(v)
	if len(v) < minRuntimeSecret {
		// Too short to be a credential: masking it would mask that text
		// everywhere (found in review).
		return
	}
	s := &runtimeSecrets
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.kept[v] {
		return
	}
	if s.kept == nil {
		s.kept = map[string]bool{}
	}
	s.kept[v] = true
	s.idx.addValue(v)
}

// Hold marks values as secret for every Redactor until release is called,
// and for a while after (see RecentSecrets). Values shorter than
// minRuntimeSecret are ignored. release may be called more than once.
func Hold(values ...string) (release func()) {
	var vs []string
	for _, v := range values {
		if v = strings.TrimSpace(v); len(v) >= minRuntimeSecret {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return func() {}
	}
	s := &runtimeSecrets
	s.mu.Lock()
	for _, v := range vs {
		s.hold(v)
	}
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			for _, v := range vs {
				s.release(v)
			}
		})
	}
}

// runtimeStore is what the run learnt: kept values, held ones, the recent
// released ones, and the index of them all. Redaction reads it under the
// read lock; adding and releasing take the write lock for a time that
// depends on the value alone.
type runtimeStore struct {
	mu   sync.RWMutex
	kept map[string]bool
	held map[string]int // value → how many holds are not released
	// recent is the released values, newest first; recentAt finds one.
	recent   list.List
	recentAt map[string]*list.Element
	idx      index
}

func (s *runtimeStore) hold(v string) {
	if s.held == nil {
		s.held = map[string]int{}
		s.recentAt = map[string]*list.Element{}
	}
	if s.held[v] > 0 {
		s.held[v]++
		return
	}
	s.held[v] = 1
	if e, ok := s.recentAt[v]; ok {
		// Known already (a host that sends one token every time): it moves
		// from the recent values back to the held ones.
		s.recent.Remove(e)
		delete(s.recentAt, v)
		return
	}
	if !s.kept[v] {
		s.idx.addValue(v)
	}
}

func (s *runtimeStore) release(v string) {
	n := s.held[v]
	switch {
	case n > 1:
		s.held[v] = n - 1
		return
	case n == 0:
		return
	}
	delete(s.held, v)
	if s.kept[v] {
		return // indexed for good
	}
	s.recentAt[v] = s.recent.PushFront(v)
	for s.recent.Len() > RecentSecrets {
		old := s.recent.Remove(s.recent.Back()).(string)
		delete(s.recentAt, old)
		s.idx.removeValue(old)
	}
}

// runtimeValues is how many values are masked besides the kept ones (for
// tests).
func runtimeValues() int {
	s := &runtimeSecrets
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.held) + s.recent.Len()
}

// resetRuntime forgets everything learnt (for tests and benchmarks).
func resetRuntime() {
	s := &runtimeSecrets
	s.mu.Lock()
	defer s.mu.Unlock()
	s.kept, s.held, s.recentAt = nil, nil, nil
	s.recent.Init()
	s.idx = index{}
}

// runtimeEmpty reports whether no runtime secret is known.
func runtimeEmpty() bool { return runtimeSecrets.idx.count.Load() == 0 }

// runtimeString masks the runtime secrets in s, as written and however
// JSON escapes them. It returns s itself when nothing was masked.
func runtimeString(s string) string {
	if runtimeEmpty() {
		return s
	}
	st := &runtimeSecrets
	st.mu.RLock()
	defer st.mu.RUnlock()
	if spans := st.idx.find(s, nil); len(spans) > 0 {
		s = replaceSpans(s, spans)
	}
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	return redactEscapedWith(s, func(dec string) [][2]int { return st.idx.find(dec, nil) })
}

// runtimeBytes is runtimeString for bytes: b itself when nothing was
// masked, a new slice otherwise (b is never modified).
func runtimeBytes(b []byte) []byte {
	if runtimeEmpty() || len(b) == 0 {
		return b
	}
	// Read b in place: runtimeString keeps nothing of it and returns it
	// as it is unless it masked something.
	in := unsafe.String(unsafe.SliceData(b), len(b))
	out := runtimeString(in)
	if unsafe.StringData(out) == unsafe.StringData(in) && len(out) == len(in) {
		return b
	}
	return []byte(out)
}

// replaceSpans replaces the sorted, disjoint spans of s with Placeholder.
func replaceSpans(s string, spans [][2]int) string {
	var out strings.Builder
	out.Grow(len(s))
	last := 0
	for _, sp := range spans {
		if sp[0] < last {
			continue
		}
		out.WriteString(s[last:sp[0]])
		out.WriteString(Placeholder)
		last = sp[1]
	}
	out.WriteString(s[last:])
	return out.String()
}

// index finds many values in a text in one pass. Each value is filed
// under its first minRuntimeSecret bytes (its anchor); a text is scanned
// position by position, and only at a position whose anchor a value has
// (a counting filter tells, most often, that none has) are the values of
// that anchor compared. Adding or removing a value touches its own entry
// alone. Every value is indexed with its JSON-escaped spelling, as
// Builder.AddValue does.
type index struct {
	forms    map[string]int     // form → how many values give it
	byAnchor map[uint64]*bucket // the forms of each anchor
	filter   []uint32           // how many anchors hash to each slot
	// count is how many forms are indexed: read without the lock, so
	// that a run with no runtime secret takes none.
	count atomic.Int64
}

// bucket is the forms of one anchor, by length: many values may share
// their first bytes (every JWT begins "eyJhbGciOi"), and a position where
// the anchor is found costs one look-up per length they have, not one
// comparison per value.
type bucket struct {
	set  map[string]struct{}
	lens []lenCount // longest first
}

type lenCount struct{ n, values int }

// filterBits sizes the filter: 64 Ki slots (256 KiB), so that with
// RecentSecrets values and their escaped forms in it, few positions of a
// text get past it.
const filterBits = 16

// smallIndex is the most forms a text is first checked against one by one
// (strings.Contains is fast): a text with none of them, nearly every
// message, is then not scanned.
const smallIndex = 8

func (x *index) addValue(v string) {
	for _, f := range formsOf(v) {
		x.add(f)
	}
}

func (x *index) removeValue(v string) {
	for _, f := range formsOf(v) {
		x.remove(f)
	}
}

// formsOf is v and, when it differs, v as JSON escapes it.
func formsOf(v string) []string {
	if enc, err := json.Marshal(v); err == nil {
		if e := string(enc[1 : len(enc)-1]); e != v {
			return []string{v, e}
		}
	}
	return []string{v}
}

func (x *index) add(f string) {
	if x.forms == nil {
		x.forms = map[string]int{}
		x.byAnchor = map[uint64]*bucket{}
		x.filter = make([]uint32, 1<<filterBits)
	}
	x.forms[f]++
	if x.forms[f] > 1 {
		return
	}
	a := anchor(f, 0)
	b := x.byAnchor[a]
	if b == nil {
		b = &bucket{set: map[string]struct{}{}}
		x.byAnchor[a] = b
	}
	b.set[f] = struct{}{}
	k := sort.Search(len(b.lens), func(k int) bool { return b.lens[k].n <= len(f) })
	if k < len(b.lens) && b.lens[k].n == len(f) {
		b.lens[k].values++
	} else {
		b.lens = slices.Insert(b.lens, k, lenCount{n: len(f), values: 1})
	}
	x.filter[slot(a)]++
	x.count.Add(1)
}

func (x *index) remove(f string) {
	switch x.forms[f] {
	case 0:
		return
	case 1:
		delete(x.forms, f)
	default:
		x.forms[f]--
		return
	}
	a := anchor(f, 0)
	b := x.byAnchor[a]
	delete(b.set, f)
	k := sort.Search(len(b.lens), func(k int) bool { return b.lens[k].n <= len(f) })
	if b.lens[k].values--; b.lens[k].values == 0 {
		b.lens = slices.Delete(b.lens, k, k+1)
	}
	if len(b.set) == 0 {
		delete(x.byAnchor, a)
	}
	x.filter[slot(a)]--
	x.count.Add(-1)
}

// find returns where the indexed forms are in s, appended to spans: at
// each position the longest form found there, then on after it.
func (x *index) find(s string, spans [][2]int) [][2]int {
	if len(x.forms) == 0 || len(s) < minRuntimeSecret {
		return spans
	}
	if len(x.forms) <= smallIndex {
		any := false
		for f := range x.forms {
			if strings.Contains(s, f) {
				any = true
				break
			}
		}
		if !any {
			return spans
		}
	}
	for i := 0; i+minRuntimeSecret <= len(s); {
		a := anchor(s, i)
		if x.filter[slot(a)] == 0 {
			i++
			continue
		}
		n := 0
		if b := x.byAnchor[a]; b != nil {
			for _, l := range b.lens {
				if i+l.n > len(s) {
					continue
				}
				if _, ok := b.set[s[i:i+l.n]]; ok {
					n = l.n
					break
				}
			}
		}
		if n == 0 {
			i++
			continue
		}
		spans = append(spans, [2]int{i, i + n})
		i += n
	}
	return spans
}

// anchor is the minRuntimeSecret (8) bytes of s at i, as a number.
func anchor(s string, i int) uint64 {
	_ = s[i+7]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

func slot(a uint64) uint64 { return (a * 0x9E3779B97F4A7C15) >> (64 - filterBits) }
