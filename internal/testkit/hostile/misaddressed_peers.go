package hostile

import (
	"sync"
	"time"

	"inflight/wire"
)

// CancelCodeZero reports progress and waits; when the client cancels, it
// answers 20ms later with the error {"code":0,"message":"Request
// cancelled"}, as python-sdk v1 servers do: a cancellation made up as an
// error whose code no JSON-RPC range defines. Uncancelled, it answers
// after six steps of 40ms.
var CancelCodeZero = Stdio{Name: "cancel-code-zero", Call: func(s *Session, req Request) {
	cancelled := s.CancelledCh(req.ID)
	for step := 1; step <= 6; step++ {
		if !req.Token.IsZero() {
			_ = s.Progress(req.Token, float64(step), 6, "")
		}
		select {
		case <-cancelled:
			time.Sleep(answerAfterCancel)
			_ = s.Send([]byte(`{"jsonrpc":"2.0","id":` + req.ID.Raw() + `,"error":{"code":0,"message":"Request cancelled"}}`))
			return
		case <-s.Done():
			return
		case <-time.After(40 * time.Millisecond):
		}
	}
	_ = s.Reply(req.ID, textResult("six steps"))
}}

// misaddressed remembers the ID of the last tools/call MisaddressedIDs
// answered.
var misaddressed struct {
	sync.Mutex
	last map[*Session]wire.ID
}

// MisaddressedIDs answers its first tools/call under its own ID and every
// later one under the ID of the call before it (one already answered),
// as a server that mixes up its requests does: the request it was meant
// for waits on.
var MisaddressedIDs = Stdio{Name: "misaddressed-ids", Call: func(s *Session, req Request) {
	misaddressed.Lock()
	if misaddressed.last == nil {
		misaddressed.last = map[*Session]wire.ID{}
	}
	id, ok := misaddressed.last[s]
	misaddressed.last[s] = req.ID
	misaddressed.Unlock()
	if !ok {
		id = req.ID
	}
	if !req.Token.IsZero() {
		_ = s.Progress(req.Token, 1, 1, "")
	}
	_ = s.Reply(id, textResult("answered under id "+id.Raw()))
}}

// CancelsClientRequest cancels the client's own tools/call with
// notifications/cancelled before answering it: a legacy server may
// cancel only requests it issued itself, and a modern one only a
// subscriptions/listen.
var CancelsClientRequest = Stdio{Name: "cancels-client-request", Call: func(s *Session, req Request) {
	_ = s.Send(wire.Notification(wire.NotifyCancelled, wire.CancelledParams(req.ID, "the server cancels the client's request")))
	if !req.Token.IsZero() {
		_ = s.Progress(req.Token, 1, 1, "")
	}
	_ = s.Reply(req.ID, textResult("answered after cancelling it"))
}}
