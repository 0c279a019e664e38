package schemaform

import (
	"encoding/json"
	"strings"
	"testing"
)

func same(s string) string { return s }

// A property that lists its values is read as choices with their titles:
// an enum (enumNames titling it), a oneOf of consts, an array of either
// (a multi-select); a default is kept as JSON.
func TestReadChoices(t *testing.T) {
	f := Read(json.RawMessage(`{"type":"object","properties":{
		"a":{"type":"string","enum":["x","y"],"enumNames":["Ex","Why"],"default":"y"},
		"b":{"type":"integer","oneOf":[{"const":1,"title":"one"},{"const":2}]},
		"c":{"type":"array","items":{"type":"string","enum":["p","q"]},"default":["q"]},
		"d":{"type":"array","items":{"type":"string"}}}}`), same)
	var got []string
	for _, p := range f.Params {
		var cs []string
		for _, c := range p.Choices {
			cs = append(cs, string(c.Value)+"="+c.Title)
		}
		got = append(got, p.Name+":"+p.Type+":"+strings.Join(cs, ",")+":"+string(p.DefaultJSON)+":"+map[bool]string{true: "multi"}[p.Multi])
	}
	want := []string{`a:string:"x"=Ex,"y"=Why:"y":`, `b:integer:1=one,2=2::`, `c:array:"p"=p,"q"=q:["q"]:multi`, `d:json:::`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("params:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A picker's first move starts from its default; typing replaces the
// choice with the text; Clear sends nothing, default included.
func TestPickerField(t *testing.T) {
	fs := Fields(Read(json.RawMessage(`{"type":"object","properties":{"a":{"type":"string","enum":["x","y","z"],"default":"y"}}}`), same).Params)
	f := &fs[0]
	if raw, ok, _ := f.Value(); ok || string(f.DefaultValue()) != `"y"` {
		t.Fatalf("untouched: value %s %v, default %s", raw, ok, f.DefaultValue())
	}
	f.Move(1)
	if raw, ok, _ := f.Value(); !ok || string(raw) != `"z"` {
		t.Fatalf("→ from the default chose %s", raw)
	}
	f.Input.SetValue("w")
	if raw, _, _ := f.Value(); string(raw) != `"w"` {
		t.Fatalf("typed: %s", raw)
	}
	f.Clear()
	if raw, ok, _ := f.Value(); ok || f.DefaultValue() != nil {
		t.Fatalf("cleared: %s %v, default %s", raw, ok, f.DefaultValue())
	}
}
