package redact

import (
	"bytes"
	"fmt"
	"testing"
)

// runtimeMsg is a server's answer that echoes a credential back inside a
// JSON string, with an escape in it, as a trace line would carry it.
func runtimeMsg(tok string) []byte {
	return []byte(`{"jsonrpc":"2.0","id":7,"error":{"code":-32001,"message":"token ` + tok +
		` is not valid for https:\/\/example.test\/mcp; ask your admin"}}`)
}

// BenchmarkRuntimeChurn is the cost of learning one more credential and
// redacting a message, once n distinct ones were seen before: a proxy's
// host that sends a new bearer token (or Idempotency-Key) on every
// request (held, then released), or an OAuth token kept for the run. Its
// cost per operation must not grow with n; run it with a fixed count so
// that the set stays at about n while it is measured:
//
//	go test ./redact/ -run '^$' -bench RuntimeChurn -benchtime 300x
func BenchmarkRuntimeChurn(b *testing.B) {
	kinds := []struct {
		name string
		add  func(string)
	}{
		{"held", func(v string) { Hold(v)() }},
		{"kept", AddRuntime},
	}
	for _, k := range kinds {
		for _, n := range []int{100, 1000, 10000} {
			b.Run(fmt.Sprintf("%s/seen=%d", k.name, n), func(b *testing.B) {
				churnRuntime(b, n, k.add)
			})
		}
	}
}

func churnRuntime(b *testing.B, n int, add func(string)) {
	resetRuntime()
	b.Cleanup(resetRuntime)
	for i := range n {
		add(fmt.Sprintf("tok-%08d-churned-credential", i))
	}
	var r *Redactor
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		tok := fmt.Sprintf("new-%08d-churned-credential", i)
		add(tok)
		out := r.Bytes(runtimeMsg(tok))
		if bytes.Contains(out, []byte(tok)) {
			b.Fatal("not masked")
		}
	}
}
