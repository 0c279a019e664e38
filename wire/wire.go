// Package wire holds the JSON-RPC 2.0 and MCP vocabulary shared by the client
// (which reads and writes bytes) and the session tracker (which reasons about
// them): request IDs that keep their exact JSON form, a decoded message
// envelope, and the protocol's method names, _meta keys, error codes and
// versions. It does no I/O and keeps no state.
package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Protocol versions inflight speaks. The modern era has no handshake; the
// legacy era opens with initialize.
const (
	VersionModern   = "2026-07-28"
	Version20251125 = "2025-11-25"
	Version20250618 = "2025-06-18"
	Version20250326 = "2025-03-26"
	// Version20241105 is spoken only over its own HTTP transport, the
	// deprecated HTTP+SSE, and so is not among LegacyVersions.
	Version20241105 = "2024-11-05"
)

// LegacyVersions are the handshake-era versions inflight can negotiate, newest first.
var LegacyVersions = []string{Version20251125, Version20250618, Version20250326}

// IsModernVersion reports whether v belongs to the modern (per-request _meta)
// era. Versions are dates, so any version from 2026-07-28 on is modern.
func IsModernVersion(v string) bool { return v >= VersionModern }

// Method names and notification names used by inflight.
const (
	MethodInitialize          = "initialize"
	MethodDiscover            = "server/discover"
	MethodPing                = "ping"
	MethodToolsList           = "tools/list"
	MethodToolsCall           = "tools/call"
	MethodResourcesList       = "resources/list"
	MethodResourcesRead       = "resources/read"
	MethodResourcesSubscribe  = "resources/subscribe"
	MethodPromptsList         = "prompts/list"
	MethodPromptsGet          = "prompts/get"
	MethodSubscriptionsListen = "subscriptions/listen"
	MethodRootsList           = "roots/list"
	MethodSamplingCreate      = "sampling/createMessage"
	MethodElicitationCreate   = "elicitation/create"
	MethodLoggingSetLevel     = "logging/setLevel" // legacy only
	MethodTasksGet            = "tasks/get"
	MethodTasksResult         = "tasks/result" // legacy only
	MethodTasksList           = "tasks/list"   // legacy only
	MethodTasksCancel         = "tasks/cancel"
	MethodTasksUpdate         = "tasks/update" // modern only

	NotifyInitialized     = "notifications/initialized"
	NotifyCancelled       = "notifications/cancelled"
	NotifyProgress        = "notifications/progress"
	NotifyMessage         = "notifications/message"
	NotifySubscriptionAck = "notifications/subscriptions/acknowledged"
	NotifyResourceUpdated = "notifications/resources/updated"
	NotifyTaskStatus      = "notifications/tasks/status" // legacy
	NotifyTasks           = "notifications/tasks"        // modern, on subscriptions/listen
)

// _meta keys of the modern era.
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
	MetaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
	MetaProgressToken      = "progressToken"
	MetaRelatedTask        = "io.modelcontextprotocol/related-task"
	// MetaLogLevel asks for a request's log lines (modern era, logging.mdx).
	MetaLogLevel = "io.modelcontextprotocol/logLevel"
	// ExtensionTasks names the modern tasks extension in clientCapabilities.extensions.
	ExtensionTasks = "io.modelcontextprotocol/tasks"
)

// JSON-RPC and MCP error codes.
const (
	CodeParseError                 = -32700
	CodeInvalidRequest             = -32600
	CodeMethodNotFound             = -32601
	CodeInvalidParams              = -32602
	CodeInternalError              = -32603
	CodeHeaderMismatch             = -32020
	CodeMissingClientCapability    = -32021
	CodeUnsupportedProtocolVersion = -32022
	// CodeUserRejected is the sampling page's "User rejected sampling
	// request" (legacy).
	CodeUserRejected = -1
)

// IsModernErrorCode reports whether code is one of the errors only a modern
// server sends; receiving one identifies the server's era as modern.
func IsModernErrorCode(code int) bool {
	return code == CodeHeaderMismatch || code == CodeMissingClientCapability || code == CodeUnsupportedProtocolVersion
}

// SupportedVersions reads the "supported" list of an
// UnsupportedProtocolVersionError's data (nil when there is none).
func SupportedVersions(data json.RawMessage) []string {
	var d struct {
		Supported []string `json:"supported"`
	}
	_ = json.Unmarshal(data, &d)
	return d.Supported
}

// ID is a JSON-RPC request ID kept in its JSON form: a number exactly as
// written (7, 7.0 and 7e0 are three IDs, and only the first is one inflight
// sends), a string by its value (so "7" and "\u0037" are one ID, and the
// number 7 another). The zero ID
// means "no ID". IDs are comparable and usable as map keys.
type ID struct {
	raw string
}

// IntID returns the numeric ID n.
func IntID(n int64) ID { return ID{raw: strconv.FormatInt(n, 10)} }

// StringID returns the string ID s.
func StringID(s string) ID {
	b, _ := json.Marshal(s)
	return ID{raw: string(b)}
}

// NullID is the ID of a response to a request whose ID could not be read.
var NullID = ID{raw: "null"}

// ParseID canonicalises the JSON text of an ID. Any JSON value is accepted so
// that a misbehaving server's ID can still be shown; IsValid says whether it
// is a legal MCP request ID (a string or an integer).
func ParseID(raw []byte) (ID, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ID{}, errors.New("empty id")
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return ID{}, fmt.Errorf("id: %w", err)
		}
		return StringID(s), nil
	case 'n':
		if string(raw) == "null" {
			return NullID, nil
		}
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		// strconv accepts more than JSON does ("-Inf", "0x1p4", "01"), and
		// a kept raw form is written back verbatim, so check the grammar
		// first: an ID must always marshal to valid JSON.
		if !isJSONNumber(raw) {
			return ID{}, fmt.Errorf("id %q: not a number", raw)
		}
		// A number is kept as the server wrote it: JSON-RPC matches a
		// response to its request by the ID, and inflight writes its own
		// integer IDs in their shortest form, so 1.0, 1E0 or 1e-400 answer
		// no request of ours (they are unknown IDs), and 1e-400 is never
		// shown as 0. Only the grammar check above makes it safe to keep.
		return ID{raw: string(raw)}, nil
	}
	if !json.Valid(raw) {
		return ID{}, fmt.Errorf("id %q: invalid JSON", raw)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return ID{}, fmt.Errorf("id: %w", err)
	}
	return ID{raw: buf.String()}, nil
}

// IsZero reports whether the ID is absent.
func (id ID) IsZero() bool { return id.raw == "" }

// IsValid reports whether the ID is a string or an integer, as MCP requires.
func (id ID) IsValid() bool {
	if id.raw == "" || id.raw == "null" {
		return false
	}
	if id.raw[0] == '"' {
		return true
	}
	_, err := strconv.ParseInt(id.raw, 10, 64)
	return err == nil
}

// Raw is the canonical JSON text of the ID ("" for the zero ID).
func (id ID) Raw() string { return id.raw }

// String is the ID as a person reads it: numbers bare, strings quoted.
func (id ID) String() string {
	if id.raw == "" {
		return "-"
	}
	return id.raw
}

// Int returns the ID as an integer when it is one.
func (id ID) Int() (int64, bool) {
	n, err := strconv.ParseInt(id.raw, 10, 64)
	return n, err == nil
}

// MarshalJSON writes the ID's canonical JSON.
func (id ID) MarshalJSON() ([]byte, error) {
	if id.raw == "" {
		return []byte("null"), nil
	}
	return []byte(id.raw), nil
}

// UnmarshalJSON reads any JSON value as an ID.
func (id *ID) UnmarshalJSON(b []byte) error {
	parsed, err := ParseID(b)
	if err != nil {
		return err
	}
	*id = parsed
	return nil
}

// isJSONNumber reports whether b is exactly one number in JSON's grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func isJSONNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	return i == len(b)
}
