package cli

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

var update = flag.Bool("update", false, "rewrite docs/cli from the cobra commands")

// cliReferenceDir is the generated command reference, from this package's
// directory.
const cliReferenceDir = "../docs/cli"

// refreshHint is how to bring docs/cli up to date with the commands.
const refreshHint = "go test ./cli -run TestCLIReferenceIsCurrent -update"

// generateCLIReference writes the Markdown reference of every command, one
// file a command, into dir. The output depends on the commands alone: no
// date (DisableAutoGenTag), no path of this machine. The one text that reads
// the environment is auth's, which names the user's config directory; with
// HOME and the XDG variables empty it names os.UserConfigDir() itself, so
// the caller must have emptied them (see fixDocsEnvironment).
func generateCLIReference(dir string) error {
	root := newCLI(context.Background(), io.Discard, io.Discard).rootCommand()
	// Execute adds these on its first run; the reference shows what --help
	// shows, so add them as it would.
	root.InitDefaultVersionFlag()
	root.InitDefaultCompletionCmd()
	root.InitDefaultHelpCmd()
	disableAutoGenTag(root)
	prepend := func(string) string {
		return "<!-- Generated from the cobra commands; do not edit. Refresh: " + refreshHint + " -->\n\n"
	}
	// Every page sits in the same directory, so a link to another command
	// is its file name alone, relative to the page that holds it.
	link := func(name string) string { return filepath.Base(name) }
	return doc.GenMarkdownTreeCustom(root, dir, prepend, link)
}

func disableAutoGenTag(cmd *cobra.Command) {
	cmd.DisableAutoGenTag = true
	for _, sub := range cmd.Commands() {
		disableAutoGenTag(sub)
	}
}

// fixDocsEnvironment empties what os.UserConfigDir reads on every system,
// so the reference says the same on every machine.
func fixDocsEnvironment(t *testing.T) {
	for _, k := range []string{"HOME", "XDG_CONFIG_HOME", "AppData", "home"} {
		t.Setenv(k, "")
	}
}

// TestCLIReferenceIsCurrent holds docs/cli to what the commands say: a
// flag, a command or a help text changed without refreshing the reference
// fails here, as does a page left for a command that is gone.
func TestCLIReferenceIsCurrent(t *testing.T) {
	fixDocsEnvironment(t)
	if *update {
		if err := os.RemoveAll(cliReferenceDir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(cliReferenceDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := generateCLIReference(cliReferenceDir); err != nil {
			t.Fatalf("generate %s: %v", cliReferenceDir, err)
		}
		return
	}
	fresh := t.TempDir()
	if err := generateCLIReference(fresh); err != nil {
		t.Fatalf("generate the reference: %v", err)
	}
	want := readMarkdownDir(t, fresh)
	got := readMarkdownDir(t, cliReferenceDir)
	var stale []string
	for name, text := range want {
		old, ok := got[name]
		switch {
		case !ok:
			stale = append(stale, name+": missing")
		case !bytes.Equal(old, text):
			stale = append(stale, name+": differs from the commands")
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			stale = append(stale, name+": no such command any more")
		}
	}
	if len(stale) > 0 {
		slices.Sort(stale)
		t.Fatalf("docs/cli is out of date with the cobra commands:\n  %s\nrefresh it with: %s",
			strings.Join(stale, "\n  "), refreshHint)
	}
	if len(want) == 0 {
		t.Fatal("the generator wrote no page")
	}
}

func readMarkdownDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = b
	}
	return files
}

// markdownLink is an inline link or image, [text](target "title"); its
// target is the first group.
var markdownLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)

// inlineCode is a code span, whose brackets are not links.
var inlineCode = regexp.MustCompile("`+[^`]*`+")

// TestDocsLinksResolve follows every relative link of README.md and the
// pages under docs/: each must name a file that exists, and a #fragment
// must name a heading of that file (as GitHub makes anchors of headings).
func TestDocsLinksResolve(t *testing.T) {
	pages := []string{"../README.md"}
	err := filepath.WalkDir("../docs", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			pages = append(pages, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		anchors[path] = headingAnchors(string(b))
		return anchors[path]
	}
	links := 0
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range proseLines(string(b)) {
			if line == "" {
				continue
			}
			line = inlineCode.ReplaceAllString(line, "")
			for _, m := range markdownLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				links++
				file, fragment, _ := strings.Cut(target, "#")
				dest := page
				if file != "" {
					dest = filepath.Join(filepath.Dir(page), filepath.FromSlash(file))
					info, err := os.Stat(dest)
					if err != nil {
						t.Errorf("%s:%d: link %q: %v", page, n+1, target, err)
						continue
					}
					if info.IsDir() {
						continue
					}
				}
				if fragment != "" && strings.HasSuffix(dest, ".md") && !anchorsOf(dest)[fragment] {
					t.Errorf("%s:%d: link %q: %s has no heading with anchor #%s", page, n+1, target, dest, fragment)
				}
			}
		}
	}
	if links == 0 {
		t.Fatal("found no relative link at all: the pattern or the paths are wrong")
	}
}

// proseLines is the text's lines with those inside fenced code blocks
// blanked, so that what a code block shows is neither a link nor a heading.
func proseLines(text string) []string {
	lines := strings.Split(text, "\n")
	fence := ""
	for i, line := range lines {
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case fence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")):
			fence = trimmed[:3]
			lines[i] = ""
		case fence != "":
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			lines[i] = ""
		}
	}
	return lines
}

// headingAnchors are the anchors GitHub gives a page's headings: the text
// lower-cased, code marks and punctuation dropped, spaces made hyphens, and
// a repeated anchor numbered -1, -2….
func headingAnchors(text string) map[string]bool {
	seen := map[string]int{}
	anchors := map[string]bool{}
	for _, line := range proseLines(text) {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsNumber(r) || unicode.Is(unicode.Pc, r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			anchors[a+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[a] = true
		}
		seen[a]++
	}
	return anchors
}
