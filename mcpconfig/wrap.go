package mcpconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tailscale/hujson"
)

// Wrapped is a config file with one stdio entry rewritten to run through
// another command (`inflight proxy`).
type Wrapped struct {
	// Name is the entry's name; Pointer its JSON pointer in the file
	// (/mcpServers/NAME, /servers/NAME or /mcp/servers/NAME).
	Name    string
	Pointer string
	// File is the whole file rewritten: every byte outside the entry's
	// "command" and "args" as it was, comments and formatting included.
	File []byte
	// Entry is the rewritten entry alone, as it reads in File (its lines
	// after the first dedented by the indentation of its last).
	Entry []byte
	// Server is the entry as Parse read it, before the rewrite (for the
	// redaction of what is shown of it).
	Server Server
}

// ErrHTTPEntry is Wrap's refusal of a Streamable HTTP entry.
var ErrHTTPEntry = errors.New("it is a Streamable HTTP server: its URL is rewritten by WrapHTTP, not its command")

// ErrWrapped is Wrap's refusal of an entry that already runs through the
// wrapper.
var ErrWrapped = errors.New("it already runs through inflight proxy")

// Wrap rewrites the stdio entry called name (the only one when name is "")
// of a config file in any format Parse reads, so that the host runs
//
//	command: exe
//	args:    prefix…, the entry's command, its args…
//
// instead of the entry's command and args. The command and args are
// taken as the file wrote them (variables unexpanded: the host expands
// them in args as it did in command); env, envFile, cwd, type and every
// other member stay as they are. The file is patched with hujson, so its
// comments, trailing commas and layout survive; only the "command" and
// "args" values change. An HTTP entry is refused (ErrHTTPEntry), and so
// is one whose command is already exe (ErrWrapped).
func Wrap(data []byte, path, name, exe string, prefix []string) (Wrapped, error) {
	fail := func(format string, args ...any) (Wrapped, error) {
		return Wrapped{}, fmt.Errorf("config file %s: %w", path, fmt.Errorf(format, args...))
	}
	// Parse checks the entry as LoadFile does (and picks the only one).
	srv, err := Parse(data, path, name)
	if err != nil {
		return Wrapped{}, err
	}
	name = srv.Name
	if srv.URL != "" {
		return fail("server %q: %w", name, ErrHTTPEntry)
	}
	v, err := hujson.Parse(data)
	if err != nil {
		return fail("%v", err)
	}
	ptr := ""
	for _, top := range []string{"/mcpServers", "/servers", "/mcp/servers"} {
		if v.Find(top) != nil {
			ptr = top + "/" + escapePointer(name)
			break
		}
	}
	entry := v.Find(ptr)
	if entry == nil {
		return fail("server %q not found where it was read", name)
	}
	// The entry's own command and args, as written.
	ent := entry.Clone()
	ent.Standardize()
	var raw struct {
		Command json.RawMessage   `json:"command"`
		Args    []json.RawMessage `json:"args"`
	}
	if err := json.Unmarshal(ent.Pack(), &raw); err != nil {
		return fail("server %q: %v", name, err)
	}
	var cmd string
	if json.Unmarshal(raw.Command, &cmd) == nil && sameCommand(cmd, exe) && len(raw.Args) > 0 && string(compact(raw.Args[0])) == `"proxy"` {
		return fail("server %q: %w (%s)", name, ErrWrapped, cmd)
	}
	args := make([]json.RawMessage, 0, len(prefix)+1+len(raw.Args))
	for _, p := range prefix {
		args = append(args, jsonString(p))
	}
	args = append(args, compact(raw.Command))
	for _, a := range raw.Args {
		args = append(args, compact(a))
	}
	// "add" replaces the member when it is there, and adds it when the
	// entry has no args.
	patch := fmt.Sprintf(`[{"op":"replace","path":%s,"value":%s},{"op":"add","path":%s,"value":%s}]`,
		jsonString(ptr+"/command"), jsonString(exe), jsonString(ptr+"/args"), joinArray(args))
	if err := v.Patch([]byte(patch)); err != nil {
		return fail("server %q: %v", name, err)
	}
	entry = v.Find(ptr)
	if raw.Args == nil {
		layOutAdded(entry, "args", "command")
	}
	out := v.Pack()
	return Wrapped{Name: name, Pointer: ptr, File: out, Entry: dedent(bytes.TrimSpace(entry.Pack())), Server: srv}, nil
}

// layOutAdded gives a member the patch added to obj the line and
// indentation of a member that was there (a patch adds it without any).
func layOutAdded(obj *hujson.Value, added, like string) {
	o, ok := obj.Value.(*hujson.Object)
	if !ok {
		return
	}
	var indent, space hujson.Extra
	for _, m := range o.Members {
		if m.Name.Value.(hujson.Literal).String() == like {
			b := m.Name.BeforeExtra
			if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
				indent = append(hujson.Extra(nil), b[i:]...)
			}
			space = append(hujson.Extra(nil), m.Value.BeforeExtra...)
		}
	}
	for i := range o.Members {
		if m := &o.Members[i]; m.Name.Value.(hujson.Literal).String() == added && len(m.Name.BeforeExtra) == 0 {
			m.Name.BeforeExtra, m.Value.BeforeExtra = indent, space
		}
	}
}

// dedent removes from every line after the first the indentation of the
// last, so that an entry cut out of a file reads as it did there.
func dedent(b []byte) []byte {
	lines := bytes.Split(b, []byte("\n"))
	last := lines[len(lines)-1]
	indent := last[:len(last)-len(bytes.TrimLeft(last, " \t"))]
	for i := 1; i < len(lines); i++ {
		lines[i] = bytes.TrimPrefix(lines[i], indent)
	}
	return bytes.Join(lines, []byte("\n"))
}

// WrapFile is Wrap on a file; with write set it also replaces the file
// with the wrapped one, after copying the original to a backup next to it
// (FILE.inflight-backup, or FILE.inflight-backup-TIME when that exists),
// and returns the backup's path. The new file keeps the original's mode
// and is renamed into place, so that a host never reads half a file.
func WrapFile(path, name, exe string, prefix []string, write bool) (w Wrapped, backup string, err error) {
	return wrapFileWith(path, write, func(data []byte) (Wrapped, error) { return Wrap(data, path, name, exe, prefix) })
}

// RewriteFile reads the config file at path and gives its bytes to
// rewrite; when write is set, it writes what rewrite returns back in
// place of the file, as WrapFile does, keeping the original as one backup
// (path.inflight-backup, or with a time when that exists) however many
// entries rewrite changed. It returns the rewritten bytes.
func RewriteFile(path string, write bool, rewrite func(data []byte) ([]byte, error)) (file []byte, backup string, err error) {
	w, backup, err := wrapFileWith(path, write, func(data []byte) (Wrapped, error) {
		out, err := rewrite(data)
		return Wrapped{File: out}, err
	})
	return w.File, backup, err
}

// wrapFileWith is WrapFile with the rewrite given.
func wrapFileWith(path string, write bool, wrap func([]byte) (Wrapped, error)) (w Wrapped, backup string, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Wrapped{}, "", fmt.Errorf("config file: %w", err)
	}
	w, err = wrap(data)
	if err != nil || !write {
		return w, "", err
	}
	info, err := os.Stat(path)
	if err != nil {
		return w, "", fmt.Errorf("config file: %w", err)
	}
	backup = path + ".inflight-backup"
	if _, err := os.Lstat(backup); err == nil {
		backup += "-" + time.Now().UTC().Format("20060102T150405.000Z")
	}
	if err := writeNew(backup, data, info.Mode().Perm()); err != nil {
		return w, "", fmt.Errorf("backup of the config file: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".inflight-*")
	if err != nil {
		return w, backup, fmt.Errorf("write the config file: %w", err)
	}
	defer os.Remove(tmp.Name()) // gone once renamed; left over only on failure
	_, err1 := tmp.Write(w.File)
	err2 := tmp.Chmod(info.Mode().Perm())
	err3 := tmp.Close()
	if err := errors.Join(err1, err2, err3); err != nil {
		return w, backup, fmt.Errorf("write the config file: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return w, backup, fmt.Errorf("write the config file: %w", err)
	}
	return w, backup, nil
}

// writeNew writes a file that must not exist yet.
func writeNew(path string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err1 := f.Write(data)
	return errors.Join(err1, f.Close())
}

// sameCommand reports whether an entry's command is exe: the same path,
// or an inflight by name (a file written on another machine, or by PATH).
func sameCommand(cmd, exe string) bool {
	return cmd == exe || filepath.Base(cmd) == filepath.Base(exe) || filepath.Base(cmd) == "inflight"
}

func escapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// joinArray writes a JSON array on one line, as config files write short
// args: ["a", "b"].
func joinArray(items []json.RawMessage) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			b.WriteString(", ")
		}
		b.Write(it)
	}
	b.WriteByte(']')
	return b.String()
}
