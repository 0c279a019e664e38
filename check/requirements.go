package check

import "slices"

// Levels of a requirement. A finding against a MUST fails (FAIL); against a
// SHOULD it warns (WARN).
const (
	LevelMust   = "MUST"
	LevelShould = "SHOULD"
)

// Statuses of a finding.
const (
	StatusPass = "PASS"
	StatusWarn = "WARN"
	StatusFail = "FAIL"
	// StatusError is no verdict on the server's compliance: the battery
	// could not go on (the connection was lost).
	StatusError = "ERROR"
)

// IDs of the checks in the battery, stable for --json consumers.
const (
	CheckDiscover          = "discover"
	CheckProgressIncreases = "progress.increasing"
	CheckProgressStops     = "progress.none_after_response"
	CheckCancelFinished    = "cancel.finished_request"
	CheckCancelStops       = "cancel.progress_stops"
	CheckCancelNoResponse  = "cancel.no_response"
	CheckStreamClose       = "cancel.stream_close"
	CheckCancelUnknown     = "cancel.unknown_id"
	CheckCancelMalformed   = "cancel.malformed"
	CheckServerCancel      = "server_cancel.listen_only"
	CheckServerRequests    = "server_requests.none"
	CheckCancelErrorCode   = "cancel.error_code"
	CheckResponseIDs       = "responses.id_matches"
	// CheckConnection is the error finding of a battery whose connection
	// was lost part-way; it quotes no requirement.
	CheckConnection = "connection"
	// CheckTool is the error finding of a battery whose tool cannot serve
	// (the server has no such tool, or calling it fails); it quotes no
	// requirement.
	CheckTool = "tool"
)

// requirement is the spec text a check holds a server to.
type requirement struct {
	Title string
	Level string
	Quote string
	Page  string
}

// Spec pages, as they are named in shared/spec (and on the MCP site under
// /specification/).
const (
	pageVersioning      = "2026-07-28/basic/versioning.mdx"
	pageCancelModern    = "2026-07-28/basic/patterns/cancellation.mdx"
	pageCancelLegacy    = "2025-11-25/basic/utilities/cancellation.mdx"
	pageProgressModern  = "2026-07-28/basic/patterns/progress.mdx"
	pageProgressLegacy  = "2025-11-25/basic/utilities/progress.mdx"
	pageStdioModern     = "2026-07-28/basic/transports/stdio.mdx"
	pageStreamableHTTP  = "2026-07-28/basic/transports/streamable-http.mdx"
	pageBaseModern      = "2026-07-28/basic/index.mdx"
	pageBaseLegacy      = "2025-11-25/basic/index.mdx"
	quoteNoMoreMessages = "Servers SHOULD stop work on a cancelled request as soon as practical and MUST NOT send any further messages for it."
)

// requirementFor returns what a check quotes, which depends on the era (the
// legacy revision has its own pages and words) and, for the cancel itself,
// on the transport.
func requirementFor(id string, modern, http bool) requirement {
	cancelPage, progressPage := pageCancelLegacy, pageProgressLegacy
	if modern {
		cancelPage, progressPage = pageCancelModern, pageProgressModern
	}
	switch id {
	case CheckDiscover:
		return requirement{"server/discover answers", LevelMust,
			"Servers MUST implement server/discover.", pageVersioning}
	case CheckProgressIncreases:
		return requirement{"progress increases", LevelMust,
			"The progress value MUST increase with each notification, even if the total is unknown.", progressPage}
	case CheckProgressStops:
		return requirement{"no progress after the response", LevelMust,
			"Progress notifications MUST stop after completion", progressPage}
	case CheckCancelFinished:
		return requirement{"cancelling a finished request is harmless", LevelMust,
			"Due to network latency, cancellation notifications may arrive after request processing has completed, and potentially after a response has already been sent. Both parties MUST handle these race conditions gracefully", cancelPage}
	case CheckCancelStops:
		if modern {
			return requirement{"progress stops after the cancel", LevelMust, quoteNoMoreMessages, pageStdioModern}
		}
		return requirement{"progress stops after the cancel", LevelShould,
			"Receivers of cancellation notifications SHOULD: Stop processing the cancelled request", cancelPage}
	case CheckCancelNoResponse:
		if modern {
			return requirement{"no response after the cancel", LevelMust, quoteNoMoreMessages, pageStdioModern}
		}
		return requirement{"no response after the cancel", LevelShould,
			"Receivers of cancellation notifications SHOULD: … Not send a response for the cancelled request", cancelPage}
	case CheckStreamClose:
		return requirement{"a closed stream cancels the request", LevelMust,
			"Closing the SSE response stream MUST be treated by the server as cancellation of that request. … The server SHOULD stop work on the cancelled request as soon as practical and MUST NOT send any further messages for it.", pageStreamableHTTP}
	case CheckCancelUnknown:
		return requirement{"a cancel for an unknown ID is ignored", LevelShould,
			"Invalid cancellation notifications SHOULD be ignored: Unknown request IDs", cancelPage}
	case CheckCancelMalformed:
		return requirement{"malformed cancels are ignored", LevelShould,
			"Invalid cancellation notifications SHOULD be ignored: … Malformed notifications", cancelPage}
	case CheckServerCancel:
		if modern {
			return requirement{"server cancels only listen requests", LevelMust,
				"A server MUST send notifications/cancelled referencing a subscriptions/listen request ID when it tears down that subscription stream … Servers MUST NOT send notifications/cancelled for any other purpose.", pageCancelModern}
		}
		return requirement{"server cancels only its own requests", LevelMust,
			"Cancellation notifications MUST only reference requests that: Were previously issued in the same direction; Are believed to still be in-progress", pageCancelLegacy}
	case CheckServerRequests:
		if http {
			return requirement{"the server sends no requests", LevelMust,
				"The server MUST NOT send independent JSON-RPC requests on this stream. Server-to-client interactions (sampling, elicitation, list-roots) are embedded as input requests inside an InputRequiredResult", pageStreamableHTTP}
		}
		return requirement{"the server sends no requests", LevelMust,
			"The server MUST NOT write JSON-RPC requests to stdout. Server-to-client interactions are carried in InputRequiredResult replies", pageStdioModern}
	case CheckCancelErrorCode:
		if modern {
			return requirement{"a cancel is not answered with a made-up error", LevelShould,
				"Errors that are purely local to an implementation (for example, a request timeout raised inside an SDK) are not currently assigned codes by this specification. Implementations surfacing local errors in JSON-RPC-shaped structures should ensure they cannot be mistaken for errors received from the peer.", pageBaseModern}
		}
		return requirement{"a cancel is not answered with a made-up error", LevelShould,
			"Receivers of cancellation notifications SHOULD: … Not send a response for the cancelled request", cancelPage}
	case CheckResponseIDs:
		page := pageBaseLegacy
		if modern {
			page = pageBaseModern
		}
		return requirement{"every response names its own request", LevelMust,
			"Result responses MUST include the same ID as the request they correspond to. … Error responses MUST include the same ID as the request they correspond to (except in error cases where the ID could not be read due a malformed request).", page}
	}
	if r, ok := ownStreamRequirement(id, modern); ok {
		return r
	}
	panic("check: no requirement " + id)
}

// coreChecks are the battery's checks outside the tasks group, each with a
// requirement in requirementFor.
var coreChecks = []string{CheckDiscover, CheckProgressIncreases, CheckProgressStops, CheckCancelFinished, CheckCancelStops,
	CheckCancelNoResponse, CheckStreamClose, CheckCancelUnknown, CheckCancelMalformed, CheckServerCancel, CheckServerRequests}

// lookupRequirement is what check id quotes, from either table; false
// for an ID that quotes none (CheckConnection, CheckTool).
func lookupRequirement(id string, modern, http bool) (requirement, bool) {
	if r, ok := taskRequirement(id, modern); ok {
		return r, true
	}
	if r, ok := ownStreamRequirement(id, modern); ok {
		return r, true
	}
	if slices.Contains(coreChecks, id) {
		return requirementFor(id, modern, http), true
	}
	return requirement{}, false
}
