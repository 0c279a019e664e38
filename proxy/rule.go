package proxy

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"inflight/wire"
)

// RuleGrammar is the grammar of a --rule, for help texts and errors.
const RuleGrammar = `METHOD [NAME]: ACTION
  METHOD  a request method the host sends (tools/call, resources/read,
          prompts/get, …), or * for any
  NAME    the tool's or prompt's name, or the resource's URI, exactly
          (omitted or *: any)
  ACTION  delay D           hold the server's response for D, then pass it on
          hold              hold the server's response until released (the
                            proxy gets SIGUSR1) or the proxy ends
          drop              never pass the server's response on
          cancel [D]        D after the request reached the server (default:
                            at once), cancel it there (notifications/cancelled;
                            on modern HTTP, closing its request), and answer
                            the host with JSON-RPC error -32800 "cancelled by
                            inflight proxy"
          cancel-silent [D] the same cancel upstream, and no answer: the host
                            waits for its own timeout (the server's answer is
                            not passed on either)
          race              hold the server's response and pass it on the
                            instant the host's notifications/cancelled for it
                            arrives: the two cross (not on modern HTTP, where
                            the host's cancel closes the response's stream)
  D       a Go duration: 500ms, 30s, 1m30s`

// Action is what a rule does to the requests it matches.
type Action uint8

// The actions.
const (
	// ActDelay passes the server's response on Rule.After after it came.
	ActDelay Action = iota + 1
	// ActHold keeps the server's response until released
	// (Options.Release) or the proxy ends.
	ActHold
	// ActDrop never passes the server's response on.
	ActDrop
	// ActCancel cancels the request upstream Rule.After after it reached
	// the server, and answers the host with an error saying so.
	ActCancel
	// ActCancelSilent cancels it upstream and leaves the host waiting.
	ActCancelSilent
	// ActRace holds the response until the host's cancel arrives.
	ActRace
)

var actionNames = map[string]Action{
	"delay": ActDelay, "hold": ActHold, "drop": ActDrop, "cancel": ActCancel,
	"cancel-silent": ActCancelSilent, "race": ActRace,
}

// String is the action's name in a rule.
func (a Action) String() string {
	for name, act := range actionNames {
		if act == a {
			return name
		}
	}
	return fmt.Sprintf("action(%d)", uint8(a))
}

// cancels reports whether the action cancels the request upstream.
func (a Action) cancels() bool { return a == ActCancel || a == ActCancelSilent }

// Rule makes something happen to the host's requests it matches: a
// request of Method (any, when "*") whose wire.Target is Name (any, when
// empty).
type Rule struct {
	Method string
	Name   string
	Action Action
	// After is delay's D, or how long after the request a cancel goes.
	After time.Duration
	// Text is the rule as written, trimmed.
	Text string
}

// Matches reports whether the rule applies to a host request.
func (r *Rule) Matches(method, target string) bool {
	return (r.Method == "*" || r.Method == method) && (r.Name == "" || r.Name == target)
}

// Does is the rule's action as the trace names it: "delay 30s", "hold",
// "cancel 1s".
func (r *Rule) Does() string {
	s := r.Action.String()
	if r.Action == ActDelay || (r.Action.cancels() && r.After > 0) {
		s += " " + r.After.String()
	}
	return s
}

// ParseRule reads one --rule (RuleGrammar). The action comes after the
// last colon, so a resource URI (demo://clock) may stand before it.
func ParseRule(text string) (Rule, error) {
	text = strings.TrimSpace(text)
	bad := func(format string, args ...any) (Rule, error) {
		return Rule{}, fmt.Errorf("rule %q: %s", text, fmt.Sprintf(format, args...))
	}
	colon := strings.LastIndexByte(text, ':')
	if colon < 0 {
		return bad("no ':' before the action")
	}
	match, act := strings.Fields(text[:colon]), strings.Fields(text[colon+1:])
	r := Rule{Text: text}
	switch len(match) {
	case 0:
		return bad("no method before ':' (use * for any)")
	case 1, 2:
		r.Method = match[0]
		if len(match) == 2 && match[1] != "*" {
			r.Name = match[1]
		}
	default:
		return bad("%d words before ':', want a method and at most one name", len(match))
	}
	if r.Method != "*" && (strings.HasPrefix(r.Method, "notifications/") || !strings.Contains(r.Method, "/") && r.Method != wire.MethodInitialize && r.Method != wire.MethodPing) {
		return bad("%q is not a request method (tools/call, resources/read, prompts/get, initialize, …)", r.Method)
	}
	if len(act) == 0 {
		return bad("no action after ':' (delay D, hold, drop, cancel [D], cancel-silent [D], race)")
	}
	a, ok := actionNames[act[0]]
	if !ok {
		return bad("unknown action %q (delay D, hold, drop, cancel [D], cancel-silent [D], race)", act[0])
	}
	r.Action = a
	args := act[1:]
	switch {
	case a == ActDelay && len(args) != 1:
		return bad("delay needs one duration (delay 30s)")
	case a.cancels() && len(args) > 1:
		return bad("%s takes at most one duration (%s 2s)", a, a)
	case !a.cancels() && a != ActDelay && len(args) > 0:
		return bad("%s takes no argument", a)
	}
	if len(args) == 1 {
		d, err := time.ParseDuration(args[0])
		if err != nil || d < 0 {
			return bad("%q is not a duration (500ms, 30s, 1m30s)", args[0])
		}
		if a == ActDelay && d == 0 {
			return bad("delay 0 does nothing")
		}
		r.After = d
	}
	if a.cancels() && r.Method == wire.MethodInitialize {
		// "The initialize request MUST NOT be cancelled by clients": a
		// proxy that cancels one on the host's behalf breaks the rule for
		// it. (Through "*", match skips initialize.)
		return bad("initialize must never be cancelled")
	}
	return r, nil
}

// ParseRules reads every --rule, joining their errors.
func ParseRules(texts []string) ([]Rule, error) {
	var rules []Rule
	var errs []error
	for _, t := range texts {
		r, err := ParseRule(t)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		rules = append(rules, r)
	}
	return rules, errors.Join(errs...)
}

// match returns the first rule that applies to a request, or nil. A
// cancel rule never applies to initialize, even through "*".
func match(rules []Rule, method, target string) *Rule {
	for i := range rules {
		r := &rules[i]
		if r.Matches(method, target) && !(r.Action.cancels() && method == wire.MethodInitialize) {
			return r
		}
	}
	return nil
}
