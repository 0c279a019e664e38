package trace

import (
	"fmt"
	"os"
)

// Create opens a trace file for writing (--trace FILE): created 0600, as
// the token files are, since a trace holds a session's traffic; an existing
// file is truncated and made the user's alone too. A symlink at path is
// refused, never followed, so a link planted there cannot have inflight
// truncate the file it names.
func Create(path string) (*os.File, error) {
	if noFollow == 0 && isLink(path) {
		// No O_NOFOLLOW here: the look before the open is what there is.
		return nil, fmt.Errorf("%s is a symbolic link: refusing to follow it (give the file's own path)", path)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|noFollow, 0o600)
	if err != nil {
		if isLink(path) {
			return nil, fmt.Errorf("%s is a symbolic link: refusing to follow it (give the file's own path)", path)
		}
		return nil, err
	}
	// The mode applies to a file created now; one that was there keeps
	// its own until told (through the open file: no path is followed).
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// isLink reports whether path itself is a symbolic link.
func isLink(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode()&os.ModeSymlink != 0
}
