package client

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// A write bounded by a deadline (a cancel) must not leave that deadline on
// the pipe for a later write bounded by its context (a Send).
func TestStdioDeadlineDoesNotOutliveItsWrite(t *testing.T) {
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer inR.Close()
	go io.Copy(io.Discard, inR)
	c, err := New(Config{Pipes: &Pipes{Stdin: inW, Stdout: io.NopCloser(strings.NewReader(""))}, WriteTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st := c.t.(*stdioTransport)
	if err := st.start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := st.write(context.Background(), []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // past the first write's deadline
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := st.write(ctx, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)); err != nil {
		t.Fatalf("a later write failed on an earlier write's deadline: %v", err)
	}
}
