package composer

import (
	"strings"
	"testing"
)

func TestExpandTemplate(t *testing.T) {
	v := map[string]string{"id": "a b/c", "path": "x/y", "q": "1", "empty": ""}
	for tmpl, want := range map[string]string{
		"file:///{id}":          "file:///a%20b%2Fc",
		"file:///{+path}":       "file:///x/y",
		"s://{id}{?q,empty}":    "s://a%20b%2Fc?q=1",
		"s://r{/path}":          "s://r/x%2Fy",
		"s://r{#path}":          "s://r#x/y",
		"s://r{.q}":             "s://r.1",
		"s://r{?missing}":       "s://r",
		"s://{unterminated":     "s://{unterminated",
		"s://{q}/{q}":           "s://1/1",
		"s://{id:3}{&q}":        "s://a%20b%2Fc&q=1",
		"s://{;q}":              "s://;q=1",
		"s://é{id}":             "s://éa%20b%2Fc",
		"s://{+path}?x={empty}": "s://x/y?x=",
	} {
		if got := expandTemplate(tmpl, v); got != want {
			t.Errorf("%s → %q, want %q", tmpl, got, want)
		}
	}
	vars := templateVars("s://{a}{?b,c}{/a}{+d*}")
	var names []string
	for _, tv := range vars {
		names = append(names, tv.name)
	}
	if strings.Join(names, ",") != "a,b,c,d" || !vars[1].optional() || vars[0].optional() {
		t.Fatalf("vars %v", vars)
	}
}
