package oauth_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"inflight/event"
	"inflight/internal/oauthas"
	"inflight/oauth"
)

// issuerWorld is a 2025-03-26 server whose authorization server lives
// under /oauth (issuer …/oauth) but publishes its metadata at the root, as
// that era's discovery finds it; prm, when set, adds protected resource
// metadata naming the authorization server at the root (the 2025-11-25
// way), where the same mismatching metadata is found.
func issuerWorld(t *testing.T, prm bool) *world {
	t.Helper()
	w := &world{t: t}
	mux := http.NewServeMux()
	w.srv = httptest.NewServer(mux)
	t.Cleanup(w.srv.Close)
	w.url = w.srv.URL + "/mcp"
	w.as = oauthas.New(w.srv.URL+"/oauth", oauthas.Config{Metadata: "none", Dynamic: true, NoIss: true})
	mux.Handle("/oauth/", http.StripPrefix("/oauth", w.as.Handler()))
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(rw).Encode(w.as.Metadata())
	})
	res := oauthas.Resource{AS: w.as, URL: w.url, PRM: "none"}
	if prm {
		mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(rw http.ResponseWriter, r *http.Request) {
			rw.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(rw, `{"resource":%q,"authorization_servers":[%q]}`, w.url, w.srv.URL)
		})
	}
	w.res = &res
	mux.Handle("/mcp", res.Mount(mux, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(rw, "ok %s", body)
	})))
	return w
}

// No protected resource metadata, and authorization server metadata at
// the server's root whose issuer is …/oauth: inflight goes on (that era
// has no other way to name the issuer), and a flagged step says so with
// RFC 8414's words, right after the metadata's own step.
func TestBackcompatIssuerMismatchIsFlagged(t *testing.T) {
	w := issuerWorld(t, false)
	w.mustOK(w.transport(w.config()))
	w.mu.Lock()
	defer w.mu.Unlock()
	var flag *event.AuthStep
	for i, s := range w.steps {
		if s.Flag == oauth.FlagIssuerMismatch {
			flag = &w.steps[i]
			if i == 0 || w.steps[i-1].Kind != event.AuthServerMetadata || w.steps[i-1].Issuer != w.srv.URL+"/oauth" {
				t.Errorf("the flag does not follow the metadata's step: %+v", w.steps[:i])
			}
		}
	}
	if flag == nil {
		t.Fatalf("no flagged step:\n%s", w.dumpLocked())
	}
	for _, want := range []string{`says issuer "` + w.srv.URL + `/oauth", not "` + w.srv.URL + `"`, "RFC 8414 §3.3", "MUST be identical", "2025-03-26"} {
		if !strings.Contains(flag.Text, want) {
			t.Errorf("flagged step %q lacks %q", flag.Text, want)
		}
	}
	if w.as.Count("authorization_code") != 1 {
		t.Errorf("authorization_code %d", w.as.Count("authorization_code"))
	}
}

// With protected resource metadata (the 2025-11-25 discovery), the same
// mismatch is the refusal RFC 8414 asks for: nothing is flagged through.
func TestIssuerMismatchRefusedWithResourceMetadata(t *testing.T) {
	w := issuerWorld(t, true)
	_, err := w.post(w.transport(w.config()))
	if err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Fatalf("err %v\n%s", err, w.dump())
	}
	for _, s := range w.steps {
		if s.Flag != "" {
			t.Errorf("flagged %+v", s)
		}
	}
}

func (w *world) dumpLocked() string {
	var b strings.Builder
	for _, s := range w.steps {
		fmt.Fprintf(&b, "  %-18s %s %s %d %q err=%q\n", s.Kind, s.Method, s.URL, s.Status, s.Text, s.Err)
	}
	return b.String()
}
