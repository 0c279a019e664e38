package wire

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// Within the bound, IndentBounded writes exactly what json.Indent writes.
func TestIndentBoundedMatchesIndent(t *testing.T) {
	for _, src := range []string{
		`{"a":1,"b":[1,2,{"c":"d,e:[f]"}],"e":{},"f":[],"g":"q\"uo\\te"}`,
		` [ 1 , 2 ] `, `"s"`, `null`, `{"k":{"k":{"k":[[],[{}]]}}}`,
	} {
		var want, got bytes.Buffer
		if err := json.Indent(&want, []byte(src), "> ", "\t"); err != nil {
			t.Fatal(err)
		}
		if err := IndentBounded(&got, []byte(src), "> ", "\t", 100); err != nil {
			t.Fatal(err)
		}
		if got.String() != strings.TrimSpace(want.String()) {
			t.Errorf("%s:\ngot  %q\nwant %q", src, got.String(), want.String())
		}
	}
}

// Past the bound, values stay compact: the output of a deeply nested value
// grows with its size, not with the square of its depth.
func TestIndentBoundedDeep(t *testing.T) {
	const depth = 9000
	src := `{"content":[{"type":"text","text":"x"}],"deep":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}`
	var out bytes.Buffer
	if err := IndentBounded(&out, []byte(src), "", "  ", 4); err != nil {
		t.Fatal(err)
	}
	if out.Len() > 2*len(src) {
		t.Fatalf("%d bytes in, %d out", len(src), out.Len())
	}
	want := "{\n  \"content\": [\n    {\n      \"type\": \"text\",\n      \"text\": \"x\"\n    }\n  ],\n  \"deep\": [\n    [\n      [\n        [[[["
	if !strings.HasPrefix(out.String(), want) {
		t.Fatalf("got %.200q", out.String())
	}
	if !json.Valid(out.Bytes()) {
		t.Fatal("invalid output")
	}
	if err := IndentBounded(&out, []byte(`{"a":`), "", "  ", 4); err == nil {
		t.Fatal("invalid JSON accepted")
	}
}

// FuzzIndentBounded: the output is valid JSON with the input's value, and
// without a bound it is json.Indent's.
func FuzzIndentBounded(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":"c\\\"d"}],"e":{}}`, `[[[[[]]]]]`, `"\u2028"`, `1e5`, `{"a":"}{]["}`} {
		f.Add([]byte(s), 2)
	}
	f.Fuzz(func(t *testing.T, src []byte, depth int) {
		depth = max(0, depth%50)
		var out bytes.Buffer
		err := IndentBounded(&out, src, "", " ", depth)
		if (err != nil) != !json.Valid(src) {
			t.Fatalf("error %v for valid=%v", err, json.Valid(src))
		}
		if err != nil {
			return
		}
		var a, b bytes.Buffer
		_ = json.Compact(&a, src)
		_ = json.Compact(&b, out.Bytes())
		if a.String() != b.String() {
			t.Fatalf("value changed: %q → %q", src, out.String())
		}
		var full, ind bytes.Buffer
		_ = IndentBounded(&full, src, "", " ", 1<<30)
		_ = json.Indent(&ind, a.Bytes(), "", " ")
		if full.String() != ind.String() {
			t.Fatalf("unbounded %q differs from json.Indent %q", full.String(), ind.String())
		}
	})
}
