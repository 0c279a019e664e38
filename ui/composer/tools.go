package composer

import (
	"encoding/json"

	"inflight/ui/schemaform"
)

// Tool is one tool from tools/list (strings raw; sanitise to show).
type Tool struct {
	Name        string
	Description string
	Schema      json.RawMessage
	// TaskSupport is the tool's execution.taskSupport ("required",
	// "optional", "forbidden" or "").
	TaskSupport string
	// Form is Schema read for the composer, once.
	Form schemaform.Form
}

// parseTools reads a tools/list result; line sanitises the schemas' texts.
func parseTools(result json.RawMessage, line func(string) string) []Tool {
	var res struct {
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
			Execution   struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &res) != nil {
		return nil
	}
	out := make([]Tool, 0, len(res.Tools))
	for _, t := range res.Tools {
		out = append(out, Tool{Name: t.Name, Description: t.Description, Schema: t.InputSchema, TaskSupport: t.Execution.TaskSupport,
			Form: schemaform.Read(t.InputSchema, line)})
	}
	return out
}

// DemoServerName is the serverInfo name of inflight's own demo server,
// whose resource and prompt make ready examples in the forms.
const DemoServerName = "inflight-demo"
