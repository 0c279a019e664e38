package demo

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// errClosed is returned by ServeStdio after Close.
var errClosed = errors.New("demo server is closed")

// ServeStdio serves one MCP session over newline-delimited JSON-RPC, reading
// requests from in and writing messages to out, until in hits EOF, ctx is
// done or the server is closed. It returns nil after EOF or Close, and
// ctx.Err() when ctx ended it. One session serves both eras: a client may
// open with initialize (legacy) or send modern requests that carry their own
// _meta.
//
// Cancelling ctx stops the session at once: requests in flight get nothing
// more, not even the final result of a listen. Close, by contrast, lets them
// finish first (see Close).
//
// When ServeStdio returns it has closed in and out if they implement
// io.Closer, as the end of a server process would: that unblocks a pending
// read or write and gives the peer end-of-file. Nothing but JSON-RPC is ever
// written to out.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	raw, err := (&mcp.IOTransport{Reader: readCloser(in), Writer: writeCloser(out)}).Connect(ctx)
	if err != nil {
		return fmt.Errorf("stdio: %w", err)
	}
	conn := newWithholdingConn(raw)
	conn.srv, conn.owner = s, fmt.Sprintf("stdio#%d", s.tasks.owners.Add(1))
	if !s.trackStdio(conn) {
		_ = conn.Close()
		return errClosed
	}
	defer s.untrackStdio(conn)

	// Handlers inherit this context's values (not its cancellation), which is
	// how stubborn learns that the connection is gone.
	ss, err := s.mcp.Connect(context.WithValue(ctx, goneKey{}, conn.gone), connTransport{conn}, nil)
	if err != nil {
		_ = conn.Close()
		return fmt.Errorf("stdio: connect: %w", err)
	}
	conn.session.Store(ss)
	s.logf("stdio: session started")

	// Closing the connection (rather than the session) ends the read loop at
	// once: the SDK then cancels every request in flight and writes nothing
	// more, whereas ServerSession.Close would wait for every handler.
	stop := context.AfterFunc(ctx, conn.shutdown)
	defer stop()
	err = ss.Wait()
	// The connection is gone now, so the task layer's requests end too.
	conn.markGone()
	conn.taskWG.Wait()
	s.logf("stdio: session ended")
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case conn.shut.Load():
		// Closing the pipes under a pending read or write makes it fail;
		// that is the shutdown working, not an error.
		return nil
	case err != nil:
		return fmt.Errorf("stdio: %w", err)
	}
	return nil
}

func (s *Server) trackStdio(c *withholdingConn) bool {
	s.stdioMu.Lock()
	defer s.stdioMu.Unlock()
	if s.isClosing() {
		return false
	}
	s.stdio[c] = struct{}{}
	return true
}

func (s *Server) untrackStdio(c *withholdingConn) {
	s.stdioMu.Lock()
	defer s.stdioMu.Unlock()
	delete(s.stdio, c)
}

func readCloser(r io.Reader) io.ReadCloser {
	if rc, ok := r.(io.ReadCloser); ok {
		return rc
	}
	return io.NopCloser(r)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

func writeCloser(w io.Writer) io.WriteCloser {
	if wc, ok := w.(io.WriteCloser); ok {
		return wc
	}
	return nopWriteCloser{w}
}
