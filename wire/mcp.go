package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Progress is the payload of notifications/progress.
type Progress struct {
	Token    ID       `json:"progressToken"`
	Progress float64  `json:"progress"`
	Total    *float64 `json:"total,omitempty"`
	Message  string   `json:"message,omitempty"`
}

// DecodeProgress reads notifications/progress params.
func DecodeProgress(params json.RawMessage) (Progress, error) {
	var p struct {
		Token    json.RawMessage `json:"progressToken"`
		Progress *float64        `json:"progress"`
		Total    *float64        `json:"total"`
		Message  string          `json:"message"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return Progress{}, fmt.Errorf("progress params: %w", err)
	}
	if len(p.Token) == 0 {
		return Progress{}, errors.New("progress params: missing progressToken")
	}
	if p.Progress == nil {
		return Progress{}, errors.New("progress params: missing progress")
	}
	tok, err := ParseID(p.Token)
	if err != nil {
		return Progress{}, fmt.Errorf("progress params: progressToken: %w", err)
	}
	return Progress{Token: tok, Progress: *p.Progress, Total: p.Total, Message: p.Message}, nil
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
)

// Target returns the name a request acts on: params.name for tools/call and
// prompts/get, params.uri for resources/read, "" otherwise.
func Target(method string, params json.RawMessage) string {
	var key string
	switch method {
	case MethodToolsCall, MethodPromptsGet:
		key = "name"
	case MethodResourcesRead, MethodResourcesSubscribe:
		key = "uri"
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
	mb, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	obj["_meta"] = mb
	return json.Marshal(obj)
}
