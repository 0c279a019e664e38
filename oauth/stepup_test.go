package oauth_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"inflight/internal/oauthas"
	"inflight/oauth"
)

// A step-up where no browser step may happen (a script): the request is
// refused saying the exact login to run — the kept token's scopes and the
// challenge's — and that login, with --scope, authorizes afresh even
// though the narrow token kept still works for other requests; the
// script's next run then has the scope it needs.
func TestStepUpHeadlessSaysTheLoginToRun(t *testing.T) {
	need := func(r *http.Request) []string { return strings.Fields(r.Header.Get("X-Need")) }
	w := newWorld(t, oauthas.Config{Dynamic: true}, oauthas.Resource{Scopes: []string{"read"}, Need: need})
	store := &oauth.Store{Dir: t.TempDir()}
	login := w.config()
	login.Store = store
	w.mustOK(w.transport(login)) // auth login: scope read
	headless := w.config()
	headless.Store, headless.Interactive = store, false
	_, err := w.post(w.transport(headless), "X-Need", "write")
	want := "run `inflight auth login " + w.url + " --scope 'read write'`"
	if !errors.Is(err, oauth.ErrLoginNeeded) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "insufficient_scope") {
		t.Fatalf("err %v, want it to say %s", err, want)
	}
	if w.as.Count("authorize") != 1 {
		t.Fatalf("authorize %d: a headless step-up asked a browser", w.as.Count("authorize"))
	}

	// The login it says to run.
	login.Scopes = []string{"read", "write"}
	w.mustOK(w.transport(login))
	if w.as.Count("authorize") != 2 {
		t.Fatalf("auth login --scope 'read write' found the narrow token good: authorize %d\n%s", w.as.Count("authorize"), w.dump())
	}
	w.mustOK(w.transport(headless), "X-Need", "write")
	if w.as.Count("authorize") != 2 {
		t.Fatalf("authorize %d after the login", w.as.Count("authorize"))
	}
}
