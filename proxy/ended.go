package proxy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A proxy that records a trace (--trace) leaves, beside its socket, a
// small file that says where: NAME.trace, holding the trace's absolute
// path and a newline. The socket goes with the proxy; this file stays, so
// that `inflight attach NAME` can open the recorded run once the proxy
// has ended. The next proxy of that name replaces it (or, recording no
// trace, removes it: the old run is not that proxy's).

// traceSuffix names a proxy's record of where its trace is.
const traceSuffix = ".trace"

// maxTracePointer bounds what is read of a NAME.trace: a path, well
// within it.
const maxTracePointer = 4 << 10

// ErrNoTrace: no proxy of that name left a record of its trace.
var ErrNoTrace = errors.New("no recorded trace")

// markTrace records, in dir (the socket directory, which listen checked
// is the user's alone), that the proxy name records its trace at
// tracePath (absolute). The file is 0600 and replaces one a proxy of that
// name left; a path there that is not a regular file (a symlink) is
// refused, never followed or replaced. tracePath "" removes what a
// proxy of that name left.
func markTrace(dir, name, tracePath string) error {
	path := filepath.Join(dir, name+traceSuffix)
	fi, err := os.Lstat(path)
	switch {
	case err == nil && !fi.Mode().IsRegular():
		return fmt.Errorf("%s exists and is not a regular file (a symlink?): refusing to replace it", path)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if tracePath == "" {
		if err == nil {
			return os.Remove(path)
		}
		return nil
	}
	if !filepath.IsAbs(tracePath) || strings.ContainsAny(tracePath, "\n\x00") {
		return fmt.Errorf("trace path %q: want an absolute path on one line", tracePath)
	}
	// Written aside and renamed into place: a reader sees the old record
	// or the new one, never half of one. CreateTemp makes a new file
	// (0600, O_EXCL): it follows no link.
	tmp, err := os.CreateTemp(dir, "."+name+traceSuffix+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // once renamed, there is nothing to remove
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := io.WriteString(tmp, tracePath+"\n"); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	// The directory is the user's alone: nothing can put a link at path
	// between the look above and the rename, which replaces the path
	// itself in any case.
	return os.Rename(tmp.Name(), path)
}

// RecordedTrace is where the proxy named name in dir recorded its trace,
// as it left it in NAME.trace: an absolute path, which may no longer
// name a file. It wraps ErrNoTrace (and fs.ErrNotExist) when no proxy of
// that name left one; a record that is not a regular file of the user's
// own (a symlink), in a directory that is not the user's alone, is
// refused.
func RecordedTrace(dir, name string) (string, error) {
	if !validName.MatchString(name) {
		return "", fmt.Errorf("proxy name %q: %w", name, ErrNoTrace)
	}
	path := filepath.Join(dir, name+traceSuffix)
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%s: %w (%w)", path, ErrNoTrace, fs.ErrNotExist)
	}
	if err := checkPrivateDir(dir); err != nil {
		return "", err
	}
	fi, err := os.Lstat(path)
	switch uid, known := ownerOfStat(fi, err); {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("%s: %w (%w)", path, ErrNoTrace, fs.ErrNotExist)
	case err != nil:
		return "", err
	case !fi.Mode().IsRegular():
		return "", fmt.Errorf("%s is not a regular file (a symlink?): refusing to read it", path)
	case known && uid != os.Getuid():
		return "", fmt.Errorf("%s belongs to user %d, not you: refusing to read it", path, uid)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxTracePointer+1))
	if err != nil {
		return "", err
	}
	b, _ = bytes.CutSuffix(b, []byte("\n"))
	p := string(b)
	if len(b) > maxTracePointer || !filepath.IsAbs(p) || strings.ContainsAny(p, "\n\x00") {
		return "", fmt.Errorf("%s does not hold a trace file's path", path)
	}
	return p, nil
}

// ownerOfStat is ownerOf of what Lstat returned (unknown on an error).
func ownerOfStat(fi os.FileInfo, err error) (int, bool) {
	if err != nil {
		return 0, false
	}
	return ownerOf(fi)
}
