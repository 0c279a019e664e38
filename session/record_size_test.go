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
