// Package urlhost names the host a URL really leads to, for a person to
// read before they open it: a URL can put a trusted name before an @
// (https://accounts.google.com@evil.example/ goes to evil.example), or
// spell a host with letters of another script that look like Latin ones
// (https://аpple.com with a Cyrillic а is not apple.com).
package urlhost

import (
	"net/url"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Host is what a URL names as its host.
type Host struct {
	// Name is the host a browser goes to: lower case, port kept, each
	// label that is not ASCII in its punycode form (xn--…), so that
	// look-alike letters cannot pass for Latin ones. "" when the URL has
	// no host (a scheme without one, or not a URL).
	Name string
	// Written is the host as the URL spells it (lower case), when that
	// differs from Name: a host that is not all ASCII.
	Written string
	// UserInfo is the part of the URL before @, which is not the host
	// though it may look like one; "" when there is none.
	UserInfo string
}

// Of is the host raw names.
func Of(raw string) Host {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return Host{}
	}
	var h Host
	if u.User != nil {
		// The name only: a password there is a secret, and is never
		// repeated (it is the URL's part redaction masks).
		h.UserInfo = u.User.Username()
		if _, set := u.User.Password(); set {
			h.UserInfo += ":…"
		}
	}
	host, port := u.Hostname(), u.Port()
	written := strings.ToLower(host)
	name := written
	if !isASCII(host) && !strings.HasPrefix(u.Host, "[") {
		name = toASCII(host)
	}
	if strings.HasPrefix(u.Host, "[") {
		written, name = "["+written+"]", "["+name+"]"
	}
	if port != "" {
		written += ":" + port
		name += ":" + port
	}
	h.Name = name
	if written != name {
		h.Written = written
	}
	return h
}

// Note says, on one line, what a person should know of the host beyond
// its Name: that the part before @ is not the host, and how a host not
// all ASCII is written; "" when there is nothing to say.
func (h Host) Note() string {
	var parts []string
	if h.UserInfo != "" {
		parts = append(parts, "the part before @ ("+h.UserInfo+") is not the host")
	}
	if h.Written != "" {
		parts = append(parts, "written "+h.Written+", not all ASCII: letters of another script can look like Latin ones")
	}
	return strings.Join(parts, "; ")
}

// toASCII is host with each label that is not ASCII folded as browsers
// fold it (compatibility forms, then lower case) and in its punycode form.
func toASCII(host string) string {
	host = strings.ToLower(norm.NFKC.String(host))
	// The full stops a browser takes for the dot between labels.
	host = strings.NewReplacer("。", ".", "．", ".", "｡", ".").Replace(host)
	labels := strings.Split(host, ".")
	for i, l := range labels {
		if !isASCII(l) {
			labels[i] = "xn--" + punycode(l)
		}
	}
	return strings.Join(labels, ".")
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// The parameters of Punycode (RFC 3492, section 5).
const (
	base        = 36
	tMin        = 1
	tMax        = 26
	skew        = 38
	damp        = 700
	initialBias = 72
	initialN    = 128
)

// punycode encodes label (RFC 3492, section 6.3) without the xn-- prefix.
func punycode(label string) string {
	runes := []rune(label)
	var out []byte
	for _, r := range runes {
		if r < initialN {
			out = append(out, byte(r))
		}
	}
	basic := len(out)
	handled := basic
	if basic > 0 {
		out = append(out, '-')
	}
	n, delta, bias := rune(initialN), 0, initialBias
	for handled < len(runes) {
		m := rune(0x10FFFF + 1)
		for _, r := range runes {
			if r >= n && r < m {
				m = r
			}
		}
		delta += int(m-n) * (handled + 1)
		n = m
		for _, r := range runes {
			if r < n {
				delta++
			}
			if r != n {
				continue
			}
			q := delta
			for k := base; ; k += base {
				t := k - bias
				switch {
				case t < tMin:
					t = tMin
				case t > tMax:
					t = tMax
				}
				if q < t {
					break
				}
				out = append(out, digit(t+(q-t)%(base-t)))
				q = (q - t) / (base - t)
			}
			out = append(out, digit(q))
			bias = adapt(delta, handled+1, handled == basic)
			delta = 0
			handled++
		}
		delta++
		n++
	}
	return string(out)
}

func digit(d int) byte {
	if d < 26 {
		return byte('a' + d)
	}
	return byte('0' + d - 26)
}

func adapt(delta, points int, first bool) int {
	if first {
		delta /= damp
	} else {
		delta /= 2
	}
	delta += delta / points
	k := 0
	for delta > ((base-tMin)*tMax)/2 {
		delta /= base - tMin
		k += base
	}
	return k + (base-tMin+1)*delta/(delta+skew)
}
