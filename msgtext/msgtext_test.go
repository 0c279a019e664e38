package msgtext

import (
	"strings"
	"testing"
)

func TestRaw(t *testing.T) {
	for _, c := range []struct {
		name, raw, method, want string
	}{
		{"progress", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":3,"progress":3,"total":6,"message":"step 3 of 6"}}`, "", `progress 3/6 "step 3 of 6"`},
		{"progress with a big total", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":3,"progress":521367,"total":1000000}}`, "", `progress 521367/1000000`},
		{"tool result", `{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","content":[{"type":"text","text":"stubborn finished 6 steps"}]}}`, "tools/call", `result "stubborn finished 6 steps"`},
		{"tool error", `{"jsonrpc":"2.0","id":3,"result":{"isError":true,"content":[{"type":"text","text":"failed on purpose"}]}}`, "tools/call", `result (tool error) "failed on purpose"`},
		{"tools/list", `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"},{"name":"b"}]}}`, "tools/list", `result 2 tools`},
		{"bare result", `{"jsonrpc":"2.0","id":1,"result":{"_meta":{"x":1},"resultType":"complete"}}`, "ping", `result {"resultType":"complete"}`},
		{"error", `{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"method not found"}}`, "", `error -32601 method not found`},
		{"request", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"seconds":10},"_meta":{"progressToken":2}}}`, "", `tools/call slow {"seconds":10}`},
		{"request without arguments", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{}}}`, "", `tools/call slow {}`},
		{"resource read", `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"demo://clock"}}`, "", `resources/read demo://clock`},
		{"cancel", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"user requested cancellation"}}`, "", `notifications/cancelled 3 "user requested cancellation"`},
		{"update", `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":6},"uri":"demo://clock"}}`, "", `resource updated demo://clock`},
		{"ack", `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{}}`, "", `subscription acknowledged`},
		{"log", `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hello"}}`, "", `log info "hello"`},
		{"not JSON-RPC", `garbage line`, "", `garbage line`},
		{"hostile text", `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"\u001b]52;c;aGk=\u0007"}]}}`, "tools/call", `result "␛]52;c;aGk=␇"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Raw([]byte(c.raw), c.method); got != c.want {
				t.Errorf("Raw = %s\nwant  %s", got, c.want)
			}
		})
	}
}

// A huge payload words as a line.
func TestRawIsBounded(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	raw := `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"` + long + `"}]}}`
	if got := Raw([]byte(raw), "tools/call"); len(got) > 200 || !strings.HasSuffix(got, `…"`) {
		t.Errorf("Raw of a 1 MB result is %d bytes: %.60s…", len(got), got)
	}
	if got := Raw([]byte(long), ""); len(got) > 200 {
		t.Errorf("Raw of 1 MB of garbage is %d bytes", len(got))
	}
}

// Task traffic is worded, in both eras' shapes: the status and the
// message are what one reads the log for, never cut off behind createdAt.
func TestRawTasks(t *testing.T) {
	for _, c := range []struct {
		name, raw, method, want string
	}{
		{"legacy handle", `{"jsonrpc":"2.0","id":2,"result":{"task":{"taskId":"t-1","status":"working","createdAt":"2026-12-01T10:37:56Z","ttl":60000,"pollInterval":1000}}}`, "tools/call",
			`task handle t-1 working`},
		{"modern handle", `{"jsonrpc":"2.0","id":2,"result":{"resultType":"task","taskId":"t-1","status":"working","statusMessage":"fetching page 1 of 9","createdAt":"x","ttlMs":60000}}`, "tools/call",
			`task handle t-1 working "fetching page 1 of 9"`},
		{"legacy tasks/get", `{"jsonrpc":"2.0","id":12,"result":{"createdAt":"2026-12-01T10:37:56.54Z","lastUpdatedAt":"x","pollInterval":1000,"status":"working","statusMessage":"page 3 of 9","taskId":"t-1","ttl":60000}}`, "tasks/get",
			`task working "page 3 of 9"`},
		{"modern tasks/get, completed inline", `{"jsonrpc":"2.0","id":12,"result":{"resultType":"complete","taskId":"t-1","status":"completed","createdAt":"x","result":{"content":[{"type":"text","text":"9 pages fetched"}]}}}`, "tasks/get",
			`task completed · "9 pages fetched"`},
		{"modern tasks/get, failed inline", `{"jsonrpc":"2.0","id":12,"result":{"resultType":"complete","taskId":"t-1","status":"failed","createdAt":"x","error":{"code":-32000,"message":"quota"}}}`, "tasks/get",
			`task failed · error -32000 quota`},
		{"legacy tasks/cancel", `{"jsonrpc":"2.0","id":15,"result":{"createdAt":"x","status":"cancelled","statusMessage":"stopped by the client","taskId":"t-1","ttl":60000}}`, "tasks/cancel",
			`task t-1 cancelled "stopped by the client"`},
		{"modern tasks/cancel ack", `{"jsonrpc":"2.0","id":15,"result":{"resultType":"complete"}}`, "tasks/cancel", `acknowledged`},
		{"legacy status notification", `{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"createdAt":"x","status":"working","statusMessage":"Synthesizing findings","taskId":"88b492c1a407751fea2213b8553c6613","ttl":60000}}`, "",
			`task 88b492c1a407751fea2213b8553c6613 working "Synthesizing findings"`},
		{"modern notification", `{"jsonrpc":"2.0","method":"notifications/tasks","params":{"taskId":"t-1","status":"input_required","createdAt":"x"}}`, "",
			`task t-1 input_required`},
		{"hostile task message", `{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"t-\u001b[2J","status":"working","statusMessage":"\u001b]52;c;aGk=\u0007"}}`, "",
			`task t-␛[2J working "␛]52;c;aGk=␇"`},
		{"tasks/get request", `{"jsonrpc":"2.0","id":12,"method":"tasks/get","params":{"taskId":"t-1"}}`, "", `tasks/get t-1`},
		{"tasks/get error stays an error", `{"jsonrpc":"2.0","id":12,"error":{"code":-32602,"message":"unknown task"}}`, "tasks/get", `error -32602 unknown task`},
		{"a tool result mentioning tasks is no handle", `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"\"task\": 3 tasks done"}]}}`, "tools/call", `result "\"task\": 3 tasks done"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Raw([]byte(c.raw), c.method); got != c.want {
				t.Errorf("Raw = %s\nwant  %s", got, c.want)
			}
		})
	}
}
