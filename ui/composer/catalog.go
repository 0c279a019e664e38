package composer

import (
	"encoding/json"
	"fmt"
	"strings"

	"inflight/event"
	"inflight/ui/screen"
	"inflight/wire"
)

// The composer's pickers for resources and prompts are fed by the server's
// own lists, which the composer asks for the first time the user opens the
// kind on a connection (tools/list goes out on connecting, as before): a
// real request each, shown in the list like any other.

// resourceInfo is one entry of resources/list, or of
// resources/templates/list when template is set (strings raw; sanitise to
// show).
type resourceInfo struct {
	URI, Name, Title, Description, MIMEType string
	// template is the URI template; vars its variables, in order.
	template string
	vars     []templateVar
}

// promptInfo is one entry of prompts/list.
type promptInfo struct {
	Name, Title, Description string
	Args                     []promptArg
}

type promptArg struct {
	Name, Description string
	Required          bool
}

// catalogList names the lists the composer fetches.
type catalogList uint8

const (
	listResources catalogList = iota
	listTemplates
	listPrompts
	numLists
)

var listMethods = [numLists]string{wire.MethodResourcesList, "resources/templates/list", wire.MethodPromptsList}

// maxListPages bounds how many pages of one list the composer follows.
const maxListPages = 10

// listFetch is what is known of one list on this connection.
type listFetch struct {
	asked bool
	// req is the request of the page in flight (or the last one).
	req   wire.ID
	pages int
	// err is the server's error for the list, raw.
	err string
	// more: a page was left unfetched (maxListPages).
	more bool
}

// catalog holds the lists the composer fetched on this connection.
type catalog struct {
	fetch     [numLists]listFetch
	resources []resourceInfo
	templates []resourceInfo
	prompts   []promptInfo
}

// capability says whether the server's capabilities object declares name:
// yes, no, or unknown when the connection brought no capabilities (a modern
// server that was not asked server/discover).
func capability(info event.ConnInfo, name string) (declared, known bool) {
	if len(info.Capabilities) == 0 {
		return false, false
	}
	var caps map[string]json.RawMessage
	if json.Unmarshal(info.Capabilities, &caps) != nil {
		return false, false
	}
	v, ok := caps[name]
	return ok && string(v) != "null", true
}

// lacks says, in words, that the server declares no capability for kind's
// lists ("" when it does or nothing is known).
func (c *Model) lacks(env screen.Env, kind Kind) string {
	name := map[Kind]string{KindResource: "resources", KindPrompt: "prompts"}[kind]
	if name == "" {
		return ""
	}
	info, _ := env.Tracker.Conn()
	if declared, known := capability(info, name); known && !declared {
		return fmt.Sprintf("this server declares no %s capability, so there is no list to pick from", name)
	}
	return ""
}

// fetchFor asks for the lists kind picks from, once per connection.
func (c *Model) fetchFor(env screen.Env, kind Kind) screen.Action {
	if c.lacks(env, kind) != "" {
		return nil
	}
	var lists []catalogList
	switch kind {
	case KindResource:
		lists = []catalogList{listResources, listTemplates}
	case KindPrompt:
		lists = []catalogList{listPrompts}
	}
	var acts []screen.Action
	for _, l := range lists {
		if f := &c.cat.fetch[l]; !f.asked {
			f.asked = true
			acts = append(acts, fetchPage(l, ""))
		}
	}
	return batch(acts...)
}

// fetchPage asks for the page of list l at cursor ("": the first).
func fetchPage(l catalogList, cursor string) Fetch {
	var params json.RawMessage
	if cursor != "" {
		params, _ = json.Marshal(map[string]string{"cursor": cursor})
	}
	return Fetch{Method: listMethods[l], Params: params, list: l}
}

// Asked tells the composer that request id asks the page f asked for.
func (c Model) Asked(f Fetch, id wire.ID) Model {
	lf := &c.cat.fetch[f.list]
	lf.req = id
	lf.pages++
	return c
}

// fetching reports whether a page of one of lists is still in flight.
func (c *Model) fetching(env screen.Env, lists ...catalogList) bool {
	for _, l := range lists {
		f := c.cat.fetch[l]
		if !f.asked || f.req.IsZero() {
			continue
		}
		if r, ok := env.Tracker.Get(f.req); ok && r.IsActive() {
			return true
		}
	}
	return false
}

// Awaits reports whether the composer waits for the answer to request id
// (its tools/list, or a page of one of its lists): the root gives it only
// those, so that a flood of progress costs it nothing.
func (c *Model) Awaits(id wire.ID) bool {
	if id.IsZero() {
		return false
	}
	if id == c.toolsReq {
		return true
	}
	for l := catalogList(0); l < numLists; l++ {
		if f := &c.cat.fetch[l]; f.asked && f.req == id {
			return true
		}
	}
	return false
}

// Received takes a message the server sent: the answer to tools/list
// lists the tools; the answer to one of the composer's list requests
// adds a page, and may ask for the next (a Fetch).
func (c Model) Received(env screen.Env, ev *event.Event) (Model, screen.Action) {
	if !c.toolsReq.IsZero() && ev.RequestID == c.toolsReq && ev.Msg.Kind == wire.KindResult {
		c.setTools(parseTools(ev.Msg.Result, env.Line))
	}
	act := c.received(ev)
	return c, act
}

// received takes the answer to one of the composer's list requests.
func (c *Model) received(ev *event.Event) screen.Action {
	if ev.RequestID.IsZero() || !ev.Msg.IsResponse() {
		return nil
	}
	for l := catalogList(0); l < numLists; l++ {
		f := &c.cat.fetch[l]
		if !f.asked || f.req != ev.RequestID {
			continue
		}
		if ev.Msg.Kind == wire.KindError {
			if e := ev.Msg.Error; e != nil {
				f.err = fmt.Sprintf("%s failed: error %d %s", listMethods[l], e.Code, e.Message)
			}
			return nil
		}
		next := c.cat.add(l, ev.Msg.Result)
		if next == "" {
			return nil
		}
		if f.pages >= maxListPages {
			f.more = true
			return nil
		}
		return fetchPage(l, next)
	}
	return nil
}

// add appends a page of list l and returns its nextCursor.
func (cat *catalog) add(l catalogList, result json.RawMessage) string {
	var page struct {
		NextCursor string `json:"nextCursor"`
		Resources  []struct {
			URI         string `json:"uri"`
			Name        string `json:"name"`
			Title       string `json:"title"`
			Description string `json:"description"`
			MIMEType    string `json:"mimeType"`
		} `json:"resources"`
		Templates []struct {
			URITemplate string `json:"uriTemplate"`
			Name        string `json:"name"`
			Title       string `json:"title"`
			Description string `json:"description"`
			MIMEType    string `json:"mimeType"`
		} `json:"resourceTemplates"`
		Prompts []struct {
			Name        string `json:"name"`
			Title       string `json:"title"`
			Description string `json:"description"`
			Arguments   []struct {
				Name        string `json:"name"`
				Description string `json:"description"`
				Required    bool   `json:"required"`
			} `json:"arguments"`
		} `json:"prompts"`
	}
	if json.Unmarshal(result, &page) != nil {
		return ""
	}
	switch l {
	case listResources:
		for _, r := range page.Resources {
			cat.resources = append(cat.resources, resourceInfo{URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType})
		}
	case listTemplates:
		for _, r := range page.Templates {
			cat.templates = append(cat.templates, resourceInfo{template: r.URITemplate, vars: templateVars(r.URITemplate), Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType})
		}
	case listPrompts:
		for _, p := range page.Prompts {
			pi := promptInfo{Name: p.Name, Title: p.Title, Description: p.Description}
			for _, a := range p.Arguments {
				pi.Args = append(pi.Args, promptArg{Name: a.Name, Description: a.Description, Required: a.Required})
			}
			cat.prompts = append(cat.prompts, pi)
		}
	}
	return page.NextCursor
}

// templateVar is one variable of a URI template (RFC 6570).
type templateVar struct {
	name string
	// op is the expression's operator: 0, '+', '#', '.', '/', ';', '?', '&'.
	op byte
}

// optional reports whether an empty value is a normal use of the
// variable: a query parameter may be left out, a path segment not.
func (v templateVar) optional() bool { return v.op == '?' || v.op == '&' || v.op == ';' }

// maxTemplateVars bounds the fields a template makes.
const maxTemplateVars = 50

// templateVars lists a template's variables, each once, in order.
func templateVars(t string) []templateVar {
	var out []templateVar
	seen := map[string]bool{}
	for _, expr := range templateExprs(t) {
		op, names := splitExpr(expr)
		for _, n := range names {
			if n == "" || seen[n] || len(out) == maxTemplateVars {
				continue
			}
			seen[n] = true
			out = append(out, templateVar{name: n, op: op})
		}
	}
	return out
}

// templateExprs are the {…} expressions of a template, without braces.
func templateExprs(t string) []string {
	var out []string
	for {
		i := strings.IndexByte(t, '{')
		if i < 0 {
			return out
		}
		j := strings.IndexByte(t[i:], '}')
		if j < 0 {
			return out
		}
		out = append(out, t[i+1:i+j])
		t = t[i+j+1:]
	}
}

// splitExpr reads an expression's operator and variable names (a prefix
// modifier ":3" and an explode "*" are dropped from the names).
func splitExpr(expr string) (byte, []string) {
	var op byte
	if expr != "" && strings.IndexByte("+#./;?&", expr[0]) >= 0 {
		op, expr = expr[0], expr[1:]
	}
	var names []string
	for _, n := range strings.Split(expr, ",") {
		n = strings.TrimSuffix(n, "*")
		if i := strings.IndexByte(n, ':'); i >= 0 {
			n = n[:i]
		}
		names = append(names, strings.TrimSpace(n))
	}
	return op, names
}

// expandTemplate fills a URI template with values (RFC 6570 levels 1–3:
// each value a string; an undefined or empty-and-optional one is left out).
func expandTemplate(t string, values map[string]string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(t, '{')
		j := -1
		if i >= 0 {
			j = strings.IndexByte(t[i:], '}')
		}
		if i < 0 || j < 0 {
			b.WriteString(t)
			return b.String()
		}
		b.WriteString(t[:i])
		b.WriteString(expandExpr(t[i+1:i+j], values))
		t = t[i+j+1:]
	}
}

func expandExpr(expr string, values map[string]string) string {
	op, names := splitExpr(expr)
	first, sep, named, ifEmpty, reserved := "", ",", false, "", false
	switch op {
	case '+':
		reserved = true
	case '#':
		first, reserved = "#", true
	case '.':
		first, sep = ".", "."
	case '/':
		first, sep = "/", "/"
	case ';':
		first, sep, named = ";", ";", true
	case '?':
		first, sep, named, ifEmpty = "?", "&", true, "="
	case '&':
		first, sep, named, ifEmpty = "&", "&", true, "="
	}
	var parts []string
	for _, n := range names {
		v, ok := values[n]
		if !ok {
			continue
		}
		if v == "" && (op == '?' || op == '&' || op == ';') {
			continue
		}
		enc := escapeTemplate(v, reserved)
		switch {
		case named && v == "":
			parts = append(parts, n+ifEmpty)
		case named:
			parts = append(parts, n+"="+enc)
		default:
			parts = append(parts, enc)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return first + strings.Join(parts, sep)
}

// escapeTemplate percent-encodes a value: everything but the unreserved
// characters, or (for + and #) but the reserved ones too.
func escapeTemplate(v string, reserved bool) string {
	const unreserved = "-._~"
	const reservedChars = ":/?#[]@!$&'()*+,;="
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', strings.IndexByte(unreserved, c) >= 0:
			b.WriteByte(c)
		case reserved && strings.IndexByte(reservedChars, c) >= 0:
			b.WriteByte(c)
		case reserved && c == '%' && i+2 < len(v) && isHex(v[i+1]) && isHex(v[i+2]):
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
