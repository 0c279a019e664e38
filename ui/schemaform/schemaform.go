// Package schemaform reads a JSON schema into a form (its parameters, and
// the resolved schema that checks the arguments typed into it) and holds
// the form's inputs. The composer builds a tool call's form with it, the
// answer screen an elicitation's.
package schemaform

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Form is an input schema as a form uses it, read once when it arrives
// (not on every frame): the form's parameters, and the resolved schema
// that checks the arguments before they are sent.
type Form struct {
	Params []Param
	// check validates arguments; nil when the schema is not one inflight
	// validates (see checkable), which Note then says.
	check *jsonschema.Resolved
	// Note says, in words, what is unusual about the schema ("" when
	// nothing is). Like every text here it is sanitised already.
	Note string
}

// Param is one top-level property of the schema. Its strings are the
// server's, sanitised for one line (the name is sanitised where it is
// drawn, since it is also the key sent).
type Param struct {
	Name     string
	Type     string // string, integer, number, boolean or json
	Required bool
	// Default is the default as the placeholder shows it; DefaultJSON is
	// the default itself (nil: none), which an answer sends for a field
	// left empty.
	Default     string
	DefaultJSON json.RawMessage
	Hint        string
	// Choices are the values the property allows, when it lists them
	// (an enum, enumNames giving their titles, or a oneOf/anyOf of
	// consts with titles): its field is a picker. Multi: the property is
	// an array of such values, its field a set of checkboxes.
	Choices []Choice
	Multi   bool
}

// Choice is one value a property allows: Value is the JSON sent, Title
// the words shown for it (the value itself when the schema gives none),
// sanitised for one line.
type Choice struct {
	Value json.RawMessage
	Title string
}

// Bounds on what a server's schema can make the composer do. A tools/list
// answer is bounded by the client's message size, but a schema within it
// can still be wide (an enum of a million values) or deep.
const (
	// maxEnumShown is how many allowed values a field's hint lists.
	maxEnumShown = 12
	// maxSchemaNodes and maxSchemaDepth bound the schemas inflight
	// validates against; a larger one is used for the form only.
	maxSchemaNodes = 5000
	maxSchemaDepth = 32
	// maxRefHops bounds how many $ref a property's type is followed
	// through for the form (a loop of them ends there).
	maxRefHops = 8
	// maxParams bounds the form's fields.
	maxParams = 200
	// maxChoices bounds a picker: a property that allows more values is
	// typed, its hint listing the first of them.
	maxChoices = 500
)

// Read reads a tool's input schema. A schema that cannot be read, or
// that is not an object schema, gives no fields and a note; the arguments
// can still be typed as JSON (ctrl+e). Nothing a schema holds can make this
// loop, recurse without bound or panic: see checkable and deref.
func Read(raw json.RawMessage, line func(string) string) Form {
	if len(raw) == 0 {
		return Form{}
	}
	if !json.Valid(raw) {
		var v any
		err := json.Unmarshal(raw, &v)
		return Form{Note: line("its input schema could not be read (" + err.Error() + "): type the arguments as JSON (ctrl+e)")}
	}
	raw, deeper := cutDeep(raw, maxReadDepth)
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return Form{Note: line("its input schema could not be read (" + err.Error() + "): type the arguments as JSON (ctrl+e)")}
	}
	if t := schemaType(&s); t != "" && t != "object" {
		return Form{Note: line("its input schema is not an object schema (type " + t + "): type the arguments as JSON (ctrl+e)")}
	}
	f := Form{Params: schemaParams(&s, line)}
	if len(s.Properties) > maxParams {
		f.Note = fmt.Sprintf("the schema has %d properties: the form shows the first %d, ctrl+e edits them all as JSON", len(s.Properties), maxParams)
	}
	if deeper > 0 {
		// What was cut allows anything: the schema read is not the
		// server's, so nothing is checked against it.
		f.Note = joinNote(f.Note, fmt.Sprintf("arguments are not checked before sending: its schema is nested too deep (%d levels past the %d read not shown)", deeper, maxReadDepth))
		return f
	}
	if why := checkable(&s); why != "" {
		f.Note = joinNote(f.Note, "arguments are not checked before sending: "+why)
		return f
	}
	resolved, err := s.Resolve(nil)
	if err != nil {
		f.Note = joinNote(f.Note, line("arguments are not checked before sending: the schema is not valid ("+err.Error()+")"))
		return f
	}
	f.check = resolved
	return f
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// schemaParams lists the schema's top-level properties, required ones
// first, then by name: a stable, useful order.
func schemaParams(root *jsonschema.Schema, line func(string) string) []Param {
	required := map[string]bool{}
	for _, r := range root.Required {
		required[r] = true
	}
	names := make([]string, 0, len(root.Properties))
	for n := range root.Properties {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if required[names[i]] != required[names[j]] {
			return required[names[i]]
		}
		return names[i] < names[j]
	})
	if len(names) > maxParams {
		names = names[:maxParams]
	}
	out := make([]Param, 0, len(names))
	for _, n := range names {
		p := deref(root, root.Properties[n])
		typ := schemaType(p)
		switch typ {
		case "string", "integer", "number", "boolean":
		default:
			typ = "json"
		}
		hint := p.Description
		if hint == "" {
			hint = p.Title
		}
		if e := enumText(p); e != "" {
			hint = strings.TrimSpace(hint + " (one of: " + e + ")")
		}
		prm := Param{Name: n, Type: typ, Required: required[n], Default: line(defaultText(p.Default)), DefaultJSON: p.Default, Hint: line(hint)}
		prm.Choices = choices(p, line)
		if typ == "json" && schemaType(p) == "array" && p.Items != nil {
			// A multi-select: an array whose items list their values.
			items := deref(root, p.Items)
			if prm.Choices = choices(items, line); len(prm.Choices) > 0 {
				prm.Type, prm.Multi = "array", true
				if e := enumText(items); e != "" {
					prm.Hint = line(strings.TrimSpace(hint + " (any of: " + e + ")"))
				}
			}
		}
		out = append(out, prm)
	}
	return out
}

// schemaType is a schema's one type: "type": "string", or a list of one
// type and "null" (an optional value as generators write it); "" when the
// schema names none or several.
func schemaType(s *jsonschema.Schema) string {
	if s == nil {
		return ""
	}
	if s.Type != "" {
		return s.Type
	}
	var one string
	for _, t := range s.Types {
		if t == "null" {
			continue
		}
		if one != "" {
			return ""
		}
		one = t
	}
	return one
}

// deref follows a property's local $ref ("#/$defs/name" or
// "#/definitions/name", as generators write them) to the schema that says
// its type, for the form; at most maxRefHops of them, so a loop ends.
func deref(root, s *jsonschema.Schema) *jsonschema.Schema {
	if s == nil {
		return &jsonschema.Schema{}
	}
	for i := 0; i < maxRefHops && s.Ref != ""; i++ {
		var next *jsonschema.Schema
		switch {
		case s.Ref == "#":
			next = root
		case strings.HasPrefix(s.Ref, "#/$defs/"):
			next = root.Defs[strings.TrimPrefix(s.Ref, "#/$defs/")]
		case strings.HasPrefix(s.Ref, "#/definitions/"):
			next = root.Definitions[strings.TrimPrefix(s.Ref, "#/definitions/")]
		}
		if next == nil {
			break
		}
		s = next
	}
	return s
}

// enumText lists the values a property allows: its enum, or a oneOf/anyOf
// of consts (how a schema gives each value a title), at most maxEnumShown
// of them.
func enumText(s *jsonschema.Schema) string {
	var vals []string
	total := len(s.Enum)
	for _, e := range s.Enum {
		if len(vals) == maxEnumShown {
			break
		}
		vals = append(vals, valueText(e))
	}
	if total == 0 {
		alts := s.OneOf
		if len(alts) == 0 {
			alts = s.AnyOf
		}
		for _, a := range alts {
			if a == nil || a.Const == nil {
				return "" // not a list of values
			}
		}
		total = len(alts)
		for _, a := range alts {
			if len(vals) == maxEnumShown {
				break
			}
			v := valueText(*a.Const)
			if a.Title != "" && a.Title != v {
				v += " = " + a.Title
			}
			vals = append(vals, v)
		}
	}
	if total > len(vals) {
		vals = append(vals, fmt.Sprintf("… %d more", total-len(vals)))
	}
	return strings.Join(vals, ", ")
}

// choices are the values s allows with their titles, for a picker: its
// enum (titled by enumNames when it has them, as older schemas do), or a
// oneOf/anyOf of consts; nil when it lists none, or too many to pick from.
func choices(s *jsonschema.Schema, line func(string) string) []Choice {
	var out []Choice
	add := func(v any, title string) {
		raw, err := json.Marshal(v)
		if err != nil {
			return
		}
		if title == "" {
			title = valueText(v)
		}
		out = append(out, Choice{Value: raw, Title: line(title)})
	}
	if len(s.Enum) > 0 {
		if len(s.Enum) > maxChoices {
			return nil
		}
		names, _ := s.Extra["enumNames"].([]any)
		for i, e := range s.Enum {
			title := ""
			if i < len(names) {
				title, _ = names[i].(string)
			}
			add(e, title)
		}
		return out
	}
	alts := s.OneOf
	if len(alts) == 0 {
		alts = s.AnyOf
	}
	if len(alts) == 0 || len(alts) > maxChoices {
		return nil
	}
	for _, a := range alts {
		if a == nil || a.Const == nil {
			return nil // not a list of values
		}
	}
	for _, a := range alts {
		add(*a.Const, a.Title)
	}
	return out
}

// valueText writes a JSON value as a person reads it: strings bare.
func valueText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// defaultText is a default as a placeholder shows it: a string bare,
// anything else as its JSON.
func defaultText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// checkable says why inflight does not validate against a schema ("" when
// it does). jsonschema-go follows a $ref wherever it leads while
// validating, with no bound: a schema whose $ref comes back to itself
// before the value gets any deeper ({"$ref": "#"}) recurses until the
// stack overflows, which kills the program (no recover catches it). So
// only schemas without references are validated, and only small ones.
func checkable(root *jsonschema.Schema) string {
	nodes := 0
	var why string
	var walk func(s *jsonschema.Schema, depth int) bool
	walk = func(s *jsonschema.Schema, depth int) bool {
		if s == nil {
			return true
		}
		// An enum is compared value by value on every check.
		nodes += 1 + len(s.Enum)
		switch {
		case s.Ref != "" || s.DynamicRef != "":
			why = "its schema uses $ref"
		case nodes > maxSchemaNodes:
			why = "its schema is too large"
		case depth > maxSchemaDepth:
			why = "its schema is nested too deep"
		case s.Schema != "" && !knownDraft(s.Schema):
			why = "its schema's draft is not one inflight knows"
		}
		if why != "" {
			return false
		}
		for _, c := range subschemas(s) {
			if !walk(c, depth+1) {
				return false
			}
		}
		return true
	}
	walk(root, 0)
	return why
}

// knownDraft reports whether jsonschema-go validates a $schema's draft.
func knownDraft(uri string) bool {
	switch strings.TrimSuffix(uri, "#") {
	case "http://json-schema.org/draft-07/schema", "https://json-schema.org/draft-07/schema", "https://json-schema.org/draft/2020-12/schema":
		return true
	}
	return false
}

// subschemas are the schemas s holds directly.
func subschemas(s *jsonschema.Schema) []*jsonschema.Schema {
	out := []*jsonschema.Schema{s.Items, s.AdditionalItems, s.Contains, s.UnevaluatedItems, s.AdditionalProperties,
		s.PropertyNames, s.UnevaluatedProperties, s.Not, s.If, s.Then, s.Else, s.ContentSchema}
	out = append(out, s.PrefixItems...)
	out = append(out, s.ItemsArray...)
	out = append(out, s.AllOf...)
	out = append(out, s.AnyOf...)
	out = append(out, s.OneOf...)
	for _, m := range []map[string]*jsonschema.Schema{s.Defs, s.Definitions, s.DependencySchemas, s.Properties, s.PatternProperties, s.DependentSchemas} {
		for _, c := range m {
			out = append(out, c)
		}
	}
	return out
}

// Validate checks arguments against the schema; the error says what is
// wrong in words, the deepest reason first.
func (f *Form) Validate(args map[string]json.RawMessage) error {
	if f.check == nil {
		return nil
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return err
	}
	var instance map[string]any
	if err := json.Unmarshal(raw, &instance); err != nil {
		return err
	}
	if err := f.check.Validate(instance); err != nil {
		return errors.New(validationText(err.Error()))
	}
	return nil
}

// validationText turns jsonschema-go's error ("validating root: validating
// /properties/steps: type: 1.5 has type \"number\", want \"integer\"")
// into words: which argument, and what is wrong with it.
func validationText(msg string) string {
	where := ""
	for {
		rest, ok := strings.CutPrefix(msg, "validating ")
		if !ok {
			break
		}
		path, tail, ok := strings.Cut(rest, ": ")
		if !ok {
			break
		}
		if p, ok := strings.CutPrefix(path, "/properties/"); ok {
			where = strings.ReplaceAll(p, "/properties/", ".")
		}
		msg = tail
	}
	msg = numbersInWords(msg)
	if where == "" {
		return "the arguments do not match the tool's schema: " + msg
	}
	return where + " does not match the tool's schema: " + msg
}

// numericKeywords are the keywords whose messages jsonschema-go writes with
// exact fractions and fixed decimals ("minimum: 3/1 is less than 5.000000").
var numericKeywords = []string{"minimum:", "maximum:", "exclusiveMinimum:", "exclusiveMaximum:", "multipleOf:"}

// fractionOrDecimal is a number as those messages write it.
var fractionOrDecimal = regexp.MustCompile(`-?\d+(/\d+|\.\d+)`)

// numbersInWords writes the numbers of a numeric keyword's message as a
// person does ("minimum: 3 is less than 5"); any other message is left as
// it is, since its values may be the user's text.
func numbersInWords(msg string) string {
	if !slices.ContainsFunc(numericKeywords, func(k string) bool { return strings.HasPrefix(msg, k) }) {
		return msg
	}
	return fractionOrDecimal.ReplaceAllStringFunc(msg, func(n string) string {
		r, ok := new(big.Rat).SetString(n)
		if !ok {
			return n
		}
		if r.IsInt() {
			return r.Num().String()
		}
		f, _ := r.Float64()
		return strconv.FormatFloat(f, 'g', -1, 64)
	})
}
