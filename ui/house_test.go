package ui

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
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

// The root model stays small: it routes, and what it routes to holds its
// own state. These bounds are the design's ("Small (≤ 15 fields)"), and
// the methods' bound keeps the root from growing back into the screens'
// or the requests' business. Counted over the package's source as
// written (not its tests): a line "width, height int" is two fields, and
// a method of Model or *Model is one method.
const (
	maxModelFields = 15
	// maxModelMethods bounds the root's methods: routing, and carrying
	// out what the screens ask. What only reads a part of the model is a
	// function of that part, or a method of the type that holds it.
	maxModelMethods = 60
)

func TestRootModelIsSmall(t *testing.T) {
	fields, methods := modelSize(t, ".")
	if fields > maxModelFields {
		t.Errorf("the root Model has %d fields, more than %d: group what belongs together into a type that says what it holds", fields, maxModelFields)
	}
	if methods > maxModelMethods {
		t.Errorf("the root Model has %d methods, more than %d: a screen's part belongs in its package, a concern of the root's in a type of its own", methods, maxModelMethods)
	}
	t.Logf("the root Model has %d fields and %d methods", fields, methods)
}

// modelSize counts the fields of type Model struct and the methods whose
// receiver is Model or *Model in the non-test Go files of dir.
func modelSize(t *testing.T, dir string) (fields, methods int) {
	t.Helper()
	fset := token.NewFileSet()
	notTest := func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }
	pkgs, err := parser.ParseDir(fset, dir, notTest, 0)
	if err != nil {
		t.Fatalf("parse %s: %v", dir, err)
	}
	found := false
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			for _, decl := range f.Decls {
				switch d := decl.(type) {
				case *ast.GenDecl:
					for _, spec := range d.Specs {
						ts, ok := spec.(*ast.TypeSpec)
						if !ok || ts.Name.Name != "Model" {
							continue
						}
						st, ok := ts.Type.(*ast.StructType)
						if !ok {
							continue
						}
						found = true
						for _, field := range st.Fields.List {
							if len(field.Names) == 0 {
								fields++ // embedded
							}
							fields += len(field.Names)
						}
					}
				case *ast.FuncDecl:
					if d.Recv == nil || len(d.Recv.List) != 1 {
						continue
					}
					typ := d.Recv.List[0].Type
					if star, ok := typ.(*ast.StarExpr); ok {
						typ = star.X
					}
					if id, ok := typ.(*ast.Ident); ok && id.Name == "Model" {
						methods++
					}
				}
			}
		}
	}
	if !found {
		t.Fatalf("no type Model struct in %s", dir)
	}
	return fields, methods
}
