package session

import (
	"testing"
	"unsafe"
)

// A history keeps thousands of finished requests (20 servers × 10 000 in
// the merged list), so a Request record is kept within one allocation
// size class: 696 bytes plus the allocator's 8-byte header of a large
// object with pointers fill the 704-byte class. Past it every record
// costs 768. What only some requests need goes in requestAside.
func TestRequestRecordSize(t *testing.T) {
	const header, class = 8, 704
	if got := unsafe.Sizeof(Request{}); got+header > class {
		t.Errorf("a Request is %d bytes; with the %d-byte header it no longer fits the %d-byte size class: move what few requests need into requestAside", got, header, class)
	}
	if got := unsafe.Sizeof(requestAside{}); got > 128 {
		t.Errorf("requestAside is %d bytes, want ≤ 128", got)
	}
}

// A full ring holds its bound and no slack past it (a protocol log of
// 10 000 entries per server, 20 servers).
func TestRingCapacityIsItsBound(t *testing.T) {
	for _, limit := range []int{1, 7, 300, 10_000} {
		r := ring[logRec]{limit: limit}
		for i := range 2*limit + 3 {
			r.push(logRec{Text: itoa(i)})
		}
		if cap(r.buf) != limit || r.len() != limit {
			t.Errorf("limit %d: len %d, cap %d", limit, r.len(), cap(r.buf))
		}
		if got := r.at(0).Text; got != itoa(limit+3) {
			t.Errorf("limit %d: oldest %q, want %q", limit, got, itoa(limit+3))
		}
	}
}
