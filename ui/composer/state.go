package composer

import "inflight/ui/schemaform"

// What the composer holds now, read by the root (its tools, for the
// list's first steps) and by tests that drive the composer through the
// root and check what a key did.

// Tools are the tools the server listed (nil before tools/list answers).
func (c Model) Tools() []Tool { return c.tools }

// Kind is the kind being composed.
func (c Model) Kind() Kind { return c.kind }

// Picking reports whether the composer shows the kind's list rather than
// its form.
func (c Model) Picking() bool { return c.step == stepPick }

// Tool is the tool the tool list has selected.
func (c Model) Tool() (Tool, bool) { return c.tool() }

// Selection is the index of the row kind's list has selected.
func (c Model) Selection(kind Kind) int { return c.pickers[kind].sel }

// Filter is the text that filters kind's list.
func (c Model) Filter(kind Kind) string { return c.pickers[kind].filter.Value() }

// Prompt is the name of the prompt whose form is shown ("" when the
// prompt's name is typed).
func (c Model) Prompt() string {
	if c.prompt == nil {
		return ""
	}
	return c.prompt.Name
}

// Fields are the form's inputs: the kind's own, then from SettingsStart
// the request's settings.
func (c Model) Fields() []schemaform.Field { return c.fields }

// SettingsStart is the index of the first setting in Fields.
func (c Model) SettingsStart() int { return c.settingsStart() }

// Focus is the index of the field that has the focus (unless the row of
// kinds has it: OnKindRow).
func (c Model) Focus() int { return c.focus }

// OnKindRow reports whether the focus is on the row of kinds.
func (c Model) OnKindRow() bool { return c.kindRow }

// JSON is the text of the JSON editor, and whether it is open.
func (c Model) JSON() (string, bool) { return c.json.Value(), c.jsonMode }

// Err is why the request was not sent ("" when nothing stopped it).
func (c Model) Err() string { return c.err }

// Warn is why the tool's schema refuses the arguments as they stand.
func (c Model) Warn() string { return c.warn }

// Note is why the last key or paste did nothing.
func (c Model) Note() string { return c.note }
