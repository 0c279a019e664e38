package redact

import (
	"fmt"
	"strings"
	"testing"
)

// masked reports whether every Redactor masks v, literally and inside
// JSON text that escapes it.
func masked(t *testing.T, v string) bool {
	t.Helper()
	var r *Redactor
	lit := !strings.Contains(r.String("said "+v+" here"), v)
	esc := strings.ReplaceAll(v, "/", `\/`)
	b := string(r.Bytes([]byte(`{"m":"said ` + esc + ` here"}`)))
	escaped := !strings.Contains(b, esc) && strings.Contains(b, Placeholder)
	if lit != escaped {
		t.Fatalf("%q masked as written: %v, escaped: %v", v, lit, escaped)
	}
	return lit
}

// churn holds and releases n distinct credentials, as a proxy's host that
// sends a new one on every request does.
func churn(prefix string, n int) {
	for i := range n {
		Hold(fmt.Sprintf("%s-%06d/credential", prefix, i))()
	}
}

// A credential the host sent stays masked while the exchange that carried
// it is in flight (or its lines are still to be written), however many
// others come meanwhile; once released it stays masked among the newest
// RecentSecrets, then it is forgotten: what a proxy keeps is bounded.
func TestHeldSecretsAreBoundedOnceReleased(t *testing.T) {
	resetRuntime()
	t.Cleanup(resetRuntime)
	const inFlight = "held-in-flight/credential-0001"
	release := Hold(inFlight, "Bearer "+inFlight)
	Hold("released-early/credential-0002")()
	if !masked(t, inFlight) || !masked(t, "released-early/credential-0002") {
		t.Fatal("a credential just learnt is not masked")
	}
	churn("other", RecentSecrets-1)
	if !masked(t, "released-early/credential-0002") {
		t.Error("a released credential was forgotten before RecentSecrets newer ones came")
	}
	churn("more", 2*RecentSecrets)
	if !masked(t, inFlight) {
		t.Fatal("a credential in use was forgotten")
	}
	if masked(t, "released-early/credential-0002") {
		t.Error("a released credential is still kept past RecentSecrets newer ones: nothing bounds what is kept")
	}
	release()
	if !masked(t, inFlight) {
		t.Error("a credential just released is forgotten at once")
	}
	churn("last", RecentSecrets)
	if masked(t, inFlight) {
		t.Error("a released credential is kept forever")
	}
	if n := runtimeValues(); n > RecentSecrets {
		t.Errorf("%d credentials kept, want at most RecentSecrets (%d)", n, RecentSecrets)
	}
}

// A secret given to AddRuntime (an OAuth token, a registered client's
// secret) is never forgotten, however many credentials churn past it.
func TestRuntimeSecretIsNeverForgotten(t *testing.T) {
	resetRuntime()
	t.Cleanup(resetRuntime)
	AddRuntime("oauth-access/token-abcdef")
	churn("churn", 2*RecentSecrets)
	if !masked(t, "oauth-access/token-abcdef") {
		t.Error("an OAuth token was forgotten")
	}
}

// A value held twice (two exchanges with one token) stays held until both
// let it go; one that contains another is masked whole; values shorter
// than minRuntimeSecret are not masked.
func TestHoldCountsAndLongestFirst(t *testing.T) {
	resetRuntime()
	t.Cleanup(resetRuntime)
	r1 := Hold("shared-token-0001")
	r2 := Hold("shared-token-0001", "shared-token-0001-and-more", "short")
	r1()
	churn("c", RecentSecrets+1)
	if !masked(t, "shared-token-0001") {
		t.Error("a token still in use by one exchange was forgotten when another let it go")
	}
	var r *Redactor
	if got := r.String("x shared-token-0001-and-more y"); got != "x "+Placeholder+" y" {
		t.Errorf("a secret containing another: %q", got)
	}
	if got := r.String("a short word"); got != "a short word" {
		t.Errorf("a short value is masked everywhere: %q", got)
	}
	r2()
	r2() // a second call of one release changes nothing
	if n := runtimeValues(); n > RecentSecrets {
		t.Errorf("%d kept", n)
	}
}
