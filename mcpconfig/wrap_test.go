package mcpconfig

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/wrap/*.golden")

const exe = "/opt/inflight/bin/inflight"

func proxyPrefix(name string) []string { return []string{"proxy", "--name", name, "--"} }

// TestWrapEachFormat wraps a stdio entry of each format inflight reads:
// the file read back names inflight as the command and the entry's own
// command line after `proxy --name NAME --`, with its env, envFile and cwd
// as they were; every byte outside "command" and "args" is unchanged,
// comments and trailing commas included (the golden files are the whole
// rewritten files).
func TestWrapEachFormat(t *testing.T) {
	for _, tc := range []struct{ file, server string }{
		{"claude_desktop_config.json", "filesystem"},
		{"claude_desktop_config.json", "github"},
		{"claude_code_mcp.json", "search"},
		{"cursor_mcp.json", "python-server"},
		{"cursor_mcp.json", "bare"},
		{"vscode_mcp.json", "Perplexity"},
		{"vscode_settings.json", ""},
	} {
		t.Run(tc.file+"/"+tc.server, func(t *testing.T) {
			path := filepath.Join("testdata", "wrap", tc.file)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			before, err := Parse(data, path, tc.server)
			if err != nil {
				t.Fatal(err)
			}
			w, err := Wrap(data, path, tc.server, exe, proxyPrefix(before.Name))
			if err != nil {
				t.Fatal(err)
			}
			after, err := Parse(w.File, path, before.Name)
			if err != nil {
				t.Fatalf("the wrapped file does not read back: %v\n%s", err, w.File)
			}
			wantArgs := append(append(proxyPrefix(before.Name), before.Command), before.Args...)
			if after.Command != exe || !reflect.DeepEqual(after.Args, wantArgs) {
				t.Errorf("wrapped: %q %q, want %q %q", after.Command, after.Args, exe, wantArgs)
			}
			if !reflect.DeepEqual(after.Env, before.Env) || after.Dir != before.Dir || after.Name != before.Name {
				t.Errorf("env or cwd changed: %+v, was %+v", after, before)
			}
			golden := filepath.Join("testdata", "wrap", strings.TrimSuffix(tc.file, ".json")+"."+strings.NewReplacer("/", "_").Replace(before.Name)+".golden")
			if *update {
				if err := os.WriteFile(golden, w.File, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if string(w.File) != string(want) {
				t.Errorf("wrapped file differs from %s:\n%s", golden, w.File)
			}
			if !strings.Contains(string(w.File), string(w.Entry[strings.IndexByte(string(w.Entry), '\n')+1:])) && strings.Contains(string(w.Entry), "\n") {
				// Entry is the file's own text, dedented: its lines are there.
				for _, l := range strings.Split(string(w.Entry), "\n") {
					if !strings.Contains(string(w.File), l) {
						t.Errorf("entry line %q is not in the file", l)
					}
				}
			}
			if !strings.HasPrefix(string(w.Entry), "{") || !strings.HasSuffix(string(w.Entry), "}") || !strings.Contains(string(w.Entry), exe) {
				t.Errorf("entry:\n%s", w.Entry)
			}
			// Wrapping twice is refused.
			if _, err := Wrap(w.File, path, before.Name, exe, proxyPrefix(before.Name)); !errors.Is(err, ErrWrapped) {
				t.Errorf("wrapping the wrapped entry: %v, want ErrWrapped", err)
			}
		})
	}
}

// TestWrapEntryAlone: the entry shown alone reads as in the file.
func TestWrapEntryAlone(t *testing.T) {
	path := filepath.Join("testdata", "wrap", "vscode_mcp.json")
	data, _ := os.ReadFile(path)
	w, err := Wrap(data, path, "Perplexity", exe, proxyPrefix("Perplexity"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "type": "stdio",
  "command": "/opt/inflight/bin/inflight",
  "args": ["proxy", "--name", "Perplexity", "--", "npx", "-y", "server-perplexity-ask"],
  "env": {
    "PERPLEXITY_API_KEY": "${input:perplexity-key}" // never written in the file
  },
  "cwd": "${workspaceFolder}"
}`
	if string(w.Entry) != want || w.Pointer != "/servers/Perplexity" {
		t.Errorf("entry at %s:\n%s\nwant:\n%s", w.Pointer, w.Entry, want)
	}
}

func TestWrapRefuses(t *testing.T) {
	for _, tc := range []struct{ file, server, want string }{
		{"claude_code_mcp.json", "api-server", "is a Streamable HTTP server"},
		{"vscode_mcp.json", "github", "its URL is rewritten by WrapHTTP"},
		{"vscode_mcp.json", "nope", `has no server "nope"; it has 2 servers: "Perplexity", "github"`},
		{"cursor_mcp.json", "", "choose one with --server NAME"},
	} {
		path := filepath.Join("testdata", "wrap", tc.file)
		data, _ := os.ReadFile(path)
		if _, err := Wrap(data, path, tc.server, exe, proxyPrefix("x")); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Wrap(%s, %q): %v, want an error saying %q", tc.file, tc.server, err, tc.want)
		}
	}
}

// TestWrapFileWrites: --write replaces the file (its mode kept) after
// keeping the original as FILE.inflight-backup, or with a time when that
// exists already.
func TestWrapFileWrites(t *testing.T) {
	dir := t.TempDir()
	orig, _ := os.ReadFile(filepath.Join("testdata", "wrap", "claude_desktop_config.json"))
	path := filepath.Join(dir, "claude_desktop_config.json")
	if err := os.WriteFile(path, orig, 0o640); err != nil {
		t.Fatal(err)
	}
	w, backup, err := WrapFile(path, "github", exe, proxyPrefix("github"), true)
	if err != nil {
		t.Fatal(err)
	}
	if backup != path+".inflight-backup" {
		t.Errorf("backup %s", backup)
	}
	if b, _ := os.ReadFile(backup); string(b) != string(orig) {
		t.Errorf("the backup is not the original")
	}
	got, _ := os.ReadFile(path)
	if string(got) != string(w.File) {
		t.Errorf("the file is not the wrapped one")
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640 as before", fi.Mode().Perm())
	}
	// A second server of the same file: the first backup stays, the
	// second has a time.
	_, backup2, err := WrapFile(path, "filesystem", exe, proxyPrefix("filesystem"), true)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(backup2, path+".inflight-backup-") {
		t.Errorf("second backup %s", backup2)
	}
	if b, _ := os.ReadFile(backup); string(b) != string(orig) {
		t.Errorf("the first backup changed")
	}
	if b, _ := os.ReadFile(backup2); string(b) != string(got) {
		t.Errorf("the second backup is not the file as it was before the second write")
	}
	// Without write nothing changes on disk.
	before, _ := os.ReadFile(path)
	entries, _ := os.ReadDir(dir)
	if _, _, err := WrapFile(path, "github", exe, proxyPrefix("github"), false); !errors.Is(err, ErrWrapped) {
		t.Errorf("github again: %v", err)
	}
	after, _ := os.ReadFile(path)
	entries2, _ := os.ReadDir(dir)
	if string(before) != string(after) || len(entries) != len(entries2) || len(entries2) != 3 {
		t.Errorf("a print-only wrap touched the directory: %d files, then %d", len(entries), len(entries2))
	}
}

// FuzzWrap: Wrap never panics, and a file it wrapped reads back with the
// wrapper as the entry's command, and refuses a second wrap.
func FuzzWrap(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "wrap", "*.json"))
	for _, p := range seeds {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data, "")
		}
	}
	f.Add([]byte(`{"mcpServers":{"a":{"command":"x"}}}`), "a")
	f.Add([]byte("{\"servers\": {\"a/~b\": {\"command\": \"x\", // c\n \"args\": [1, true, \"s\"],},}}"), "a/~b")
	f.Fuzz(func(t *testing.T, data []byte, name string) {
		path := filepath.Join(t.TempDir(), "mcp.json")
		w, err := Wrap(data, path, name, exe, proxyPrefix("p"))
		if err != nil {
			return
		}
		after, err := Parse(w.File, path, w.Name)
		if err != nil {
			t.Fatalf("the wrapped file does not read back: %v\n%s", err, w.File)
		}
		if after.Command != exe || len(after.Args) < 4 || after.Args[0] != "proxy" {
			t.Fatalf("wrapped entry: %q %q", after.Command, after.Args)
		}
		if _, err := Wrap(w.File, path, w.Name, exe, proxyPrefix("p")); !errors.Is(err, ErrWrapped) {
			t.Fatalf("second wrap: %v", err)
		}
	})
}
