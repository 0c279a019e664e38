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

type rawItem struct {
	data []byte
	seq  uint64
}

type fifoItem struct {
	key rawKey
	seq uint64
}

// rawStore keeps the exact bytes of requests and responses, bounded by
// their total size and evicted first in, first out. Entries replaced or
// dropped leave stale FIFO items behind; they are recognised by their
// sequence number and compacted away once they outnumber the live ones, so
// every operation is O(1) amortised.
type rawStore struct {
	limit int
	size  int
	items map[rawKey]rawItem
	fifo  []fifoItem
	head  int // fifo[head:] is the queue
	seq   uint64
}

func newRawStore(limit int) rawStore {
	return rawStore{limit: limit, items: map[rawKey]rawItem{}}
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
	s.items[key] = rawItem{data: data, seq: s.seq}
	s.fifo = append(s.fifo, fifoItem{key: key, seq: s.seq})
	s.size += len(data)
	for s.size > s.limit && s.head < len(s.fifo) {
		f := s.fifo[s.head]
		s.fifo[s.head] = fifoItem{}
		s.head++
		if it, ok := s.items[f.key]; ok && it.seq == f.seq {
			s.size -= len(it.data)
			delete(s.items, f.key)
		}
	}
	s.compact()
}

func (s *rawStore) get(key rawKey) ([]byte, bool) {
	it, ok := s.items[key]
	return it.data, ok
}

// rename moves what from holds to to, keeping its place in the FIFO.
func (s *rawStore) rename(from, to rawKey) {
	it, ok := s.items[from]
	if !ok {
		return
	}
	s.remove(to)
	delete(s.items, from)
	s.items[to] = it
	s.fifo = append(s.fifo, fifoItem{key: to, seq: it.seq})
	s.compact()
}

func (s *rawStore) remove(key rawKey) {
	if it, ok := s.items[key]; ok {
		s.size -= len(it.data)
		delete(s.items, key)
	}
}

// compact drops consumed and stale FIFO items once they are the majority.
func (s *rawStore) compact() {
	queued := len(s.fifo) - s.head
	if s.head < len(s.fifo)/2 && queued <= 2*len(s.items)+16 {
		return
	}
	n := 0
	for _, f := range s.fifo[s.head:] {
		if it, ok := s.items[f.key]; ok && it.seq == f.seq {
			s.fifo[n] = f
			n++
		}
	}
	clear(s.fifo[n:])
	s.fifo = s.fifo[:n]
	s.head = 0
}
