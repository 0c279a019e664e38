package ui

import (
	"testing"

	"inflight/wire"
)

// The queue keeps each question once, in the order they came, and
// gives them all up to X.
func TestQuestionQueueKeepsEachQuestionOnce(t *testing.T) {
	var qq questionQueue
	a, b := &serverQuestion{id: wire.IntID(1)}, &serverQuestion{id: wire.IntID(2)}
	qq.add(a)
	qq.add(b)
	qq.add(a) // its answer could not be sent: it waits again, still once
	if qq.len() != 2 || !qq.has(a) || !qq.has(b) {
		t.Fatalf("queue %v, want a and b once each", qq.qs)
	}
	qq.drop(a)
	if qq.has(a) || qq.len() != 1 {
		t.Fatalf("a dropped, queue %v", qq.qs)
	}
	if all := qq.takeAll(); len(all) != 1 || all[0] != b || qq.len() != 0 {
		t.Fatalf("takeAll = %v, queue left %v", all, qq.qs)
	}
}
