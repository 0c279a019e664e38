package otlp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"inflight/event"
	"inflight/redact"
	"inflight/session"
	"inflight/source"
	"inflight/trace"
)

// ExportOptions configure ExportFile.
type ExportOptions struct {
	// Tracker is the tracker's policy the trace was recorded under (its
	// late window above all), which the file does not say; zero is the
	// defaults'.
	Tracker session.Config
	// Start is when the trace began; zero places its end at the file's
	// modification time (a trace keeps no clock time of its own).
	Start time.Time
	// Redactor hides secrets; the trace's writer masked the run's
	// already.
	Redactor *redact.Redactor
	// Warn is told once that spans could not be delivered.
	Warn func(msg string)
	// Open replaces Open (tests): it gets the options ExportFile made.
	Open func(Options) (*Sink, error)
}

// ExportFile sends the trace file at path (inflight's JSON-lines format,
// as --trace writes it) to the OTLP/HTTP collector at endpoint ("": the
// environment's) as the spans the recording run would have sent: the
// file's items are applied to a tracker as a replay does (source.Feed),
// and the Sink builds the spans from it, at the file's times. The error
// says why nothing, or not everything, was sent; a damaged trace sends
// what it holds and says what was wrong.
func ExportFile(ctx context.Context, endpoint, path string, o ExportOptions) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	start := o.Start
	if start.IsZero() {
		last, err := lastMS(f)
		if err != nil {
			return err
		}
		start = st.ModTime().Add(-last)
	}
	open := o.Open
	if open == nil {
		open = Open
	}
	if endpoint == "" && !Enabled("") {
		return errors.New("no collector: give --otlp URL, or set " + EnvEndpoint)
	}
	sink, err := open(Options{Endpoint: endpoint, Name: "inflight trace " + filepath.Base(path), Redactor: o.Redactor, Warn: o.Warn})
	if err != nil {
		return err
	}
	if sink == nil {
		return errors.New("OTLP export is turned off by the environment (OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none)")
	}
	cfg := o.Tracker
	if cfg == (session.Config{}) {
		cfg = session.DefaultConfig()
	}
	seen := func(tr *session.Tracker, ev *event.Event, changes []session.Change) {
		if ctx.Err() == nil {
			sink.Applied(tr, ev, changes)
		}
	}
	_, damage, ferr := source.Feed(f, st.Size(), source.FeedOptions{Start: start, Tracker: cfg, Seen: seen})
	// The run's span ends at the last moment the trace reached.
	cerr := sink.Close()
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case ferr != nil:
		return ferr
	case cerr != nil:
		return cerr
	case damage != nil:
		return fmt.Errorf("the trace is damaged, what it holds was sent: %w", damage)
	}
	return nil
}

// lastMS is the latest "ms" of the trace in f, read once from its start.
func lastMS(f *os.File) (time.Duration, error) {
	rd := trace.NewReader(io.NewSectionReader(f, 0, 1<<62))
	var latest float64
	for {
		rec, err := rd.Next()
		var le *trace.LineError
		switch {
		case errors.As(err, &le):
			continue
		case errors.Is(err, io.EOF):
			return time.Duration(latest * float64(time.Millisecond)), nil
		case err != nil:
			return 0, fmt.Errorf("read the trace: %w", err)
		}
		latest = max(latest, rec.MS)
	}
}
