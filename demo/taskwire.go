package demo

// The task layer on the wire: where tasks.go meets the transports. On stdio
// withholdingConn hands intercepted requests to the layer as it reads them
// and rewrites the SDK's answers as it writes them; over HTTP the router
// does the same with the POST body it peeks at and with withholdingWriter.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"inflight/internal/loopback"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	// methodDiscover is the modern era's server/discover.
	methodDiscover = "server/discover"
	// metaProtocolVersionKey marks a modern request's params.
	metaProtocolVersionKey = mcp.MetaKeyProtocolVersion
)

// rewritten says which SDK answers the layer amends, so that the server
// advertises what the layer serves.
func rewritten(method string) bool {
	return method == methodInitialize || method == methodToolsList || method == methodDiscover
}

// legacyTasksCapability is the server's capabilities.tasks of 2025-11-25.
var legacyTasksCapability = json.RawMessage(`{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`)

// rewriteResult amends the SDK's result for method: initialize gains
// capabilities.tasks, server/discover the tasks extension, and tools/list
// the execution.taskSupport of the task tools. A result it cannot read is
// returned unchanged.
func rewriteResult(method string, result json.RawMessage) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal(result, &obj) != nil || obj == nil {
		return result
	}
	switch method {
	case methodInitialize, methodDiscover:
		var caps map[string]json.RawMessage
		if json.Unmarshal(obj["capabilities"], &caps) != nil || caps == nil {
			caps = map[string]json.RawMessage{}
		}
		if method == methodInitialize {
			caps["tasks"] = legacyTasksCapability
		} else {
			var ext map[string]json.RawMessage
			if json.Unmarshal(caps["extensions"], &ext) != nil || ext == nil {
				ext = map[string]json.RawMessage{}
			}
			ext[extensionTasks] = json.RawMessage(`{}`)
			caps["extensions"], _ = json.Marshal(ext)
		}
		obj["capabilities"], _ = json.Marshal(caps)
	case methodToolsList:
		var tools []map[string]json.RawMessage
		if json.Unmarshal(obj["tools"], &tools) != nil {
			return result
		}
		for _, tool := range tools {
			var name string
			_ = json.Unmarshal(tool["name"], &name)
			if support, ok := taskTools[name]; ok {
				tool["execution"], _ = json.Marshal(map[string]string{"taskSupport": support})
			}
		}
		obj["tools"], _ = json.Marshal(tools)
	default:
		return result
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return result
	}
	return out
}

// paramsModern reports whether request params carry the modern era's
// per-request protocol version.
func paramsModern(params json.RawMessage) bool {
	if !bytes.Contains(params, []byte(metaProtocolVersionKey)) {
		return false
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	_, ok := p.Meta[metaProtocolVersionKey]
	return ok
}

// --- stdio ---

// interceptStdio hands a request the task layer answers to it, on a
// goroutine of its own (tasks/result blocks), and reports whether it did.
func (c *withholdingConn) interceptStdio(req *jsonrpc.Request) bool {
	if c.srv == nil {
		return false
	}
	modern := paramsModern(req.Params)
	if !interceptsTask(req.Method, req.Params, modern) {
		return false
	}
	call := taskCall{method: req.Method, params: req.Params, modern: modern, owner: c.owner}
	if !modern {
		// Legacy stdio tasks send notifications/tasks/status on every
		// change of status.
		call.notify = func(n *jsonrpc.Request) { _ = c.Connection.Write(context.Background(), n) }
		call.ask = sessionAsker(c.session.Load())
	}
	c.taskWG.Go(func() {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			select {
			case <-c.gone:
				cancel()
			case <-stop:
			}
		}()
		reply := c.srv.serveTask(ctx, call)
		if !reply.answered() {
			return
		}
		for _, n := range reply.notes {
			_ = c.Connection.Write(context.Background(), n)
		}
		_ = c.Connection.Write(context.Background(), reply.response(req.ID))
	})
	return true
}

// noteRewrite remembers a request whose answer the layer amends.
func (c *withholdingConn) noteRewrite(req *jsonrpc.Request) {
	if c.srv == nil || !rewritten(req.Method) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rewrites[req.ID] = req.Method
}

// rewrite amends the SDK's answer to a request noted by noteRewrite.
func (c *withholdingConn) rewrite(resp *jsonrpc.Response) *jsonrpc.Response {
	c.mu.Lock()
	method, ok := c.rewrites[resp.ID]
	delete(c.rewrites, resp.ID)
	c.mu.Unlock()
	if !ok || resp.Error != nil || resp.Result == nil {
		return resp
	}
	out := *resp
	out.Result = rewriteResult(method, resp.Result)
	return &out
}

// --- HTTP ---

// peeked is what the router reads of a POST body: one JSON-RPC request's
// method, ID and params (a batch or a response is not peeked into).
type peeked struct {
	call   bool
	id     jsonrpc.ID
	rawID  json.RawMessage
	method string
	params json.RawMessage
}

func peekMessage(body []byte) peeked {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' || json.Unmarshal(trimmed, &m) != nil || m.Method == "" || len(m.ID) == 0 {
		return peeked{}
	}
	var v any
	if json.Unmarshal(m.ID, &v) != nil {
		return peeked{}
	}
	id, err := jsonrpc.MakeID(v)
	if err != nil || !id.IsValid() {
		return peeked{}
	}
	return peeked{call: true, id: id, rawID: m.ID, method: m.Method, params: m.Params}
}

// serveTaskHTTP answers an intercepted POST: application/json with the
// response, or an SSE stream when notifications go first.
func (rt *router) serveTaskHTTP(w http.ResponseWriter, r *http.Request, p peeked, modern bool) {
	if !loopback.HostHeader(r) {
		http.Error(w, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host), http.StatusForbidden)
		return
	}
	owner := ""
	if modern {
		if err := checkModernHeaders(r.Header, p); err != nil {
			writeJSONResponse(w, http.StatusBadRequest, &jsonrpc.Response{ID: p.id, Error: taskError(codeHeaderMismatch, "%v", err)})
			return
		}
	} else {
		sid := r.Header.Get(headerSessionID)
		switch {
		case sid == "":
			http.Error(w, "Bad Request: a legacy request after initialize needs its Mcp-Session-Id", http.StatusBadRequest)
			return
		case !rt.s.hasSession(sid):
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		owner = "http:" + sid
	}
	call := taskCall{method: p.method, params: p.params, modern: modern, owner: owner}
	if !modern {
		call.ask = sessionAsker(rt.s.sessionByID(r.Header.Get(headerSessionID)))
	}
	reply := rt.s.serveTask(r.Context(), call)
	if !reply.answered() {
		return
	}
	resp := reply.response(p.id)
	if len(reply.notes) == 0 {
		writeJSONResponse(w, http.StatusOK, resp)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache, no-transform")
	w.WriteHeader(http.StatusOK)
	for _, m := range append(append([]jsonrpc.Message{}, notesAsMessages(reply.notes)...), resp) {
		data, err := jsonrpc.EncodeMessage(m)
		if err != nil {
			continue
		}
		_, _ = fmt.Fprintf(w, "event: message\ndata: %s\n\n", data)
	}
	_ = http.NewResponseController(w).Flush()
}

func notesAsMessages(notes []*jsonrpc.Request) []jsonrpc.Message {
	out := make([]jsonrpc.Message, len(notes))
	for i, n := range notes {
		out[i] = n
	}
	return out
}

func writeJSONResponse(w http.ResponseWriter, status int, resp *jsonrpc.Response) {
	data, err := jsonrpc.EncodeMessage(resp)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

// codeHeaderMismatch is the modern transport's HeaderMismatch.
const codeHeaderMismatch = -32020

// checkModernHeaders checks the standard headers of a modern POST the layer
// answers, as the SDK does for its own: MCP-Protocol-Version, Mcp-Method,
// and Mcp-Name (the tool's name for tools/call, the taskId for tasks/get,
// tasks/update and tasks/cancel).
func checkModernHeaders(h http.Header, p peeked) error {
	if h.Get(headerProtocolVersion) == "" {
		return fmt.Errorf("%s header is required for requests carrying %q", headerProtocolVersion, metaProtocolVersionKey)
	}
	if got := h.Get("Mcp-Method"); got != p.method {
		if got == "" {
			return fmt.Errorf("missing required Mcp-Method header")
		}
		return fmt.Errorf("header mismatch: Mcp-Method header value %q does not match body value %q", got, p.method)
	}
	var key string
	switch p.method {
	case methodToolsCall:
		key = "name"
	case methodTasksGet, methodTasksUpdate, methodTasksCancel:
		key = "taskId"
	default:
		return nil
	}
	var m map[string]json.RawMessage
	var want string
	if json.Unmarshal(p.params, &m) != nil || json.Unmarshal(m[key], &want) != nil {
		return nil // the layer reports the malformed params
	}
	got := h.Get("Mcp-Name")
	if got == "" {
		return fmt.Errorf("missing required Mcp-Name header for method %q", p.method)
	}
	if got != want {
		return fmt.Errorf("header mismatch: Mcp-Name header value %q does not match body value %q", got, want)
	}
	return nil
}

// hasSession reports whether a legacy HTTP session is open.
func (s *Server) hasSession(id string) bool {
	for ss := range s.mcp.Sessions() {
		if ss.ID() == id {
			return true
		}
	}
	return false
}

// rewriteMessage amends one encoded JSON-RPC message if it is the response
// to id, for withholdingWriter.
func rewriteMessage(data []byte, id json.RawMessage, method string) ([]byte, bool) {
	if !bytes.Contains(data, []byte(`"result"`)) {
		return data, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil || m["result"] == nil || !sameID(m["id"], id) {
		return data, false
	}
	m["result"] = rewriteResult(method, m["result"])
	out, err := json.Marshal(m)
	if err != nil {
		return data, false
	}
	return out, true
}

func sameID(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return fmt.Sprint(x) == fmt.Sprint(y) && fmt.Sprintf("%T", x) == fmt.Sprintf("%T", y)
}

// replaceEventData rebuilds an SSE event with new data, keeping its other
// fields (event, id, retry) in place.
func replaceEventData(event, data []byte) []byte {
	var out []byte
	wrote := false
	for len(event) > 0 {
		line := event
		next := len(event)
		if i := bytes.IndexAny(event, "\r\n"); i >= 0 {
			line = event[:i]
			next = i + 1
			if event[i] == '\r' && i+1 < len(event) && event[i+1] == '\n' {
				next = i + 2
			}
		}
		event = event[next:]
		if len(line) == 0 {
			continue
		}
		field, _, _ := bytes.Cut(line, []byte(":"))
		if string(field) == "data" {
			if !wrote {
				out = append(out, "data: "...)
				out = append(out, data...)
				out = append(out, '\n')
				wrote = true
			}
			continue
		}
		out = append(out, line...)
		out = append(out, '\n')
	}
	return append(out, '\n')
}

// sessionAsker asks the client a legacy task's question through the SDK's
// session on its connection (nil: none to ask through). The SDK sends it
// as a request of the server's and hands back the client's answer.
func sessionAsker(ss *mcp.ServerSession) func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	if ss == nil {
		return nil
	}
	return ss.Elicit
}

// sessionByID is the SDK's HTTP session of that Mcp-Session-Id (nil:
// none).
func (s *Server) sessionByID(id string) *mcp.ServerSession {
	for ss := range s.mcp.Sessions() {
		if ss.ID() == id {
			return ss
		}
	}
	return nil
}
