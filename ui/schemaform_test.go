package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// withTool connects and answers tools/list with one tool of the given
// input schema, then opens its form.
func withTool(t *testing.T, schema string) *harness {
	t.Helper()
	h := newHarness(t, 140, 40)
	info := h.fake.info
	h.events(clientConnected(&info))
	h.answer(1, `{"resultType":"complete","tools":[{"name":"probe","description":"A probe.","inputSchema":`+schema+`}]}`)
	h.key("n", "enter")
	if tool, ok := h.m.screens.composer.Tool(); !ok || tool.Name != "probe" || h.m.screens.composer.Picking() {
		t.Fatalf("the form of the tool did not open:\n%s", h.screen())
	}
	return h
}

// The form reads types, defaults, enums (plain, and consts with titles)
// and the required list through jsonschema-go.
func TestSchemaFormFields(t *testing.T) {
	h := withTool(t, `{"type":"object","required":["mode"],"properties":{
		"mode":{"type":"string","enum":["fast","slow"],"description":"How."},
		"level":{"oneOf":[{"const":1,"title":"low"},{"const":2,"title":"high"}],"type":"integer"},
		"label":{"type":["string","null"],"default":"a \"quoted\" label"},
		"verbose":{"type":"boolean","default":true},
		"tags":{"type":"array","items":{"type":"string"}}}}`)
	c := &h.m.screens.composer
	var got []string
	for _, f := range c.Fields()[:c.SettingsStart()] {
		got = append(got, fmt.Sprintf("%s:%s:%v:%q:%v", f.Name, f.Type, f.Required, f.Input.Placeholder, f.On))
	}
	want := []string{
		`mode:string:true:"":false`,
		`label:string:false:"a \"quoted\" label":false`,
		`level:integer:false:"":false`,
		`tags:json:false:"":false`,
		`verbose:boolean:false:"":true`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("fields:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if hint := c.Fields()[0].Hint; hint != "How. (one of: fast, slow)" {
		t.Errorf("enum hint %q", hint)
	}
	if hint := c.Fields()[2].Hint; hint != "(one of: 1 = low, 2 = high)" {
		t.Errorf("titled enum hint %q", hint)
	}
}

// Arguments the schema refuses are told in the form, in words, while they
// are typed; enter still sends them (a probe may mean to), and the status
// line says what was sent.
func TestSchemaFormWarnsAndStillSends(t *testing.T) {
	h := withTool(t, `{"type":"object","properties":{"count":{"type":"integer","minimum":5}}}`)
	h.typeText("3")
	if want := "count does not match the tool's schema: minimum: 3 is less than 5"; !strings.Contains(h.m.screens.composer.Warn(), want) {
		t.Fatalf("warning %q, want %q", h.m.screens.composer.Warn(), want)
	}
	if !strings.Contains(h.screen(), "! count does not match the tool's schema") {
		t.Fatalf("the form does not show the warning:\n%s", h.screen())
	}
	h.key("backspace")
	h.typeText("7")
	if h.m.screens.composer.Warn() != "" {
		t.Fatalf("a valid value still warned: %q", h.m.screens.composer.Warn())
	}
	h.key("backspace")
	h.typeText("4")
	n := len(h.fake.sent)
	h.key("enter")
	if len(h.fake.sent) != n+1 {
		t.Fatal("arguments the schema refuses were not sent")
	}
	if _, p := lastSent(t, h); p["arguments"].(map[string]any)["count"] != float64(4) {
		t.Fatalf("sent %v", p)
	}
	if !strings.Contains(h.screen(), "although count does not match") {
		t.Fatalf("the status line does not say what was sent:\n%s", h.screen())
	}
}

// A required property the schema lists but the form cannot show (not in
// properties) is the schema's objection too.
func TestSchemaFormChecksJSONMode(t *testing.T) {
	h := withTool(t, `{"type":"object","required":["hidden"],"properties":{"n":{"type":"number"}}}`)
	if !strings.Contains(h.m.screens.composer.Warn(), `missing properties: ["hidden"]`) {
		t.Fatalf("warning %q", h.m.screens.composer.Warn())
	}
	h.key("ctrl+e")
	if v, _ := h.m.screens.composer.JSON(); v != "{}" {
		t.Fatalf("the editor opened on %q", v)
	}
	h.key("backspace")        // the editor opens on {} with the cursor at its end
	h.typeText(`"hidden":1}`) // an edit runs the check
	if v, _ := h.m.screens.composer.JSON(); h.m.screens.composer.Warn() != "" {
		t.Fatalf("a valid JSON object warned: %q (value %q)", h.m.screens.composer.Warn(), v)
	}
}

// Schemas that would make a validator loop, recurse or crawl: the form
// is still built at once, nothing panics, and the composer still sends.
func TestSchemaFormHostileSchemas(t *testing.T) {
	hugeEnum := make([]string, 200000)
	for i := range hugeEnum {
		hugeEnum[i] = fmt.Sprintf("%q", fmt.Sprint("v", i))
	}
	deep := strings.Repeat(`{"type":"object","properties":{"x":`, 200) + `{"type":"string"}` + strings.Repeat(`}}`, 200)
	for _, c := range []struct {
		name, schema string
		// note is what the form must say about the schema ("" = nothing).
		note string
	}{
		{"self $ref", `{"$ref":"#","type":"object","properties":{"a":{"type":"string"}}}`, "its schema uses $ref"},
		{"$ref loop", `{"type":"object","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"properties":{"p":{"$ref":"#/$defs/a"}}}`, "its schema uses $ref"},
		{"allOf back to the root", `{"type":"object","allOf":[{"$ref":"#"}],"properties":{"a":{"type":"integer"}}}`, "its schema uses $ref"},
		{"dynamic ref", `{"type":"object","$dynamicAnchor":"x","properties":{"a":{"$dynamicRef":"#x"}}}`, "its schema uses $ref"},
		{"huge enum", `{"type":"object","properties":{"e":{"type":"string","enum":[` + strings.Join(hugeEnum, ",") + `]}}}`, "its schema is too large"},
		{"deep", deep, "its schema is nested too deep"},
		{"not an object", `{"type":"array","items":{"type":"string"}}`, "not an object schema (type array)"},
		{"a string", `"object"`, "could not be read"},
		{"bad type", `{"type":"object","properties":{"a":{"type":5}}}`, "could not be read"},
		{"unknown type", `{"type":"object","properties":{"a":{"type":"strange"}}}`, ""},
		{"bad pattern", `{"type":"object","properties":{"a":{"type":"string","pattern":"(("}}}`, "the schema is not valid"},
		{"false", `false`, ""},
		{"null", `null`, ""},
		{"unknown draft", `{"$schema":"https://example.com/my-draft","type":"object"}`, "draft is not one inflight knows"},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			h := withTool(t, c.schema)
			h.typeText("1")
			if c.note != "" && !strings.Contains(h.m.screens.composer.Tools()[0].Form.Note, c.note) {
				t.Errorf("note %q, want %q", h.m.screens.composer.Tools()[0].Form.Note, c.note)
			}
			if c.note != "" && !strings.Contains(h.screen(), c.note) {
				t.Errorf("the form does not say %q:\n%s", c.note, h.screen())
			}
			n := len(h.fake.sent)
			h.key("ctrl+s")
			if len(h.fake.sent) != n+1 && h.m.screens.composer.Err() == "" {
				t.Fatalf("not sent, and no error:\n%s", h.screen())
			}
			// How long it took is logged, not judged: the bounds that keep
			// a form linear are counted in ui/schemaform (bound_test.go).
			t.Logf("built, typed in and sent in %s", time.Since(start).Round(time.Millisecond))
		})
	}
}

// The enum a hint lists is bounded: a huge one shows its first values and
// how many more there are.
func TestSchemaFormHugeEnumHint(t *testing.T) {
	vals := make([]string, 1000)
	for i := range vals {
		vals[i] = fmt.Sprint(i)
	}
	h := withTool(t, `{"type":"object","properties":{"e":{"type":"integer","enum":[`+strings.Join(vals, ",")+`]}}}`)
	hint := h.m.screens.composer.Fields()[0].Hint
	if !strings.HasPrefix(hint, "(one of: 0, 1, 2,") || !strings.HasSuffix(hint, "11, … 988 more)") {
		t.Fatalf("hint %q", hint)
	}
}
