package main

import (
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"
)

// main.go is a thin wrapper around package cli: every command, flag and
// handler lives there or below it, so main imports no project package but
// cli (and whatever the standard library it needs).
func TestMainImportsOnlyCLI(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Imports) == 0 {
		t.Fatal("main.go imports nothing; it should import inflight/cli")
	}
	sawCLI := false
	for _, imp := range f.Imports {
		path, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			t.Fatal(err)
		}
		first, _, _ := strings.Cut(path, "/")
		switch {
		case path == "inflight/cli":
			sawCLI = true
		case !strings.Contains(first, "."):
			// The standard library has no dot in its first element;
			// the module's own packages begin with "inflight".
			if first == "inflight" {
				t.Errorf("main.go imports %s; it may import only inflight/cli of the project", path)
			}
		default:
			t.Errorf("main.go imports %s; it may import only inflight/cli and the standard library", path)
		}
	}
	if !sawCLI {
		t.Error("main.go does not import inflight/cli")
	}
}
