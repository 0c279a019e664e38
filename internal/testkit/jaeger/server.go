package jaeger

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Server is a running Jaeger.
type Server struct {
	// OTLP is its OTLP/HTTP receiver's base URL (what --otlp takes).
	OTLP string
	// Query is its HTTP query API's base URL.
	Query string

	cmd  *exec.Cmd
	mu   sync.Mutex
	logs bytes.Buffer
}

// Start builds Jaeger if it is not built yet (skipping t when the module
// proxy cannot be reached), runs it on free ports until t ends, and
// returns once its receiver and its query API answer.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := Ensure(context.Background())
	switch {
	case errors.Is(err, ErrUnreachable):
		t.Skipf("jaeger: %v; skipping the test that needs Jaeger", err)
	case err != nil:
		t.Fatalf("jaeger: %v", err)
	}
	ports, err := freePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "jaeger.yaml")
	if err := os.WriteFile(cfg, []byte(config(ports[0], ports[1], ports[2])), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &Server{OTLP: "http://127.0.0.1:" + strconv.Itoa(ports[0]), Query: "http://127.0.0.1:" + strconv.Itoa(ports[1])}
	s.cmd = exec.Command(bin, "--config", cfg)
	s.cmd.Stdout, s.cmd.Stderr = s, s
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- s.cmd.Wait() }()
	t.Cleanup(func() {
		_ = s.cmd.Process.Kill()
		<-exited
	})
	if err := s.ready(exited, ports[0]); err != nil {
		t.Fatalf("jaeger did not start: %v\n%s", err, s.Logs())
	}
	return s
}

// Write keeps what Jaeger logs, for a failure to show.
func (s *Server) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.logs.Len() < 1<<20 {
		s.logs.Write(p)
	}
	return len(p), nil
}

// Logs is what Jaeger logged so far.
func (s *Server) Logs() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.String()
}

// ready waits until the receiver takes connections and the query API
// answers, or Jaeger exits.
func (s *Server) ready(exited <-chan error, otlpPort int) error {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			return fmt.Errorf("it exited: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(otlpPort), time.Second)
		if err != nil {
			continue
		}
		c.Close()
		if resp, err := http.Get(s.Query + "/api/services"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
	return errors.New("no answer within 2 minutes")
}

// Trace is one trace as Jaeger's query API returns it.
type Trace struct {
	TraceID   string             `json:"traceID"`
	Spans     []Span             `json:"spans"`
	Processes map[string]Process `json:"processes"`
}

// Span is one span of a Trace.
type Span struct {
	TraceID       string      `json:"traceID"`
	SpanID        string      `json:"spanID"`
	OperationName string      `json:"operationName"`
	References    []Reference `json:"references"`
	StartTime     int64       `json:"startTime"` // µs since the epoch
	Duration      int64       `json:"duration"`  // µs
	Tags          []KeyValue  `json:"tags"`
	Logs          []Log       `json:"logs"`
	ProcessID     string      `json:"processID"`
}

// Reference is a span's parent (CHILD_OF) or other reference.
type Reference struct {
	RefType string `json:"refType"`
	TraceID string `json:"traceID"`
	SpanID  string `json:"spanID"`
}

// KeyValue is a tag or a log's field.
type KeyValue struct {
	Key   string `json:"key"`
	Type  string `json:"type"`
	Value any    `json:"value"`
}

// Log is a span event: its name is the field "event".
type Log struct {
	Timestamp int64      `json:"timestamp"`
	Fields    []KeyValue `json:"fields"`
}

// Process is the service a span came from.
type Process struct {
	ServiceName string     `json:"serviceName"`
	Tags        []KeyValue `json:"tags"`
}

// Tag is the value of the tag key, as text, and whether there is one.
func Tag(kvs []KeyValue, key string) (string, bool) {
	for _, kv := range kvs {
		if kv.Key == key {
			return fmt.Sprint(kv.Value), true
		}
	}
	return "", false
}

// Event is the span's first log named name.
func (sp *Span) Event(name string) (Log, bool) {
	for _, l := range sp.Logs {
		if n, _ := Tag(l.Fields, "event"); n == name {
			return l, true
		}
	}
	return Log{}, false
}

// Traces are the traces of service Jaeger stored in the last hour.
func (s *Server) Traces(service string) ([]Trace, error) {
	q := url.Values{"service": {service}, "limit": {"100"}, "lookback": {"1h"}}
	resp, err := http.Get(s.Query + "/api/traces?" + q.Encode())
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Data   []Trace `json:"data"`
		Errors []any   `json:"errors"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("jaeger's /api/traces (%s): %w", resp.Status, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("jaeger's /api/traces: %s %v", resp.Status, body.Errors)
	}
	return body.Data, nil
}
