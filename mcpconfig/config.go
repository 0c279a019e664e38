// Package mcpconfig reads the MCP client config files people already have
// — Claude Desktop, Claude Code, Cursor, VS Code (JSON with comments, read
// with tailscale/hujson) — with their .env files and ${var} expansion, and
// returns the server entry they name. It knows nothing of inflight's flags
// or of connecting.
package mcpconfig

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/tailscale/hujson"
)

// Server is one server entry of a config file, its variables expanded.
type Server struct {
	// Name is the entry's name in the file.
	Name string
	// A stdio server: its command line, its KEY=VALUE environment entries
	// (the envFile's first) and its working directory.
	Command   string
	Args, Env []string
	Dir       string
	// A Streamable HTTP server: its endpoint, and the headers that go on
	// every request.
	URL     string
	Headers http.Header
	// SSE says URL is the stream of the deprecated HTTP+SSE transport
	// ("type": "sse").
	SSE bool
	// OAuth is the OAuth client an entry of a URL server names, for the
	// formats that have one (nil: none).
	OAuth *OAuth
	// Unresolved lists the ${input:…} variables of a VS Code config that
	// inflight cannot prompt for, by the field holding them ("env KEY",
	// "header Name", "url", …).
	Unresolved map[string]string
}

// OAuth is a URL server entry's OAuth client: what Cursor's "auth" object
// ({"CLIENT_ID", "CLIENT_SECRET", "scopes": [...]}) and Claude Code's
// "oauth" object ({"clientId", "scopes": "a b", "callbackPort"}; its
// secret is kept in the keychain, never in the file) hold. VS Code and
// Claude Desktop entries have no such fields.
type OAuth struct {
	ClientID     string
	ClientSecret string
	Scopes       []string
	// CallbackPort is Claude Code's fixed callback port: the redirect URI
	// it registers is http://localhost:PORT/callback (0: not given).
	CallbackPort int
}

// configEntry is one server in a config file, in the union of the formats
// inflight reads:
//
//   - Claude Desktop (claude_desktop_config.json) and Claude Code (.mcp.json):
//     {"mcpServers": {NAME: {"command", "args", "env"} | {"type": "http" | "sse", "url", "headers"}}}
//     Claude Code's URL entries may carry "oauth": {"clientId", "scopes", "callbackPort"}.
//   - Cursor (.cursor/mcp.json): {"mcpServers": {NAME: {"command", "args", "env", "envFile"} | {"url", "headers", "auth"}}},
//     "auth": {"CLIENT_ID", "CLIENT_SECRET", "scopes"} being a static OAuth client.
//   - VS Code (.vscode/mcp.json): {"servers": {NAME: {"type": "stdio", "command", "args", "env", "envFile", "cwd"} | {"type": "http", "url", "headers"}}, "inputs": […]}
//     and the "mcp" object of VS Code's settings.json.
//
// A few spellings of other clients are accepted too (serverUrl, httpUrl).
type configEntry struct {
	Type      string            `json:"type"`
	Command   string            `json:"command"`
	Args      []json.RawMessage `json:"args"`
	Env       map[string]any    `json:"env"`
	EnvFile   string            `json:"envFile"`
	Cwd       string            `json:"cwd"`
	URL       string            `json:"url"`
	ServerURL string            `json:"serverUrl"`
	HTTPURL   string            `json:"httpUrl"`
	Headers   map[string]any    `json:"headers"`
	Disabled  bool              `json:"disabled"`
	// Cursor's static OAuth client.
	Auth *struct {
		ClientID     string   `json:"CLIENT_ID"`
		ClientSecret string   `json:"CLIENT_SECRET"`
		Scopes       []string `json:"scopes"`
	} `json:"auth"`
	// Claude Code's pre-configured OAuth client.
	OAuth *struct {
		ClientID     string `json:"clientId"`
		Scopes       string `json:"scopes"`
		CallbackPort int    `json:"callbackPort"`
	} `json:"oauth"`
}

// configFile is the top level of the three formats.
type configFile struct {
	MCPServers map[string]json.RawMessage `json:"mcpServers"`
	Servers    map[string]json.RawMessage `json:"servers"`
	MCP        *struct {
		Servers map[string]json.RawMessage `json:"servers"`
	} `json:"mcp"`
}

// LoadFile reads the server called name from an MCP client config
// file: the mcpServers JSON of Claude Desktop, Claude Code and Cursor, or the
// servers JSON of VS Code (comments and trailing commas allowed, as VS Code
// allows them). When name is "" and the file has exactly one server, that one
// is used. An unknown or missing name is an error that lists the servers in
// the file.
//
// Variables are expanded the way those clients do: ${env:NAME} and ${NAME}
// (with ${NAME:-default}) from inflight's environment, ${workspaceFolder}
// (the folder holding .vscode/ or .cursor/, else the file's folder) and
// ${userHome}. VS Code's ${input:…} prompts cannot be answered by inflight:
// they are listed in Server.Unresolved.
func LoadFile(path, name string) (Server, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Server{}, fmt.Errorf("config file: %w", err)
	}
	return Parse(data, path, name)
}

// Parse is LoadFile on bytes already read (and the fuzz target's entry
// point); path names the file in errors and anchors ${workspaceFolder}.
func Parse(data []byte, path, name string) (Server, error) {
	std, err := standardize(data, path)
	if err != nil {
		return Server{}, err
	}
	servers, format, err := entries(std, path)
	if err != nil {
		return Server{}, err
	}
	names := sortedNames(servers)
	if name == "" {
		if len(names) == 1 {
			name = names[0]
		} else {
			return Server{}, fmt.Errorf("config file %s has %s; choose one with --server NAME", path, listServers(names))
		}
	}
	raw, ok := servers[name]
	if !ok {
		return Server{}, fmt.Errorf("config file %s has no server %q; it has %s", path, name, listServers(names))
	}
	var e configEntry
	if err := json.Unmarshal(raw, &e); err != nil {
		return Server{}, fmt.Errorf("config file %s: %s %q: %w", path, format, name, err)
	}
	t, err := e.server(newExpander(path))
	if err != nil {
		return Server{}, fmt.Errorf("config file %s: server %q: %w", path, name, err)
	}
	t.Name = name
	return t, nil
}

// Names lists the servers of an MCP client config file, sorted: what
// Parse may be asked for by name. The entries themselves are not read, so
// that one broken entry does not hide the others.
func Names(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config file: %w", err)
	}
	std, err := standardize(data, path)
	if err != nil {
		return nil, err
	}
	servers, _, err := entries(std, path)
	if err != nil {
		return nil, err
	}
	return sortedNames(servers), nil
}

// standardize makes standard JSON of a config file's bytes.
func standardize(data []byte, path string) ([]byte, error) {
	// Comments and trailing commas become spaces, so that offsets in the
	// standard JSON are offsets in the file too.
	std, err := hujson.Standardize(bytes.Clone(data))
	if err != nil {
		// hujson says where ("line 3, column 21: …"); its "unexpected
		// EOF" is said for people.
		msg := strings.Replace(strings.TrimPrefix(err.Error(), "hujson: "), "unexpected EOF", "unexpected end of the file", 1)
		return nil, fmt.Errorf("config file %s: %s", path, msg)
	}
	return std, nil
}

// entries is the object of servers in a config file's standard JSON, and
// the name of the member holding it.
func entries(std []byte, path string) (map[string]json.RawMessage, string, error) {
	var f configFile
	if err := json.Unmarshal(std, &f); err != nil {
		return nil, "", fmt.Errorf("config file %s: %s", path, where(std, err))
	}
	servers, format := f.MCPServers, "mcpServers"
	if servers == nil {
		servers, format = f.Servers, "servers"
	}
	if servers == nil && f.MCP != nil {
		servers, format = f.MCP.Servers, "mcp.servers"
	}
	if servers == nil {
		return nil, "", fmt.Errorf(`config file %s has no "mcpServers" (Claude Desktop, Cursor) or "servers" (VS Code) object`, path)
	}
	return servers, format, nil
}

func sortedNames(servers map[string]json.RawMessage) []string {
	names := make([]string, 0, len(servers))
	for n := range servers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func listServers(names []string) string {
	switch len(names) {
	case 0:
		return "no servers"
	case 1:
		return fmt.Sprintf("one server: %q", names[0])
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return fmt.Sprintf("%d servers: %s", len(names), strings.Join(q, ", "))
}

// server turns an entry into a Server.
func (e configEntry) server(x *expander) (Server, error) {
	url, typ, err := e.kind()
	if err != nil {
		return Server{}, err
	}
	if url != "" {
		return e.urlServer(x, url, typ)
	}
	return e.commandServer(x)
}

// kind is the entry's URL (under any of its names) and its type, lower
// case; an error when they, and its command, do not agree.
func (e configEntry) kind() (url, typ string, err error) {
	url = cmp.Or(e.URL, e.ServerURL, e.HTTPURL)
	typ = strings.ToLower(e.Type)
	switch typ {
	case "", "stdio", "http", "streamable-http", "streamablehttp", "streamable_http":
	case "sse":
		// The deprecated HTTP+SSE transport (2024-11-05): url is its stream.
		if url == "" {
			return "", "", errors.New(`"type": "sse" needs a "url": the server's HTTP+SSE stream`)
		}
	default:
		return "", "", fmt.Errorf("unknown \"type\": %q (want stdio, http or sse)", e.Type)
	}
	switch {
	case e.Command != "" && url != "":
		return "", "", errors.New(`it has both "command" and "url"`)
	case e.Command == "" && url == "":
		return "", "", errors.New(`it has neither "command" nor "url"`)
	case typ == "stdio" && url != "":
		return "", "", errors.New(`"type": "stdio" with a "url"`)
	case typ != "" && typ != "stdio" && e.Command != "":
		return "", "", fmt.Errorf(`"type": %q with a "command"`, e.Type)
	}
	return url, typ, nil
}

// urlServer is an entry that names a URL: its headers and OAuth client.
func (e configEntry) urlServer(x *expander, url, typ string) (Server, error) {
	var t Server
	t.URL = x.expand(url, "url")
	t.SSE = typ == "sse"
	if len(e.Headers) > 0 {
		t.Headers = http.Header{}
	}
	for name, v := range e.Headers {
		s, err := scalar(v)
		if err != nil {
			return Server{}, fmt.Errorf("header %q: %w", name, err)
		}
		t.Headers.Set(name, x.expand(s, "header "+http.CanonicalHeaderKey(name)))
	}
	t.OAuth = e.oauth(x)
	t.Unresolved = x.unresolved
	return t, nil
}

// commandServer is an entry that names a command: its args, environment
// (envFile, then env) and working directory.
func (e configEntry) commandServer(x *expander) (Server, error) {
	var t Server
	t.Command = x.expand(e.Command, "command")
	for i, a := range e.Args {
		var v any
		if err := json.Unmarshal(a, &v); err != nil {
			return Server{}, fmt.Errorf("args[%d]: %w", i, err)
		}
		s, err := scalar(v)
		if err != nil {
			return Server{}, fmt.Errorf("args[%d]: %w", i, err)
		}
		t.Args = append(t.Args, x.expand(s, fmt.Sprintf("args[%d]", i)))
	}
	env, err := e.environment(x)
	if err != nil {
		return Server{}, err
	}
	t.Env = env
	if e.Cwd != "" {
		t.Dir = x.expand(e.Cwd, "cwd")
		if !filepath.IsAbs(t.Dir) {
			t.Dir = filepath.Join(x.workspace, t.Dir)
		}
	}
	t.Unresolved = x.unresolved
	return t, nil
}

// environment is what a command entry adds to the environment: its
// envFile's variables, then its env's, in name order.
func (e configEntry) environment(x *expander) ([]string, error) {
	var env []string
	if e.EnvFile != "" {
		file := x.expand(e.EnvFile, "envFile")
		if !filepath.IsAbs(file) {
			file = filepath.Join(x.workspace, file)
		}
		vars, err := readEnvFile(file)
		if err != nil {
			return nil, err
		}
		env = append(env, vars...)
	}
	keys := make([]string, 0, len(e.Env))
	for k := range e.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if e.Env[k] == nil {
			continue // VS Code uses null to unset; inflight only adds
		}
		s, err := scalar(e.Env[k])
		if err != nil {
			return nil, fmt.Errorf("env %q: %w", k, err)
		}
		env = SetEnv(env, k+"="+x.expand(s, "env "+k))
	}
	return env, nil
}

// oauth is the entry's OAuth client, its variables expanded (nil: none).
func (e configEntry) oauth(x *expander) *OAuth {
	var o OAuth
	if a := e.Auth; a != nil {
		o.ClientID = x.expand(a.ClientID, "auth CLIENT_ID")
		o.ClientSecret = x.expand(a.ClientSecret, "auth CLIENT_SECRET")
		for _, sc := range a.Scopes {
			o.Scopes = append(o.Scopes, strings.Fields(x.expand(sc, "auth scopes"))...)
		}
	}
	if c := e.OAuth; c != nil {
		if c.ClientID != "" {
			o.ClientID = x.expand(c.ClientID, "oauth clientId")
		}
		if c.Scopes != "" {
			o.Scopes = strings.Fields(x.expand(c.Scopes, "oauth scopes"))
		}
		o.CallbackPort = c.CallbackPort
	}
	if o.ClientID == "" && o.ClientSecret == "" && len(o.Scopes) == 0 && o.CallbackPort == 0 {
		return nil
	}
	return &o
}

// scalar turns a JSON string, number or boolean into its text.
func scalar(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), nil
	case bool:
		return strconv.FormatBool(v), nil
	}
	return "", fmt.Errorf("want a string, got %T", v)
}

// expander expands the variables of a config file.
type expander struct {
	workspace  string
	home       string
	unresolved map[string]string
}

func newExpander(path string) *expander {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	dir := filepath.Dir(abs)
	ws := dir
	if b := filepath.Base(dir); b == ".vscode" || b == ".cursor" {
		ws = filepath.Dir(dir)
	}
	home, _ := os.UserHomeDir()
	return &expander{workspace: ws, home: home}
}

var varPattern = regexp.MustCompile(`\$\{([^}]*)\}`)

// expand replaces the variables in s; where says which field s came from,
// for the report of unresolved ${input:…} variables.
func (x *expander) expand(s, where string) string {
	return varPattern.ReplaceAllStringFunc(s, func(m string) string {
		v := m[2 : len(m)-1]
		switch {
		case v == "workspaceFolder" || v == "workspaceRoot":
			return x.workspace
		case v == "userHome":
			return x.home
		case v == "pathSeparator" || v == "/":
			return string(filepath.Separator)
		case strings.HasPrefix(v, "env:"):
			return os.Getenv(v[len("env:"):])
		case strings.HasPrefix(v, "input:"):
			if x.unresolved == nil {
				x.unresolved = map[string]string{}
			}
			x.unresolved[where] = m
			return m
		}
		// Claude Code's ${VAR} and ${VAR:-default}.
		name, def, hasDef := strings.Cut(v, ":-")
		if !isEnvName(name) {
			return m
		}
		if val, ok := os.LookupEnv(name); ok && (val != "" || !hasDef) {
			return val
		}
		return def
	})
}

func isEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// readEnvFile reads a dotenv file: KEY=VALUE lines, # comments, optional
// "export " prefixes and quotes around values.
func readEnvFile(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("envFile: %w", err)
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if !ok || !isEnvName(k) {
			return nil, fmt.Errorf("envFile %s line %d: want KEY=VALUE", path, n)
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		out = SetEnv(out, k+"="+v)
	}
	return out, sc.Err()
}

// where is a JSON decoding error with the line and column it happened at.
func where(std []byte, err error) string {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 || off > int64(len(std)) {
		return err.Error()
	}
	line := 1 + bytes.Count(std[:off], []byte("\n"))
	col := 1 + int(off) - (bytes.LastIndexByte(std[:off], '\n') + 1)
	return fmt.Sprintf("line %d, column %d: %v", line, col, err)
}

// SetEnv sets KEY=VALUE in env, replacing an entry with the same key; env
// itself is not changed.
func SetEnv(env []string, kv string) []string {
	k, _, _ := strings.Cut(kv, "=")
	for i, e := range env {
		if ek, _, _ := strings.Cut(e, "="); ek == k {
			out := append([]string(nil), env...)
			out[i] = kv
			return out
		}
	}
	return append(append([]string(nil), env...), kv)
}
