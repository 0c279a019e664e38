package session

import "inflight/wire"

// rawKind says which message of a request a raw store entry holds.
type rawKind uint8

const (
	rawRequest rawKind = iota
	rawResponse
	// rawTaskOutcome is a task's outcome: the result object (or the
	// JSON-RPC error object) its terminal status or tasks/result brought.
	rawTaskOutcome
)

type rawKey struct {
	id   wire.ID
	kind rawKind
}

// rawItem is one message's bytes and when they were put (0: none).
type rawItem struct {
	data []byte
	seq  uint64
}

// rawPair is a request's bytes and its response's, under one map entry:
// nearly every request has both, and one entry for the two costs less
// than two.
type rawPair [2]rawItem

// fifoItem is a put in the order it came: the key's ID, and its sequence
// number shifted left twice, the key's kind in the two bits freed.
type fifoItem struct {
	id  wire.ID
	tag uint64
}

func (f fifoItem) seq() uint64 { return f.tag >> 2 }
func (f fifoItem) key() rawKey { return rawKey{f.id, rawKind(f.tag & 3)} }

// rawStore keeps the exact bytes of requests and responses, bounded by
// their total size and evicted first in, first out. Entries replaced or
// dropped leave stale FIFO items behind; they are recognised by their
// sequence number and compacted away once they outnumber the live ones, so
// every operation is O(1) amortised.
type rawStore struct {
	limit int
	size  int
	// items holds requests' and responses' bytes by ID, outcomes tasks'
	// outcomes (few); live counts the items held in both.
	items    map[wire.ID]rawPair
	outcomes map[wire.ID]rawItem
	live     int
	fifo     []fifoItem
	head     int // fifo[head:] is the queue
	seq      uint64
}

func newRawStore(limit int) rawStore {
	return rawStore{limit: limit, items: map[wire.ID]rawPair{}}
}

// item is what key holds (seq 0: nothing).
func (s *rawStore) item(key rawKey) rawItem {
	if key.kind == rawTaskOutcome {
		return s.outcomes[key.id]
	}
	return s.items[key.id][key.kind]
}

// set makes key hold it (seq 0: nothing), keeping live.
func (s *rawStore) set(key rawKey, it rawItem) {
	if s.item(key).seq != 0 {
		s.live--
	}
	if it.seq != 0 {
		s.live++
	}
	if key.kind == rawTaskOutcome {
		if it.seq == 0 {
			delete(s.outcomes, key.id)
			return
		}
		if s.outcomes == nil {
			s.outcomes = map[wire.ID]rawItem{}
		}
		s.outcomes[key.id] = it
		return
	}
	p := s.items[key.id]
	p[key.kind] = it
	if p[0].seq == 0 && p[1].seq == 0 {
		delete(s.items, key.id)
		return
	}
	s.items[key.id] = p
}

// put stores data under key, replacing what was there. data is kept, not
// copied: callers pass bytes nobody else modifies. Data larger than the
// whole store is not kept at all (and removes any older value, which would
// otherwise be shown as if it were the newer message).
func (s *rawStore) put(key rawKey, data []byte) {
	s.remove(key)
	if len(data) > s.limit {
		return
	}
	s.seq++
	s.set(key, rawItem{data: data, seq: s.seq})
	s.fifo = append(s.fifo, fifoItem{id: key.id, tag: s.seq<<2 | uint64(key.kind)})
	s.size += len(data)
	for s.size > s.limit && s.head < len(s.fifo) {
		f := s.fifo[s.head]
		s.fifo[s.head] = fifoItem{}
		s.head++
		if it := s.item(f.key()); it.seq == f.seq() {
			s.size -= len(it.data)
			s.set(f.key(), rawItem{})
		}
	}
	s.compact()
}

func (s *rawStore) get(key rawKey) ([]byte, bool) {
	it := s.item(key)
	return it.data, it.seq != 0
}

// rename moves what from holds to to, keeping its place in the FIFO.
func (s *rawStore) rename(from, to rawKey) {
	it := s.item(from)
	if it.seq == 0 {
		return
	}
	s.remove(to)
	s.set(from, rawItem{})
	s.set(to, it)
	s.fifo = append(s.fifo, fifoItem{id: to.id, tag: it.seq<<2 | uint64(to.kind)})
	s.compact()
}

func (s *rawStore) remove(key rawKey) {
	if it := s.item(key); it.seq != 0 {
		s.size -= len(it.data)
		s.set(key, rawItem{})
	}
}

// compact drops consumed and stale FIFO items once they are the majority.
func (s *rawStore) compact() {
	queued := len(s.fifo) - s.head
	if s.head < len(s.fifo)/2 && queued <= 2*s.live+16 {
		return
	}
	n := 0
	for _, f := range s.fifo[s.head:] {
		if s.item(f.key()).seq == f.seq() {
			s.fifo[n] = f
			n++
		}
	}
	clear(s.fifo[n:])
	s.fifo = s.fifo[:n]
	s.head = 0
}
