// Package exitcode holds the process exit codes every inflight command
// shares, so that a script reads the same number for the same outcome
// whichever command it ran.
package exitcode

// Exit codes of `inflight call` (and, where they apply, of the other
// commands: check uses OK, Failed, Usage and Cancelled, replay Usage).
const (
	Completed      = 0 // the request completed (or a subscription was ended by the server)
	Failed         = 1 // a tool error result, a JSON-RPC error, or another failed answer
	Usage          = 2 // bad usage, or the connection could not be established
	TimedOut       = 3 // the request timed out and was cancelled
	Cancelled      = 4 // the request was cancelled (--cancel-after, Ctrl+C)
	ConnectionLost = 5 // the connection was lost before an answer
)
