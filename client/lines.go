package client

import (
	"bufio"
	"errors"
	"io"
	"sync/atomic"

	"inflight/event"
)

// lineReader reads newline-delimited messages with a bound on their size. A
// line longer than max is consumed to its end and reported as oversized, so
// one hostile line neither exhausts memory nor desynchronises the stream.
type lineReader struct {
	r   *bufio.Reader
	max int
	buf []byte
	src *countingReader
}

func newLineReader(r io.Reader, max int) *lineReader {
	src := &countingReader{r: r}
	return &lineReader{r: bufio.NewReaderSize(src, 64<<10), max: max, src: src}
}

// countingReader counts the reads of the reader below the buffer, and
// the bytes they brought (atomic: a cancel reads it from another
// goroutine, to know how much of the server's output came before it).
type countingReader struct {
	r     io.Reader
	reads uint64
	bytes atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	c.reads++
	n, err := c.r.Read(p)
	c.bytes.Add(int64(n))
	return n, err
}

// End is how many bytes of the input precede the end of the line Next
// returned last (its terminator included).
func (l *lineReader) End() int64 { return l.src.bytes.Load() - int64(l.r.Buffered()) }

// ReadSoFar is how many bytes of the input have been read from it, into
// the buffer or beyond; any goroutine may ask.
func (l *lineReader) ReadSoFar() int64 { return l.src.bytes.Load() }

// Reads is how many times the reader below the buffer was read so far: a
// line that Next returned without it changing was read by the same read
// as the line before it.
func (l *lineReader) Reads() uint64 { return l.src.reads }

// errLineTooLong is returned (with the kept prefix and the full length) for a
// line over the limit.
var errLineTooLong = errors.New("line too long")

// Next returns the next line without its terminator, and the line's length,
// also without its terminator ("\n" or "\r\n"), so that total-len(line)
// counts the bytes of the line that were not kept. The slice is valid until
// the following call. For an oversized line it returns the first event.MaxRawKept
// bytes, the line's total length and errLineTooLong. At the end of input it
// returns io.EOF (a final unterminated line is returned first).
func (l *lineReader) Next() (line []byte, total int, err error) {
	if cap(l.buf) > 1<<20 {
		// Do not pin the memory of one huge message for the rest of the session.
		l.buf = nil
	}
	l.buf = l.buf[:0]
	first := true
	// prevLast is the last byte of the previous chunk: the '\r' of a
	// "\r\n" split across two chunks is there.
	var prevLast byte
	for {
		chunk, err := l.r.ReadSlice('\n')
		if first && err == nil && len(chunk) <= l.max {
			// The common case: the whole line is in the buffer. Hand it out
			// without a copy; it stays valid until the next read, as the
			// doc says, and the caller copies what it keeps.
			line := trimEOL(chunk)
			return line, len(line), nil
		}
		first = false
		total += len(chunk)
		if err == nil {
			total -= eolLen(chunk, prevLast)
		}
		if len(chunk) > 0 {
			prevLast = chunk[len(chunk)-1]
		}
		if total <= l.max {
			l.buf = append(l.buf, chunk...)
		} else if len(l.buf) > event.MaxRawKept {
			l.buf = l.buf[:event.MaxRawKept]
		} else {
			room := event.MaxRawKept - len(l.buf)
			if room > len(chunk) {
				room = len(chunk)
			}
			l.buf = append(l.buf, chunk[:room]...)
		}
		switch {
		case err == nil:
			line := trimEOL(l.buf)
			if total > l.max {
				return line, total, errLineTooLong
			}
			return line, total, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && total > 0:
			if total > l.max {
				return l.buf, total, errLineTooLong
			}
			// An unterminated last line may still end in a '\r', which is
			// trimmed like a terminator and so not counted either.
			line := trimEOL(l.buf)
			return line, len(line), nil
		default:
			return nil, 0, err
		}
	}
}

// eolLen is the length of the terminator that ends chunk ("\n" or "\r\n"),
// where prev is the byte before chunk.
func eolLen(chunk []byte, prev byte) int {
	n := len(chunk)
	switch {
	case n == 0 || chunk[n-1] != '\n':
		return 0
	case n >= 2 && chunk[n-2] == '\r', n == 1 && prev == '\r':
		return 2
	}
	return 1
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}
