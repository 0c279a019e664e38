package look

import (
	"encoding/json"
	"net/url"
	"strings"

	"inflight/session"
	"inflight/wire"
)

// RequestLabel names a request in a few words: its tool, resource or
// prompt, with its method when withMethod is set or when the method does
// not say it already. line sanitises the server's and the user's strings.
func RequestLabel(r *session.Request, withMethod bool, line func(string) string) string {
	target := line(r.Target)
	// A raw request's method is whatever was typed or passed to --call.
	method := line(r.Method)
	switch {
	case r.Method == wire.MethodSubscriptionsListen:
		return "listen"
	case target == "":
		return method
	case withMethod:
		return method + " " + target
	case r.Method == wire.MethodToolsCall:
		return target
	case r.Method == wire.MethodResourcesRead:
		return "read " + target
	case r.Method == wire.MethodPromptsGet:
		return "prompt " + target
	}
	return method + " " + target
}

// URLHost is the host a URL names (lower case, port kept), "" when it has
// none (a scheme without one, or not a URL).
func URLHost(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return ""
	}
	return strings.ToLower(u.Host)
}

// ContentText is a message's content in words: its text, or its type
// (raw: the caller sanitises it where it is drawn).
func ContentText(raw json.RawMessage) string {
	type block struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	var one block
	if json.Unmarshal(raw, &one) == nil && one.Type != "" {
		if one.Type == "text" {
			return one.Text
		}
		return "[" + one.Type + "]"
	}
	var many []block
	if json.Unmarshal(raw, &many) == nil {
		parts := make([]string, 0, len(many))
		for _, b := range many {
			if b.Type == "text" {
				parts = append(parts, b.Text)
			} else {
				parts = append(parts, "["+b.Type+"]")
			}
		}
		return strings.Join(parts, " ")
	}
	return string(raw)
}
