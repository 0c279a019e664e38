package schemaform

import (
	"encoding/json"
	"strings"
	"testing"
)

// nestedSchema is an object schema whose one property is an object
// schema, n levels deep, with a string at the bottom.
func nestedSchema(n int) []byte {
	var b strings.Builder
	for range n {
		b.WriteString(`{"type":"object","properties":{"a":`)
	}
	b.WriteString(`{"type":"string"}`)
	for range n {
		b.WriteString(`}}`)
	}
	return []byte(b.String())
}

// TestReadDeepSchemaIsLinear holds Read to work in proportion to the
// schema's size however deep it nests, counted in allocations rather than
// time: reading every level again for each level above it made a schema
// four times as deep cost sixteen times as much (a few thousand levels
// froze the form for seconds).
func TestReadDeepSchemaIsLinear(t *testing.T) {
	work := func(n int) float64 {
		raw := nestedSchema(n)
		return testing.AllocsPerRun(3, func() { Read(raw, func(s string) string { return s }) })
	}
	small, large := work(500), work(2000)
	if small == 0 || large/small > 2 {
		t.Fatalf("a schema 4× as deep cost %.0f allocations against %.0f (%.1f×): reading it is not bounded by its depth", large, small, large/small)
	}
}

// TestReadDeepSchemaSaysWhatWasCut: the form says how much of a deep
// schema it did not read, and checks nothing against what it did read.
func TestReadDeepSchemaSaysWhatWasCut(t *testing.T) {
	f := Read(nestedSchema(4900), func(s string) string { return s })
	if len(f.Params) != 1 || f.Params[0].Name != "a" || f.Params[0].Type != "json" {
		t.Fatalf("params = %+v, want the one object property a, typed as JSON", f.Params)
	}
	// 4900 objects of two JSON levels each, and the string's object.
	want := "its schema is nested too deep (9769 levels past the 32 read not shown)"
	if !strings.Contains(f.Note, want) || !strings.Contains(f.Note, "not checked") {
		t.Fatalf("note = %q, want it to say %q and that nothing is checked", f.Note, want)
	}
	if f.check != nil {
		t.Fatal("a schema cut short is checked against: what was cut would allow anything")
	}
	if err := f.Validate(map[string]json.RawMessage{"a": json.RawMessage(`1`)}); err != nil {
		t.Fatalf("Validate = %v, want no check", err)
	}
	// Within the bound, nothing changes: the schema is read whole and checked.
	f = Read(nestedSchema(10), func(s string) string { return s })
	if f.Note != "" || f.check == nil {
		t.Fatalf("a schema 10 levels deep: note %q, checked %v; want it read whole and checked", f.Note, f.check != nil)
	}
}

func TestCutDeep(t *testing.T) {
	cases := []struct {
		in, want string
		depth    int
		deeper   int
	}{
		{`{"a":{"b":{"c":1}}}`, `{"a":{"b":{"c":1}}}`, 3, 0},
		{`{"a":{"b":{"c":1}}}`, `{"a":{"b":{}}}`, 2, 1},
		{`{"a":[1,[2,[3]]],"s":"{[\"]}"}`, `{"a":[1,[]],"s":"{[\"]}"}`, 2, 2},
		{`{"x":{"y":"}\\"},"z":2}`, `{"x":{},"z":2}`, 1, 1},
		{`[[],{}]`, `[[],{}]`, 2, 0},
	}
	for _, c := range cases {
		out, deeper := cutDeep([]byte(c.in), c.depth)
		if string(out) != c.want || deeper != c.deeper {
			t.Errorf("cutDeep(%s, %d) = %s, %d; want %s, %d", c.in, c.depth, out, deeper, c.want, c.deeper)
		}
		if !json.Valid(out) {
			t.Errorf("cutDeep(%s, %d) = %s: not JSON", c.in, c.depth, out)
		}
	}
}
