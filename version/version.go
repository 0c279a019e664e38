// Package version holds inflight's one version string: what --version
// prints and what inflight reports to servers as its clientInfo.
package version

// Version is inflight's version.
const Version = "0.1.0"
