package session

import (
	"os/exec"
	"strings"
	"testing"
)

// session is pure: of inflight it imports only event and wire, and none of
// the three imports anything that does I/O (issue 9: "go list -deps
// ./session proves it").
func TestSessionImportsNothingThatDoesIO(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "inflight/") && p != "inflight/session" && p != "inflight/event" && p != "inflight/wire" {
			t.Errorf("session depends on %s", p)
		}
	}
	out, err = exec.Command("go", "list", "-f", "{{.ImportPath}}: {{join .Imports \" \"}}", ".", "../event", "../wire").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	forbidden := []string{"os", "os/exec", "os/signal", "net", "net/http", "io/fs", "syscall", "bufio"}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, ": ")
		for _, imp := range strings.Fields(imports) {
			for _, f := range forbidden {
				if imp == f {
					t.Errorf("%s imports %s", pkg, imp)
				}
			}
		}
	}
}
