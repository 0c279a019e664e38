package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// MaxLineBytes bounds one trace line when reading. Messages up to the
// client's 32 MiB limit fit, with room for escaping.
const MaxLineBytes = 64 << 20

// LineError is a line that is not a valid trace record. Reading can go on
// after one.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

func (e *LineError) Unwrap() error { return e.Err }

// Reader reads a trace one record at a time.
type Reader struct {
	sc   *bufio.Scanner
	line int
	// at is where the line Next read last begins in the file, pos where
	// the next one does.
	at, pos int64
}

// NewReader returns a Reader of r.
func NewReader(r io.Reader) *Reader { return NewReaderAt(r, 0, 0) }

// NewReaderAt returns a Reader of r, which holds a trace from offset on:
// its first line is line+1 of the file, so that Line and Offset count in
// the whole file (a replay reads on from a line it marked).
func NewReaderAt(r io.Reader, offset int64, line int) *Reader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLineBytes)
	tr := &Reader{sc: sc, line: line, at: offset, pos: offset}
	sc.Split(tr.split)
	return tr
}

// split is bufio.ScanLines, counting the bytes each line took.
func (r *Reader) split(data []byte, atEOF bool) (int, []byte, error) {
	advance, token, err := bufio.ScanLines(data, atEOF)
	if token != nil {
		r.at = r.pos
		r.pos += int64(advance)
	}
	return advance, token, err
}

// Next returns the next record. It returns io.EOF at the end, a *LineError
// for a line that is not a record (the caller may go on reading), and any
// other error when reading cannot go on. Blank lines are skipped.
func (r *Reader) Next() (Record, error) {
	for r.sc.Scan() {
		r.line++
		line := bytes.TrimSpace(r.sc.Bytes())
		if len(line) == 0 {
			continue
		}
		rec, err := parseLine(line)
		if err != nil {
			return Record{}, &LineError{Line: r.line, Err: err}
		}
		return rec, nil
	}
	if err := r.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return Record{}, fmt.Errorf("line %d: longer than %d bytes", r.line+1, MaxLineBytes)
		}
		return Record{}, err
	}
	return Record{}, io.EOF
}

// Line is the number of the line Next read last.
func (r *Reader) Line() int { return r.line }

// Offset is where the line Next read last begins in the file.
func (r *Reader) Offset() int64 { return r.at }

func parseLine(line []byte) (Record, error) {
	rec, ok := parseFast(line)
	if !ok {
		var err error
		if rec, err = parseSlow(line); err != nil {
			return Record{}, err
		}
	}
	switch rec.Dir {
	case DirOut, DirIn, DirLocal:
	default:
		return Record{}, fmt.Errorf("dir %q is not out, in or local", rec.Dir)
	}
	if len(rec.Msg) == 0 && rec.Event == "" {
		return Record{}, errors.New(`record has neither "msg" nor "event"`)
	}
	return rec, nil
}

// parseSlow is encoding/json's reading of a line, for what parseFast
// leaves to it. (Apart, so that only this path's record escapes to the
// heap.)
func parseSlow(line []byte) (Record, error) {
	var rec Record
	if err := json.Unmarshal(line, &rec); err != nil {
		return Record{}, fmt.Errorf("not a trace record: %w", err)
	}
	return rec, nil
}

// ReadAll reads every record of a trace. Lines that are not records are
// skipped and returned as *LineError values; err is set only when reading
// could not go on.
func ReadAll(r io.Reader) (recs []Record, bad []*LineError, err error) {
	tr := NewReader(r)
	for {
		rec, err := tr.Next()
		var le *LineError
		switch {
		case err == nil:
			recs = append(recs, rec)
		case errors.Is(err, io.EOF):
			return recs, bad, nil
		case errors.As(err, &le):
			bad = append(bad, le)
		default:
			return recs, bad, err
		}
	}
}
