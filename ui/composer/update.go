package composer

import (
	"encoding/json"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"inflight/keymap"
	"inflight/termsafe"
	"inflight/ui/look"
	"inflight/ui/screen"
)

// Update handles a message while the composer is open: a key, a paste, the
// wheel on a list, or what an input asked for (a cursor's blink). It never
// leaves a key unused: every key means something here, or the composer
// says why it does nothing.
func (c Model) Update(env screen.Env, msg tea.Msg) (Model, screen.Action) {
	act := c.update(env, msg)
	return c, act
}

// update handles a message while the composer is open.
func (c *Model) update(env screen.Env, msg tea.Msg) screen.Action {
	if wm, ok := msg.(tea.MouseWheelMsg); ok {
		if c.step == stepPick {
			c.pickers[c.kind].move(c.items(c.kind), wheelDelta(wm))
		}
		return nil
	}
	k := c.keys
	kp, isKey := msg.(tea.KeyPressMsg)
	if !isKey {
		if _, ok := msg.(tea.PasteMsg); ok {
			// The note is about the last key or paste: this one says
			// its own, if any.
			c.note = ""
		}
		// A paste, or what an input asked for (a cursor's blink): to the
		// input that has the focus, as a key would go.
		return run(c.toInput(msg))
	}
	c.note = ""
	switch {
	case key.Matches(kp, k.Back):
		switch {
		case c.step == stepPick && c.pickers[c.kind].filter.Value() != "":
			c.pickers[c.kind].filter.SetValue("")
		case c.step == stepForm && c.backToPicker(env):
			c.step, c.err, c.warn = stepPick, "", ""
		default:
			return screen.Close{}
		}
		return nil
	case (key.Matches(kp, k.NextKind) || key.Matches(kp, k.PrevKind)) && c.kindKeys():
		d := 1
		if key.Matches(kp, k.PrevKind) {
			d = -1
		}
		return c.switchKind(env, d)
	case c.step == stepPick:
		return c.updatePick(env, kp)
	case c.kindRow:
		return c.updateKindRow(env, kp)
	}
	return c.updateForm(env, kp)
}

// updatePick handles a key on a list: ↑/↓ select, enter chooses, ctrl+s
// sends with the defaults, and anything else edits the filter.
func (c *Model) updatePick(env screen.Env, kp tea.KeyPressMsg) screen.Action {
	k := c.keys
	p := &c.pickers[c.kind]
	items := c.items(c.kind)
	switch {
	case key.Matches(kp, k.Up):
		p.move(items, -1)
		return nil
	case key.Matches(kp, k.Down):
		p.move(items, 1)
		return nil
	case key.Matches(kp, k.Select), key.Matches(kp, k.Send):
		i := p.selected(items)
		if i < 0 {
			if len(items) == 0 {
				c.note = "there is nothing to choose: use " + keymap.Key(k.PrevKind) + " or " + keymap.Key(k.NextKind) + " for another kind of request"
			} else {
				c.note = fmt.Sprintf("nothing matches %q: backspace widens the filter", p.filter.Value())
			}
			return nil
		}
		p.sel = i
		cmd := run(c.choose(env, i))
		if key.Matches(kp, k.Send) {
			return batch(cmd, c.send())
		}
		return cmd
	case key.Matches(kp, k.NextField), key.Matches(kp, k.PrevField):
		tab := k.NextField
		if key.Matches(kp, k.PrevField) {
			tab = k.PrevField
		}
		c.note = keymap.Key(tab) + " does nothing on a list: " + keymap.Key(k.Select) + " chooses, " + keymap.Keys(k.Up, k.Down) + " move"
		return nil
	}
	return run(p.update(items, kp))
}

// choose opens the form for item i of the kind's list.
func (c *Model) choose(env screen.Env, i int) tea.Cmd {
	typed := c.pickers[c.kind].filter.Value()
	c.res, c.prompt = nil, nil
	switch c.kind {
	case KindResource:
		nr, nt := len(c.cat.resources), len(c.cat.templates)
		switch {
		case i < nr:
			r := c.cat.resources[i]
			c.res = &r
		case i < nr+nt:
			r := c.cat.templates[i-nr]
			c.res = &r
		}
	case KindPrompt:
		if i < len(c.cat.prompts) {
			p := c.cat.prompts[i]
			c.prompt = &p
		}
	}
	cmd := c.buildForm(env)
	// The filter's text is what the user typed: it becomes the typed URI or
	// prompt name rather than vanish.
	if (c.kind == KindResource && c.res == nil) || (c.kind == KindPrompt && c.prompt == nil) {
		if typed = strings.TrimSpace(typed); typed != "" {
			c.fields[0].Input.SetValue(typed)
			c.touched = true
		}
	}
	return cmd
}

// updateKindRow handles a key while the focus is on the row of kinds.
func (c *Model) updateKindRow(env screen.Env, kp tea.KeyPressMsg) screen.Action {
	k := c.keys
	switch {
	case key.Matches(kp, k.Send), key.Matches(kp, k.Select):
		return c.send()
	case key.Matches(kp, k.NextField), key.Matches(kp, k.Down):
		return run(c.focusField(0))
	case key.Matches(kp, k.PrevField), key.Matches(kp, k.Up):
		return run(c.focusField(len(c.fields) - 1))
	case key.Matches(kp, k.JSONMode) && c.kind == KindTool:
		c.kindRow = false
		return run(c.toggleJSON())
	}
	if kp.Text != "" {
		// Typing on the row of kinds types into the first field that
		// takes text, rather than nowhere.
		for i := range c.fields {
			if !c.fields[i].IsBool {
				cmd := run(c.focusField(i))
				c.fields[i].Input.CursorEnd()
				return batch(cmd, c.updateForm(env, kp))
			}
		}
	}
	c.note = c.kindWord() + " · " + keymap.Keys(k.Down, k.NextField) + " to the fields · " + keymap.Key(k.Select) + " sends"
	return nil
}

// updateForm handles a key in the form or the JSON editor.
func (c *Model) updateForm(env screen.Env, kp tea.KeyPressMsg) screen.Action {
	k := c.keys
	switch {
	case key.Matches(kp, k.AsTask):
		c.note = c.toggleTask()
		return nil
	case key.Matches(kp, k.Send), key.Matches(kp, k.Select) && !c.jsonMode:
		return c.send()
	case key.Matches(kp, k.JSONMode):
		if c.kind == KindTool {
			return run(c.toggleJSON())
		}
		c.note = keymap.Key(k.JSONMode) + " edits a tool call's arguments as JSON; this kind's form is all there is"
		return nil
	case (key.Matches(kp, k.NextField) || key.Matches(kp, k.Down)) && !c.jsonMode:
		if c.focus == len(c.fields)-1 {
			c.toKindRow()
			return nil
		}
		return run(c.focusField(c.focus + 1))
	case (key.Matches(kp, k.PrevField) || key.Matches(kp, k.Up)) && !c.jsonMode:
		if c.focus == 0 {
			c.toKindRow()
			return nil
		}
		return run(c.focusField(c.focus - 1))
	case !c.jsonMode && c.focus < len(c.fields) && key.Matches(kp, k.Clear):
		c.fields[c.focus].Clear()
		c.touched, c.err = true, ""
		c.checkArgs()
		return nil
	case !c.jsonMode && c.focus < len(c.fields) && c.fields[c.focus].IsChoice() && c.choiceKey(kp):
		return nil
	case !c.jsonMode && c.focus < len(c.fields) && c.fields[c.focus].IsBool:
		f := &c.fields[c.focus]
		if key.Matches(kp, k.Toggle) {
			f.On = !f.On
			c.touched = true
			c.checkArgs()
			return nil
		}
		if kp.Text != "" {
			c.note = fmt.Sprintf("%q was not typed: %s is a checkbox (%s toggles it, %s moves on)", kp.Text, env.Line(f.Name), keymap.Key(k.Toggle), keymap.Key(k.NextField))
		}
		return nil
	}
	return run(c.toInput(kp))
}

// choiceKey moves or ticks the focused picker or multi-select, and
// reports whether kp did (←/→ on typed text move its cursor instead).
func (c *Model) choiceKey(kp tea.KeyPressMsg) bool {
	k := c.keys
	f := &c.fields[c.focus]
	switch {
	case key.Matches(kp, k.PrevKind, k.NextKind) && f.Input.Value() == "":
		d := 1
		if key.Matches(kp, k.PrevKind) {
			d = -1
		}
		f.Move(d)
	case f.Multi && key.Matches(kp, k.Toggle):
		f.Toggle()
	default:
		return false
	}
	c.touched, c.err = true, ""
	c.checkArgs()
	return true
}

// toInput hands a message to the input that has the focus.
func (c *Model) toInput(msg tea.Msg) tea.Cmd {
	switch {
	case c.step == stepPick:
		return c.pickers[c.kind].update(c.items(c.kind), msg)
	case c.jsonMode:
		before := c.json.Value()
		var cmd tea.Cmd
		c.json, cmd = c.json.Update(msg)
		if c.json.Value() != before {
			c.touched = true
		}
		c.err = ""
		if _, err := jsonObject(c.json.Value()); err != nil {
			c.err = err.Error()
		}
		c.checkArgs()
		return cmd
	case c.kindRow:
		if _, ok := msg.(tea.PasteMsg); ok {
			for i := range c.fields {
				if !c.fields[i].IsBool {
					return tea.Batch(c.focusField(i), c.toInput(msg))
				}
			}
		}
		return nil
	case c.focus < len(c.fields) && c.fields[c.focus].IsBool:
		if _, ok := msg.(tea.PasteMsg); ok {
			c.note = "the paste was not typed: " + c.fields[c.focus].Name + " is a checkbox (" + keymap.Key(c.keys.NextField) + " moves to a text field)"
		}
		return nil
	case c.focus < len(c.fields):
		f := &c.fields[c.focus]
		before := f.Input.Value()
		cmd := f.Edit(msg)
		if f.Input.Value() != before {
			c.touched = true
			c.err = ""
		}
		c.checkArgs()
		return cmd
	}
	return nil
}

// toggleJSON switches between the form and the JSON editor, carrying the
// arguments across.
func (c *Model) toggleJSON() tea.Cmd {
	if !c.jsonMode {
		args, err := c.formArgs()
		if err != nil {
			c.err = err.Error()
			return nil
		}
		b, _ := json.MarshalIndent(args, "", "  ")
		c.openJSON(b)
		return c.json.Focus()
	}
	args, err := jsonObject(c.json.Value())
	if err != nil {
		c.err = "fix the JSON first: " + err.Error()
		return nil
	}
	c.fillForm(args)
	c.jsonMode = false
	c.checkArgs()
	return c.focusField(0)
}

// openJSON opens the JSON editor on a tool call's arguments.
func (c *Model) openJSON(b []byte) {
	ta := look.NewTextArea()
	ta.ShowLineNumbers = false
	ta.SetWidth(60)
	ta.SetHeight(8)
	// The keys are the schema's property names: Go's encoder leaves
	// their C1 and bidi controls raw, so they are escaped for the
	// editor (the JSON means the same).
	ta.SetValue(string(termsafe.EscapeJSON(b)))
	c.json = ta
	c.jsonMode = true
	c.kindRow = false
	c.err = ""
	c.checkArgs()
}

// fillForm sets the kind's own fields from a JSON object of arguments.
func (c *Model) fillForm(args map[string]json.RawMessage) {
	for i := 0; i < c.settingsStart(); i++ {
		f := &c.fields[i]
		v, ok := args[f.Name]
		if f.IsBool {
			f.On = ok && string(v) == "true"
			continue
		}
		if !ok {
			f.Input.SetValue("")
			f.Pick, f.Ticked = -1, nil
			continue
		}
		f.SetValue(v)
	}
}
