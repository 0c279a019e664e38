package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Progress is the payload of notifications/progress.
type Progress struct {
	Token    ID       `json:"progressToken"`
	Progress float64  `json:"progress"`
	Total    *float64 `json:"total,omitempty"`
	Message  string   `json:"message,omitempty"`
}

// DecodeProgress reads notifications/progress params.
//
// It is on the hot path (a server may send hundreds of thousands a second),
// so the common shape (a flat object of a token, numbers and a plain
// message) is read by hand, validated by the same walk that reads it;
// anything else goes to encoding/json. Either way it accepts and rejects
// exactly what encoding/json does, member names matched regardless of case
// included (see FuzzDecodeProgressFast). A Message from Decode has its
// params validated already: Message.ReadProgress reads them without
// validating them again.
func DecodeProgress(params json.RawMessage) (Progress, error) {
	if p, total, hasTotal, ok := decodeProgressFast(params, false); ok {
		if hasTotal {
			t := total // allocated only when there is a total
			p.Total = &t
		}
		return p, nil
	}
	return decodeProgressStd(params)
}

// progressBox holds a Progress and its Total in one allocation.
type progressBox struct {
	p     Progress
	total float64
}

// ReadProgress decodes the params of m, a notifications/progress message,
// into one allocation (the Progress and its Total together), for an event
// to carry. The profile of a flood showed the second json.Valid of every
// progress notification's params (14 % of the client's CPU) and its two
// allocations: params that Decode validated with the whole message are
// only walked, not validated again.
func (m *Message) ReadProgress() (*Progress, error) {
	checked := m.checked != nil && len(m.Params) > 0 && &m.Params[0] == m.checked
	if p, total, hasTotal, ok := decodeProgressFast(m.Params, checked); ok {
		return boxed(p, total, hasTotal), nil
	}
	p, err := decodeProgressStd(m.Params)
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// decodeProgressFast reads well-formed progress params, and reports false
// for anything it does not handle exactly as decodeProgressStd would (an
// escape, a null, a type error, invalid JSON): those take the slow path,
// which also says what is wrong. The total, when there is one, is returned
// beside p (p.Total is nil), so the caller decides where it lives. checked
// says params were validated already (Decode did, with the whole message):
// then they are only walked.
func decodeProgressFast(params []byte, checked bool) (p Progress, total float64, hasTotal, ok bool) {
	i := skipSpace(params, 0)
	if i >= len(params) || params[i] != '{' {
		return Progress{}, 0, false, false
	}
	var pr progressReader
	var err error
	if checked {
		err = eachMember(params[i:], pr.member)
	} else {
		end, valid, werr := validObject(params, i, 1, pr.member)
		if !valid || skipSpace(params, end) != len(params) {
			return Progress{}, 0, false, false
		}
		err = werr
	}
	if err != nil {
		return Progress{}, 0, false, false
	}
	return pr.result()
}

// progressReader reads the members of progress params one by one, as a
// walk over them hands them over (decodeProgressFast's, or Decode's own
// validating walk, which reads a progress notification's params as it
// validates them).
type progressReader struct {
	p        Progress
	token    []byte
	total    float64
	hasTotal bool
	seen     bool
}

// member reads one member; errSlowPath says the params need encoding/json.
func (pr *progressReader) member(name, value []byte) error {
	switch string(name) {
	case "progressToken":
		pr.token = value
	case "progress":
		v, ok := parseNumber(value)
		if !ok {
			return errSlowPath
		}
		pr.p.Progress, pr.seen = v, true
	case "total":
		v, ok := parseNumber(value)
		if !ok {
			return errSlowPath
		}
		pr.total, pr.hasTotal = v, true
	case "message":
		s, ok := decodeString(value)
		if !ok {
			return errSlowPath
		}
		pr.p.Message = s
	default:
		// A name spelt with escapes may still spell one of the four; the
		// slow path unescapes it. A name in another case is just another
		// member.
		if bytes.IndexByte(name, '\\') >= 0 {
			return errSlowPath
		}
	}
	return nil
}

// result is what the members read make, ok false when they make no
// progress the fast path can vouch for.
func (pr *progressReader) result() (p Progress, total float64, hasTotal, ok bool) {
	if len(pr.token) == 0 || !pr.seen {
		return Progress{}, 0, false, false
	}
	tok, err := ParseID(pr.token)
	if err != nil {
		return Progress{}, 0, false, false
	}
	pr.p.Token = tok
	return pr.p, pr.total, pr.hasTotal, true
}

// boxed is a result of progressReader in one allocation, for an event.
func boxed(p Progress, total float64, hasTotal bool) *Progress {
	b := &progressBox{p: p, total: total}
	if hasTotal {
		b.p.Total = &b.total
	}
	return &b.p
}

// errSlowPath stops a hand-written walk that met something it leaves to
// encoding/json.
var errSlowPath = errors.New("slow path")

// parseNumber reads a JSON number as encoding/json reads one into a
// float64 (anything else, null included, is not one).
func parseNumber(raw []byte) (float64, bool) {
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return 0, false
	}
	if v, ok := parseSmallInt(raw); ok {
		return v, true
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	return v, err == nil
}

// parseSmallInt reads a JSON integer of at most 15 digits, which a float64
// holds exactly, so the result is ParseFloat's. Progress and total are
// such integers nearly always, and ParseFloat was a third of reading a
// progress notification's params in the flood's profile.
func parseSmallInt(raw []byte) (float64, bool) {
	i := 0
	if raw[0] == '-' {
		i = 1
	}
	digits := raw[i:]
	if len(digits) == 0 || len(digits) > 15 || (digits[0] == '0' && len(digits) > 1) {
		return 0, false
	}
	var n int64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	v := float64(n)
	if i == 1 {
		v = -v // "-0" is -0, as ParseFloat reads it
	}
	return v, true
}

// decodeProgressStd is DecodeProgress by encoding/json, with member names
// matched exactly as the schema spells them (encoding/json alone would
// take "PROGRESS" for "progress"); a name spelt with escapes is still the
// name it spells.
func decodeProgressStd(params json.RawMessage) (Progress, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(params, &members); err != nil {
		return Progress{}, fmt.Errorf("progress params: %w", err)
	}
	token, ok := members["progressToken"]
	if !ok || len(token) == 0 {
		return Progress{}, errors.New("progress params: missing progressToken")
	}
	var p Progress
	var progress *float64
	if raw, ok := members["progress"]; ok {
		if err := json.Unmarshal(raw, &progress); err != nil {
			return Progress{}, fmt.Errorf("progress params: progress: %w", err)
		}
	}
	if progress == nil {
		return Progress{}, errors.New("progress params: missing progress")
	}
	if raw, ok := members["total"]; ok {
		if err := json.Unmarshal(raw, &p.Total); err != nil {
			return Progress{}, fmt.Errorf("progress params: total: %w", err)
		}
	}
	if raw, ok := members["message"]; ok {
		if err := json.Unmarshal(raw, &p.Message); err != nil {
			return Progress{}, fmt.Errorf("progress params: message: %w", err)
		}
	}
	tok, err := ParseID(token)
	if err != nil {
		return Progress{}, fmt.Errorf("progress params: progressToken: %w", err)
	}
	p.Token, p.Progress = tok, *progress
	return p, nil
}

// Cancelled is the payload of notifications/cancelled.
type Cancelled struct {
	RequestID ID     `json:"requestId"`
	Reason    string `json:"reason,omitempty"`
}

// DecodeCancelled reads notifications/cancelled params.
func DecodeCancelled(params json.RawMessage) (Cancelled, error) {
	var c struct {
		RequestID json.RawMessage `json:"requestId"`
		Reason    string          `json:"reason"`
	}
	if err := json.Unmarshal(params, &c); err != nil {
		return Cancelled{}, fmt.Errorf("cancelled params: %w", err)
	}
	if len(c.RequestID) == 0 {
		return Cancelled{}, errors.New("cancelled params: missing requestId")
	}
	id, err := ParseID(c.RequestID)
	if err != nil {
		return Cancelled{}, fmt.Errorf("cancelled params: requestId: %w", err)
	}
	return Cancelled{RequestID: id, Reason: c.Reason}, nil
}

// CancelledParams builds notifications/cancelled params.
func CancelledParams(id ID, reason string) json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"requestId":`)
	b.WriteString(id.raw)
	if reason != "" {
		b.WriteString(`,"reason":`)
		writeString(&b, reason)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// metaOnly reads just the _meta object of params or a result.
type metaOnly struct {
	Meta map[string]json.RawMessage `json:"_meta"`
}

// MetaValue returns the raw value of one _meta key of an object, if present.
func MetaValue(obj json.RawMessage, key string) (json.RawMessage, bool) {
	if len(obj) == 0 || !bytes.Contains(obj, []byte(key)) {
		return nil, false
	}
	var m metaOnly
	if json.Unmarshal(obj, &m) != nil || m.Meta == nil {
		return nil, false
	}
	v, ok := m.Meta[key]
	return v, ok
}

// SubscriptionID returns the io.modelcontextprotocol/subscriptionId of a
// notification's params or a result, if it carries one.
func SubscriptionID(obj json.RawMessage) (ID, bool) {
	v, ok := MetaValue(obj, MetaSubscriptionID)
	if !ok {
		return ID{}, false
	}
	id, err := ParseID(v)
	if err != nil {
		return ID{}, false
	}
	return id, true
}

// ResultType returns a result's resultType and whether it had one.
func ResultType(result json.RawMessage) (string, bool) {
	if !bytes.Contains(result, []byte(`"resultType"`)) {
		return "", false
	}
	var r struct {
		ResultType *string `json:"resultType"`
	}
	if json.Unmarshal(result, &r) != nil || r.ResultType == nil {
		return "", false
	}
	return *r.ResultType, true
}

// Result types of the modern era.
const (
	ResultComplete      = "complete"
	ResultInputRequired = "input_required"
	ResultTask          = "task" // the tasks extension's CreateTaskResult
)

// Target returns the name a request acts on: params.name for tools/call and
// prompts/get, params.uri for resources/read, params.taskId for the tasks/
// methods (the Mcp-Name header of each), "" otherwise.
func Target(method string, params json.RawMessage) string {
	var key string
	switch method {
	case MethodToolsCall, MethodPromptsGet:
		key = "name"
	case MethodResourcesRead, MethodResourcesSubscribe:
		key = "uri"
	case MethodTasksGet, MethodTasksResult, MethodTasksCancel, MethodTasksUpdate:
		key = "taskId"
	default:
		return ""
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(params, &m) != nil {
		return ""
	}
	var s string
	if json.Unmarshal(m[key], &s) != nil {
		return ""
	}
	return s
}

// SetMeta returns params with the given _meta keys set, keeping every other
// field and any _meta keys already present. params must be a JSON object or
// empty.
func SetMeta(params json.RawMessage, kv map[string]any) (json.RawMessage, error) {
	obj := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(params)) > 0 && string(bytes.TrimSpace(params)) != "null" {
		if err := json.Unmarshal(params, &obj); err != nil {
			return nil, fmt.Errorf("params must be a JSON object: %w", err)
		}
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := obj["_meta"]; ok {
		if err := json.Unmarshal(raw, &meta); err != nil {
			return nil, fmt.Errorf("params._meta must be an object: %w", err)
		}
	}
	for k, v := range kv {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("_meta %s: %w", k, err)
		}
		meta[k] = b
	}
	mb, err := marshalExact(meta)
	if err != nil {
		return nil, err
	}
	obj["_meta"] = mb
	return marshalExact(obj)
}

// marshalExact is json.Marshal without its HTML escaping, so that the
// members SetMeta keeps go back as they came: a multi round-trip retry's
// requestState must be echoed exactly, and json.Marshal would turn its
// "<", ">" and "&" into \u escapes.
func marshalExact(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
