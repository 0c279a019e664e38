package demo

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCP method names the demo's middleware acts on.
const (
	methodListen                 = "subscriptions/listen"
	notificationAcknowledged     = "notifications/subscriptions/acknowledged"
	notificationResourceUpdated  = "notifications/resources/updated"
	notificationToolsChanged     = "notifications/tools/list_changed"
	notificationPromptsChanged   = "notifications/prompts/list_changed"
	notificationResourcesChanged = "notifications/resources/list_changed"
)

// Causes with which the server itself ends a listen. Either lets the SDK's
// SubscriptionsListenResult (resultType "complete") go out: the graceful
// closure of the subscriptions page.
var (
	errEndedByServer = errors.New("subscription ended by the server")
	errServerClosing = errors.New("the demo server is shutting down")
)

// A listen is one subscriptions/listen request being served.
type listen struct {
	n       int64
	start   time.Time
	session mcp.Session
	// ctx is the context the SDK's listen handler parks on. It ends when the
	// client cancels (through the request's own context) or when the server
	// ends the subscription (through cancel).
	ctx    context.Context
	cancel context.CancelCauseFunc
	// sending is held (shared) while a notification for this listen is being
	// written. The listen takes it exclusively once its handler has returned,
	// so every notification that passed the check in
	// subscriptionOrderMiddleware is on the wire before the listen's final
	// result, and none follows the moment it is reported ended.
	sending sync.RWMutex
}

// listenKey carries the *listen in the handler's context, so the sending
// middleware can tell which listen an acknowledgement belongs to: the SDK
// sends the acknowledgement with the handler's context.
type listenKey struct{}

// subKey names a subscription the way notifications do: by session and by
// the ID of the listen request (the io.modelcontextprotocol/subscriptionId).
type subKey struct {
	session mcp.Session
	id      any
}

// listenRegistry tracks open listens so that end_subscriptions and Close can
// end them, and so that notifications are delivered only between a listen's
// acknowledgement and its end.
type listenRegistry struct {
	mu    sync.Mutex
	open  map[*listen]struct{}
	acked map[subKey]*listen
}

func (r *listenRegistry) init() {
	r.open = make(map[*listen]struct{})
	r.acked = make(map[subKey]*listen)
}

func (r *listenRegistry) add(l *listen) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.open[l] = struct{}{}
}

func (r *listenRegistry) remove(l *listen) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.open, l)
	for k, v := range r.acked {
		if v == l {
			delete(r.acked, k)
		}
	}
}

// acknowledge records that the listen's acknowledgement has been written, so
// its notifications may now flow.
func (r *listenRegistry) acknowledge(l *listen, id any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.open[l]; ok {
		r.acked[subKey{l.session, id}] = l
	}
}

// lookup returns the acknowledged listen for a subscription, or nil before
// its acknowledgement and after its end.
func (r *listenRegistry) lookup(session mcp.Session, id any) *listen {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.acked[subKey{session, id}]
}

// endAll ends every open listen with the given cause and reports how many
// were still running.
func (r *listenRegistry) endAll(cause error) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for l := range r.open {
		if l.ctx.Err() == nil {
			l.cancel(cause)
			n++
		}
	}
	return n
}

func (r *listenRegistry) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.open)
}

// listenMiddleware wraps subscriptions/listen so that the server can end a
// listen itself and so that a listen the client cancelled gets no response.
//
// The SDK's handler parks until its context ends and then always returns a
// SubscriptionsListenResult. The middleware gives it a context of its own,
// which end_subscriptions and Close cancel; when instead the request's own
// context ended (notifications/cancelled, a closed HTTP stream, a dead
// connection), it replaces the result with errWithheld so that nothing is
// written for the cancelled request.
func (s *Server) listenMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != methodListen {
			return next(ctx, method, req)
		}
		lctx, cancel := context.WithCancelCause(ctx)
		l := &listen{n: s.runs.Add(1), start: time.Now(), session: req.GetSession(), ctx: lctx, cancel: cancel}
		s.listens.add(l)
		defer func() {
			s.listens.remove(l)
			cancel(nil)
		}()
		s.logf("listen #%d: opened", l.n)

		res, err := next(context.WithValue(lctx, listenKey{}, l), method, req)
		// From here on no notification passes its check, and taking the lock
		// waits for those already past it (see sending).
		cancel(nil)
		l.sending.Lock()
		defer l.sending.Unlock()
		elapsed := roundDuration(time.Since(l.start))
		// The cause records which ending came first. The server's own comes
		// first when end_subscriptions or Close ended the listen, even if the
		// request's context is cancelled right after (ServerSession.Close
		// does that to every listen it finds).
		switch cause := context.Cause(lctx); {
		case err != nil && ctx.Err() == nil:
			s.logf("listen #%d: failed: %v", l.n, err)
		case errors.Is(cause, errEndedByServer), errors.Is(cause, errServerClosing):
			s.logf("listen #%d: ended by the server after %s (%v); final result sent", l.n, elapsed, cause)
		case ctx.Err() != nil:
			s.logf("listen #%d: cancelled by the client after %s%s; no response sent", l.n, elapsed, describeCause(ctx))
			return nil, errWithheld
		default:
			s.logf("listen #%d: nothing it asked for is supported; answered at once", l.n)
		}
		return res, err
	}
}

// subscriptionOrderMiddleware keeps each subscription's notifications between
// its acknowledgement and its end.
//
// The SDK registers a listen's resource subscriptions before it sends the
// acknowledgement, so a clock tick in between would put a
// notifications/resources/updated ahead of the acknowledgement, which the
// subscriptions page forbids. Such a notification is dropped: the client reads
// the resource after the acknowledgement anyway. The same check drops
// notifications for a listen whose end has begun (the client cancelled it or
// the server is ending it), since nothing more may be sent for it.
func (s *Server) subscriptionOrderMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case notificationAcknowledged:
			res, err := next(ctx, method, req)
			l, ok := ctx.Value(listenKey{}).(*listen)
			if id, hasID := subscriptionID(req.GetParams()); ok && hasID && err == nil {
				s.listens.acknowledge(l, id)
				s.logf("listen #%d: acknowledged as subscription %v", l.n, id)
			}
			return res, err
		case notificationResourceUpdated, notificationToolsChanged, notificationPromptsChanged, notificationResourcesChanged:
			id, ok := subscriptionID(req.GetParams())
			if !ok {
				break // a legacy notification, which belongs to no listen
			}
			l := s.listens.lookup(req.GetSession(), id)
			if l == nil {
				return nil, nil
			}
			l.sending.RLock()
			defer l.sending.RUnlock()
			if l.ctx.Err() != nil {
				return nil, nil
			}
		}
		return next(ctx, method, req)
	}
}

// subscriptionID returns the io.modelcontextprotocol/subscriptionId of a
// notification's params, if it carries one (legacy notifications do not).
func subscriptionID(p mcp.Params) (any, bool) {
	if p == nil {
		return nil, false
	}
	id, ok := p.GetMeta()[mcp.MetaKeySubscriptionID]
	return id, ok
}
