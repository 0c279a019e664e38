package list

import (
	"testing"

	"inflight/wire"
)

// A discovery's, an initialize's and a template list's results are said
// in words as the other lists' are, not as raw JSON.
func TestSummarizeServerAndTemplates(t *testing.T) {
	for _, c := range []struct{ method, result, want string }{
		{wire.MethodDiscover, `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{},"resources":{}},` +
			`"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"demo","version":"1.0"}}}`, "demo 1.0 · 2026-07-28 · resources, tools"},
		{wire.MethodInitialize, `{"protocolVersion":"2025-11-25","capabilities":{"prompts":{}},"serverInfo":{"name":"old","version":"0.9"}}`,
			"old 0.9 · 2025-11-25 · prompts"},
		{wire.MethodInitialize, `{"protocolVersion":"2025-11-25","capabilities":{}}`, "2025-11-25 · no capabilities"},
		{wire.MethodDiscover, `{"supportedVersions":["2026-07-28"],"capabilities":{"\u001b[31mx":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"a\u001b]0;t\u0007b"}}}`,
			""},
		{"resources/templates/list", `{"resourceTemplates":[{"uriTemplate":"a/{x}","name":"a"},{"uriTemplate":"b/{y}","name":"b"}]}`, "2 resource templates"},
		{"resources/templates/list", `{"resourceTemplates":[{"uriTemplate":"a/{x}","name":"a"}]}`, "1 resource template"},
		{"resources/templates/list", `{"resourceTemplates":[]}`, "0 resource templates"},
	} {
		got := summarize(c.method, []byte(`{"jsonrpc":"2.0","id":1,"result":`+c.result+`}`))
		if c.want == "" {
			// A server's words are made inert.
			for _, r := range got {
				if r == 0x1b || r == 0x07 {
					t.Errorf("%s: summary %q carries a control character", c.method, got)
				}
			}
			continue
		}
		if got != c.want {
			t.Errorf("%s: summary %q, want %q", c.method, got, c.want)
		}
	}
}

// On a proxy's view at 80 columns with long IDs, the REQUEST column keeps
// ten cells of the label after the host's mark: "⇄ initialize" whole.
func TestHostMarkedRequestColumn(t *testing.T) {
	c := layoutColumns(80, 12, 12)
	if c.request != 10 {
		t.Fatalf("the plain layout's REQUEST column is %d cells; this test expects 10", c.request)
	}
	h := c.hostMarked(12)
	if h.request != 12 || h.detail != c.detail-2 || h.detail < 24 {
		t.Errorf("host-marked: request %d, outcome %d (was %d); want 12, the outcome giving the 2 cells", h.request, h.detail, c.detail)
	}
	if w := layoutColumns(40, 12, 12).hostMarked(12); w.request != layoutColumns(40, 12, 12).request {
		t.Errorf("at 40 columns the outcome has no cells to give, yet the REQUEST column grew to %d", w.request)
	}
}
