package proxy

import "testing"

// A proxy that takes commands (the default) follows every host request in
// flight, so that a key in inflight attach can act on any of them: the
// host's lines are decoded, and while a request is in flight the server's
// output goes through the gate a line at a time (a line without "result",
// "error" or an escape is never decoded). The read-only variants are the
// plain copy, as before commands: run side by side, they show that cost.
//
//	go test -run '^$' -bench 'Stdio|Progress' -benchtime 3s ./proxy

// BenchmarkStdioLatencyReadOnly is BenchmarkStdioLatency through a
// --read-only proxy.
func BenchmarkStdioLatencyReadOnly(b *testing.B) { stdioLatency(b, Options{ReadOnly: true}) }

// BenchmarkProgressThroughputReadOnly is BenchmarkProgressThroughput
// through a --read-only proxy.
func BenchmarkProgressThroughputReadOnly(b *testing.B) {
	progressThroughputWith(b, Options{ReadOnly: true})
}
