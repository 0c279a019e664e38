package composer

import (
	"fmt"
	"strings"
)

// logLevels are the syslog levels a client may ask a server to log at
// (server/utilities/logging.mdx), least severe first.
var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// ParseLogLevel reads a log level as the user typed it: one of logLevels,
// or "none" (or "off", or nothing) for a request that asks for no logs.
func ParseLogLevel(s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	switch s {
	case "", "none", "off":
		return "", nil
	}
	for _, l := range logLevels {
		if s == l {
			return s, nil
		}
	}
	return "", fmt.Errorf("log level: %q is not one of %s or none", s, strings.Join(logLevels, ", "))
}

// fmtLogLevel is a level as the composer shows it.
func fmtLogLevel(l string) string {
	if l == "" {
		return "none"
	}
	return l
}
