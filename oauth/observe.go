package oauth

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"inflight/event"
)

// observer is the http.RoundTripper under the go-sdk's authorization
// handlers: every request they make (metadata, registration, token,
// refresh) passes through it and is reported as an AuthStep, with what its
// answer said — never a token, a code or a secret.
type observer struct {
	base http.RoundTripper
	t    *Transport
}

func stripQuery(u *url.URL) string {
	cp := *u
	cp.User, cp.RawQuery, cp.Fragment = nil, "", ""
	return cp.String()
}

// classify says which step a request of the handlers is.
func (o *observer) classify(req *http.Request) (event.AuthStepKind, string) {
	p := req.URL.Path
	switch {
	case strings.Contains(p, "/.well-known/oauth-protected-resource"), o.t.isResourceMetadataURL(req.URL):
		return event.AuthResourceMetadata, ""
	case strings.Contains(p, "/.well-known/oauth-authorization-server"), strings.Contains(p, "/.well-known/openid-configuration"):
		return event.AuthServerMetadata, ""
	}
	if req.Method == http.MethodPost && req.GetBody != nil {
		ct := req.Header.Get("Content-Type")
		if strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
			if b, err := req.GetBody(); err == nil {
				data, _ := io.ReadAll(io.LimitReader(b, 64<<10))
				b.Close()
				if form, err := url.ParseQuery(string(data)); err == nil {
					grant := form.Get("grant_type")
					if grant == "refresh_token" {
						return event.AuthRefresh, grant
					}
					return event.AuthToken, grant
				}
			}
		}
		if strings.HasPrefix(ct, "application/json") {
			return event.AuthRegistration, ""
		}
	}
	return event.AuthHTTP, ""
}

func (o *observer) RoundTrip(req *http.Request) (*http.Response, error) {
	kind, grant := o.classify(req)
	step := event.AuthStep{Kind: kind, Method: req.Method, URL: stripQuery(req.URL), Start: time.Now()}
	resp, err := o.base.RoundTrip(req)
	step.Duration = time.Since(step.Start)
	if err != nil {
		step.Err = plainErr(err).Error()
		if kind == event.AuthResourceMetadata || kind == event.AuthServerMetadata {
			o.t.noteTried(step)
		}
		o.t.emit(req.Context(), step)
		return nil, err
	}
	step.Status = resp.StatusCode
	var body []byte
	switch kind {
	case event.AuthResourceMetadata, event.AuthServerMetadata, event.AuthToken, event.AuthRefresh, event.AuthRegistration:
		body, _ = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
	}
	ok := resp.StatusCode/100 == 2
	switch kind {
	case event.AuthResourceMetadata:
		if describeResourceMetadata(&step, ok, body) {
			o.t.notePRM()
		}
	case event.AuthServerMetadata:
		issuer, found := describeServerMetadata(&step, ok, body)
		if found {
			if fixed, flag, mismatch := o.t.fallbackIssuer(req.URL, issuer, body); mismatch {
				// Said after the document's own step, as a step of its own.
				defer o.t.emit(req.Context(), flag)
				resp.Body = io.NopCloser(bytes.NewReader(fixed))
				resp.ContentLength = int64(len(fixed))
				issuer = flag.Issuer
			}
			o.t.setIssuer(issuer)
		}
	case event.AuthRegistration:
		describeRegistration(&step, ok, body, resp.Status)
	case event.AuthToken, event.AuthRefresh:
		describeToken(&step, ok, body, resp.Status, grant)
	}
	if kind == event.AuthResourceMetadata || kind == event.AuthServerMetadata {
		o.t.noteTried(step)
	}
	o.t.emit(req.Context(), step)
	return resp, nil
}

// describeResourceMetadata says in step what a protected resource
// metadata document (body; ok: a 2xx answer) names, and whether it was
// usable.
func describeResourceMetadata(step *event.AuthStep, ok bool, body []byte) bool {
	var m struct {
		Resource   string   `json:"resource"`
		Servers    []string `json:"authorization_servers"`
		Scopes     []string `json:"scopes_supported"`
		BearerHows []string `json:"bearer_methods_supported"`
	}
	if ok && json.Unmarshal(body, &m) == nil {
		step.Scopes = m.Scopes
		step.Text = "resource " + m.Resource + "; authorization servers: " + strings.Join(m.Servers, ", ")
		if len(m.Servers) > 0 {
			step.Issuer = m.Servers[0]
		}
		return true
	}
	step.FellBack = true
	step.Text = "no usable protected resource metadata here; the next location is tried"
	return false
}

// describeServerMetadata says in step what an authorization server's
// metadata (body; ok: a 2xx answer) offers, and returns its issuer (found:
// the metadata was usable).
func describeServerMetadata(step *event.AuthStep, ok bool, body []byte) (issuer string, found bool) {
	var m struct {
		Issuer       string   `json:"issuer"`
		Registration string   `json:"registration_endpoint"`
		Scopes       []string `json:"scopes_supported"`
		CIMD         bool     `json:"client_id_metadata_document_supported"`
		PKCE         []string `json:"code_challenge_methods_supported"`
		AuthMethods  []string `json:"token_endpoint_auth_methods_supported"`
	}
	if ok && json.Unmarshal(body, &m) == nil {
		step.Issuer, step.Scopes = m.Issuer, m.Scopes
		var parts []string
		if m.Registration != "" {
			parts = append(parts, "dynamic registration")
		}
		if m.CIMD {
			parts = append(parts, "client ID metadata documents")
		}
		if len(m.PKCE) > 0 {
			parts = append(parts, "PKCE "+strings.Join(m.PKCE, " "))
		} else {
			parts = append(parts, "no PKCE advertised")
		}
		if len(m.AuthMethods) > 0 {
			parts = append(parts, "token auth "+strings.Join(m.AuthMethods, " "))
		}
		step.Text = "issuer " + m.Issuer + "; " + strings.Join(parts, ", ")
		return m.Issuer, true
	}
	step.FellBack = true
	step.Text = "no authorization server metadata here; the next location is tried"
	return "", false
}

// describeRegistration says in step what a dynamic client registration's
// answer (body, status; ok: a 2xx answer) gave.
func describeRegistration(step *event.AuthStep, ok bool, body []byte, status string) {
	var m struct {
		ClientID   string `json:"client_id"`
		AuthMethod string `json:"token_endpoint_auth_method"`
		Error      string `json:"error"`
		Desc       string `json:"error_description"`
	}
	_ = json.Unmarshal(body, &m)
	if ok {
		step.ClientID = m.ClientID
		step.Text = "dynamic client registration"
		if m.AuthMethod != "" {
			step.Text += "; token endpoint auth " + m.AuthMethod
		}
	} else {
		step.Text = "registration refused"
		step.Err = oauthError(m.Error, m.Desc, status)
	}
}

// describeToken says in step what a token endpoint's answer (body,
// status; ok: a 2xx answer) to grant gave.
func describeToken(step *event.AuthStep, ok bool, body []byte, status, grant string) {
	var m struct {
		Type    string `json:"token_type"`
		Expires int64  `json:"expires_in"`
		Scope   string `json:"scope"`
		Refresh string `json:"refresh_token"`
		Error   string `json:"error"`
		Desc    string `json:"error_description"`
	}
	_ = json.Unmarshal(body, &m)
	step.Text = grant
	if ok {
		step.Scopes = strings.Fields(m.Scope)
		if m.Expires > 0 {
			step.Expires = time.Now().Add(time.Duration(m.Expires) * time.Second)
		}
		step.Text += ": " + m.Type + " token"
		if m.Refresh != "" {
			step.Text += " and a refresh token"
		}
	} else {
		step.Err = oauthError(m.Error, m.Desc, status)
	}
}

// oauthError words an OAuth error response (RFC 6749 §5.2).
func oauthError(code, desc, status string) string {
	switch {
	case code != "" && desc != "":
		return code + ": " + desc
	case code != "":
		return code
	}
	return status
}

// plainErr strips net/http's "Get <url>:" wrapper, keeping the cause.
func plainErr(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// FlagIssuerMismatch marks the step that says an authorization server's
// metadata named another issuer than the one it was found under, and that
// inflight went on all the same (the 2025-03-26 fallback only).
const FlagIssuerMismatch = "issuer_mismatch"

// rfc8414IssuerRule is RFC 8414 §3.3 on the metadata's issuer.
const rfc8414IssuerRule = `RFC 8414 §3.3: "The "issuer" value returned MUST be identical to the authorization server's issuer identifier value into which the well-known URI string was inserted to create the URL used to retrieve the metadata. If these values are not identical, the data contained in the response MUST NOT be used."`

// fallbackIssuer handles the one case where inflight uses authorization
// server metadata whose issuer is not the one it was found under: a
// 2025-03-26 server, which publishes no protected resource metadata, so
// that its authorization server is found at the root of its own origin
// (that era's discovery), and whose metadata there names another issuer
// (its path, say …/oauth). Such servers exist and the era knows no other
// way to name the issuer, so inflight goes on, taking the root as the
// issuer, and says so in a flagged step with the RFC's words. Anywhere
// else — metadata a resource's metadata pointed to — a mismatch stays
// the refusal it must be. fixed is body with the root as issuer.
func (t *Transport) fallbackIssuer(u *url.URL, issuer string, body []byte) (fixed []byte, flag event.AuthStep, mismatch bool) {
	server, err := url.Parse(t.cfg.Server)
	if err != nil || t.sawPRM() || u.Scheme != server.Scheme || u.Host != server.Host {
		return nil, event.AuthStep{}, false
	}
	if u.Path != "/.well-known/oauth-authorization-server" && u.Path != "/.well-known/openid-configuration" {
		return nil, event.AuthStep{}, false
	}
	root := server.Scheme + "://" + server.Host
	if strings.TrimSuffix(issuer, "/") == root {
		return nil, event.AuthStep{}, false
	}
	var doc map[string]json.RawMessage
	if json.Unmarshal(body, &doc) != nil {
		return nil, event.AuthStep{}, false
	}
	doc["issuer"], _ = json.Marshal(root)
	fixed, err = json.Marshal(doc)
	if err != nil {
		return nil, event.AuthStep{}, false
	}
	flag = event.AuthStep{Kind: event.AuthServerMetadata, Method: http.MethodGet, URL: stripQuery(u), Start: time.Now(), Issuer: root,
		Flag: FlagIssuerMismatch,
		Text: fmt.Sprintf("⚑ issuer mismatch: the metadata found at %s says issuer %q, not %q; %s. "+
			"The server publishes no protected resource metadata (a 2025-03-26 server), so its root is the only issuer discovery gives: inflight goes on with the metadata, taking %s as the issuer",
			stripQuery(u), issuer, root, rfc8414IssuerRule, root)}
	return fixed, flag, true
}
