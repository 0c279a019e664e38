package redact

import (
	"sync"
	"sync/atomic"
)

// Secrets learnt while running — the OAuth access and refresh tokens a
// run obtains — are known to no Redactor built before them: every
// Redactor also replaces the runtime secrets (AddRuntime), so a token a
// server echoes back is masked in the TUI, traces and errors like the
// secrets on the command line.
var (
	runtimeMu  sync.Mutex
	runtimeSet Builder
	runtimeRed atomic.Pointer[Redactor]
)

// minRuntimeSecret is the shortest runtime secret masked.
const minRuntimeSecret = 8

// AddRuntime marks v as secret for every Redactor from now on. It is
// cheap to call again with a value already known.
func AddRuntime(v string) {
	runtimeMu.Lock()
	defer runtimeMu.Unlock()
	if len(v) < minRuntimeSecret || runtimeSet.set[v] {
		// Too short to be a credential: masking it would mask that text
		// everywhere (found in review).
		return
	}
	runtimeSet.AddValue(v)
	runtimeRed.Store(runtimeSet.Build())
}

// runtimeSecrets is the Redactor of the runtime secrets, nil while none.
func runtimeSecrets() *Redactor { return runtimeRed.Load() }
