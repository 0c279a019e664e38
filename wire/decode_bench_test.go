package wire

import "testing"

// BenchmarkDecode is the envelope decode of one progress notification, the
// message a busy server sends most (see client's BenchmarkProgressInflight).
func BenchmarkDecode(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":12345,"total":300000,"message":"working"}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(line); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeEncodingJSON is the same with decodeStd, the reference
// Decode is fuzzed against: encoding/json's envelope (what Decode used to
// do, about 1.3µs and 10 allocations here) plus a map of the members to
// check their names.
func BenchmarkDecodeEncodingJSON(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":12345,"total":300000,"message":"working"}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeStd(line); err != nil {
			b.Fatal(err)
		}
	}
}
