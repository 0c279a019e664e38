package ui

import (
	"os/exec"
	"strings"
	"testing"
)

// The screens are packages of their own under ui/, and none of them
// imports the root or another screen: what they share is ui/look (how
// things are drawn), ui/screen (the contract with the root) and
// ui/schemaform (a form built from a server's JSON schema, which the
// composer and the answer form both show). go list
// says what each package imports, so this holds for the code as built,
// not for what a comment claims.
func TestScreensImportNoScreen(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "inflight/ui/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	shared := map[string]bool{"inflight/ui/look": true, "inflight/ui/screen": true, "inflight/ui/schemaform": true}
	screens := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, imports := fields[0], fields[1:]
		if pkg == "inflight/ui" || shared[pkg] {
			for _, imp := range imports {
				if pkg != "inflight/ui" && strings.HasPrefix(imp, "inflight/ui") && !shared[imp] {
					t.Errorf("%s is shared by the screens but imports %s", pkg, imp)
				}
			}
			continue
		}
		screens++
		for _, imp := range imports {
			if (imp == "inflight/ui" || strings.HasPrefix(imp, "inflight/ui/")) && !shared[imp] {
				t.Errorf("the screen %s imports %s: a screen imports only the shared packages of ui/ (look, screen, schemaform)", pkg, imp)
			}
		}
	}
	if screens == 0 {
		t.Fatal("go list found no screen package under ui/")
	}
}
