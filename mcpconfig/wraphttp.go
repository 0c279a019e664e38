package mcpconfig

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"

	"github.com/tailscale/hujson"
)

// ErrSSEEntry is WrapHTTP's refusal of an entry of the deprecated HTTP+SSE
// transport, which `inflight proxy --url` does not speak.
var ErrSSEEntry = errors.New(`it is an HTTP+SSE server ("type": "sse", 2024-11-05), which inflight proxy does not proxy: only Streamable HTTP`)

// WrapHTTP rewrites the Streamable HTTP entry called name (the only one
// when name is "") of a config file so that the host reaches it through
// `inflight proxy --listen listen --url UPSTREAM`: the entry's URL
// ("url", "serverUrl" or "httpUrl", whichever it has) becomes
// http://listen followed by the upstream's path. It returns the rewritten
// file and the upstream, the URL as Parse read it (variables expanded),
// for the proxy's --url. Every other member (headers, type) and every byte
// outside the URL's value stay as they were. A stdio entry is refused, an
// HTTP+SSE one too (ErrSSEEntry), and one whose URL is already http://listen
// (ErrWrapped).
func WrapHTTP(data []byte, path, name, listen string) (w Wrapped, upstream string, err error) {
	fail := func(format string, args ...any) (Wrapped, string, error) {
		return Wrapped{}, "", fmt.Errorf("config file %s: %w", path, fmt.Errorf(format, args...))
	}
	srv, err := Parse(data, path, name)
	if err != nil {
		return Wrapped{}, "", err
	}
	name = srv.Name
	switch {
	case srv.URL == "":
		return fail("server %q: it is a stdio server: its command is wrapped, not a URL", name)
	case srv.SSE:
		return fail("server %q: %w", name, ErrSSEEntry)
	}
	up, err := url.Parse(srv.URL)
	if err != nil || (up.Scheme != "http" && up.Scheme != "https") || up.Host == "" {
		return fail("server %q: its URL is not an http:// or https:// URL", name)
	}
	if up.Host == listen {
		return fail("server %q: %w (%s)", name, ErrWrapped, listen)
	}
	v, err := hujson.Parse(data)
	if err != nil {
		return fail("%v", err)
	}
	ptr := ""
	for _, top := range []string{"/mcpServers", "/servers", "/mcp/servers"} {
		if v.Find(top) != nil {
			ptr = top + "/" + escapePointer(name)
			break
		}
	}
	if v.Find(ptr) == nil {
		return fail("server %q not found where it was read", name)
	}
	member := ""
	for _, m := range []string{"url", "serverUrl", "httpUrl"} {
		if v.Find(ptr+"/"+m) != nil {
			member = m
			break
		}
	}
	if member == "" {
		return fail("server %q: no url member where it was read", name)
	}
	local := (&url.URL{Scheme: "http", Host: listen, Path: up.Path}).String()
	patch := fmt.Sprintf(`[{"op":"replace","path":%s,"value":%s}]`, jsonString(ptr+"/"+member), jsonString(local))
	if err := v.Patch([]byte(patch)); err != nil {
		return fail("server %q: %v", name, err)
	}
	out := v.Pack()
	entry := v.Find(ptr)
	return Wrapped{Name: name, Pointer: ptr, File: out, Entry: dedent(bytes.TrimSpace(entry.Pack())), Server: srv}, srv.URL, nil
}

// WrapHTTPFile is WrapHTTP on a file, written back as WrapFile does (with
// a backup) when write is set.
func WrapHTTPFile(path, name, listen string, write bool) (w Wrapped, upstream, backup string, err error) {
	w, backup, err = wrapFileWith(path, write, func(data []byte) (Wrapped, error) {
		var werr error
		var ww Wrapped
		ww, upstream, werr = WrapHTTP(data, path, name, listen)
		return ww, werr
	})
	return w, upstream, backup, err
}
