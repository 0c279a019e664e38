// Package formats checks, in tests, that what inflight exports is read by
// the tools that read those formats: JUnit XML by libxml2's schema
// validator (xmllint, compiled to WebAssembly) against junit.xsd, HAR by
// har-validator against the HAR 1.2 schema. Both come from npm through
// npmpeer, so a test that needs them is skipped, saying why, only when the
// registry cannot be reached.
package formats

import (
	_ "embed"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"inflight/internal/testkit/npmpeer"
)

// JUnitSchema is the JUnit XML schema the reports are held to (see its
// opening comment for where it comes from).
//
//go:embed junit.xsd
var JUnitSchema []byte

const validateXML = `
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
const require = createRequire(import.meta.url);
const { validateXML } = require('xmllint-wasm');
const [xmlPath, xsdPath] = process.argv.slice(2);
const result = await validateXML({
  xml: [{ fileName: 'report.xml', contents: readFileSync(xmlPath, 'utf8') }],
  schema: [readFileSync(xsdPath, 'utf8')],
});
if (!result.valid) {
  console.log(result.rawOutput);
  process.exit(1);
}
console.log('valid');
`

const validateHAR = `
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
const require = createRequire(import.meta.url);
const validate = require('har-validator');
const data = JSON.parse(readFileSync(process.argv[2], 'utf8'));
try {
  await validate.har(data);
  console.log('valid');
} catch (e) {
  console.log(JSON.stringify(e.errors || String(e), null, 1));
  process.exit(1);
}
`

// JUnit fails t unless doc is valid against JUnitSchema.
func JUnit(t testing.TB, doc []byte) {
	t.Helper()
	dir := t.TempDir()
	xmlPath, xsdPath := filepath.Join(dir, "report.xml"), filepath.Join(dir, "junit.xsd")
	write(t, xmlPath, doc)
	write(t, xsdPath, JUnitSchema)
	run(t, "validate-junit.mjs", validateXML, xmlPath, xsdPath)
}

// HAR fails t unless doc is a valid HAR 1.2 log.
func HAR(t testing.TB, doc []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "out.har")
	write(t, path, doc)
	run(t, "validate-har.mjs", validateHAR, path)
}

func write(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func run(t testing.TB, name, source string, args ...string) {
	t.Helper()
	in := npmpeer.Need(t, npmpeer.Node, npmpeer.XMLLint, npmpeer.HARValidator)
	argv := append(in.Script(t, name, source), args...)
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "valid" {
		t.Fatalf("%s: not valid (%v):\n%s", name, err, out)
	}
}
