package wire

import "testing"

func TestTaskHandleBothEras(t *testing.T) {
	legacy := []byte(`{"task":{"taskId":"t-1","status":"working","statusMessage":"in progress","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:40:00Z","ttl":60000,"pollInterval":5000}}`)
	ts, ok := TaskHandle(legacy, false)
	if !ok || ts.ID != "t-1" || ts.Status != TaskWorking || ts.Message != "in progress" || ts.TTL != 60000 || !ts.TTLSet || ts.PollInterval != 5000 {
		t.Fatalf("legacy handle: %+v, %v", ts, ok)
	}
	if _, ok := TaskHandle(legacy, true); ok {
		t.Error("a legacy-shaped handle read as modern (no resultType task)")
	}
	modern := []byte(`{"resultType":"task","taskId":"t-2","status":"working","createdAt":"x","lastUpdatedAt":"y","ttlMs":null,"pollIntervalMs":250}`)
	ts, ok = TaskHandle(modern, true)
	if !ok || ts.ID != "t-2" || !ts.TTLNull || ts.PollInterval != 250 {
		t.Fatalf("modern handle: %+v, %v", ts, ok)
	}
	for _, r := range []string{`{"content":[],"task":"no"}`, `{"resultType":"complete","taskId":"t"}`, `{"content":[{"type":"text","text":"task"}]}`} {
		if _, ok := TaskHandle([]byte(r), true); ok {
			t.Errorf("%s read as a modern handle", r)
		}
		if _, ok := TaskHandle([]byte(r), false); ok {
			t.Errorf("%s read as a legacy handle", r)
		}
	}
	done, err := DecodeTask([]byte(`{"resultType":"complete","taskId":"t-2","status":"failed","error":{"code":-32603,"message":"boom"}}`))
	if err != nil || done.Status != TaskFailed || done.Error == nil || done.Error.Code != -32603 || !IsTerminalTaskStatus(done.Status) {
		t.Fatalf("failed task: %+v, %v", done, err)
	}
	if id, ok := RelatedTask([]byte(`{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t-9"}}}`)); !ok || id != "t-9" {
		t.Errorf("RelatedTask = %q, %v", id, ok)
	}
	if got := Target(MethodTasksCancel, TaskParams("t-3")); got != "t-3" {
		t.Errorf("Target(tasks/cancel) = %q, want the task ID (the Mcp-Name header)", got)
	}
}

// A TTL or poll interval past what a time.Duration holds is kept as
// MaxTaskMs, and the TTL's is said to be out of range.
func TestTaskTimesOutOfRange(t *testing.T) {
	for _, v := range []string{"1e300", "1e400", "9223372036855"} {
		ts, err := DecodeTask([]byte(`{"taskId":"t","status":"working","ttlMs":` + v + `}`))
		if err != nil {
			t.Fatal(err)
		}
		if ts.TTL != MaxTaskMs || !ts.TTLOutOfRange {
			t.Errorf("ttl %s: %v (out of range %v); want MaxTaskMs, out of range", v, ts.TTL, ts.TTLOutOfRange)
		}
	}
	for _, v := range []string{"1e300", "9223372036855"} {
		ts, err := DecodeTask([]byte(`{"taskId":"t","status":"working","pollIntervalMs":` + v + `}`))
		if err != nil {
			t.Fatal(err)
		}
		if ts.PollInterval != MaxTaskMs {
			t.Errorf("poll interval %s: %v; want MaxTaskMs", v, ts.PollInterval)
		}
	}
	ts, _ := DecodeTask([]byte(`{"taskId":"t","status":"working","ttlMs":60000}`))
	if ts.TTL != 60000 || ts.TTLOutOfRange {
		t.Errorf("an ordinary TTL: %v, out of range %v", ts.TTL, ts.TTLOutOfRange)
	}
}
