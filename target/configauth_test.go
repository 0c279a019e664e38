package target

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A config entry's OAuth client — Cursor's "auth" (with ${env:…}) and
// Claude Code's "oauth" — becomes the target's OAuth client; the flags
// override it; the secret is redacted like every other.
func TestConfigOAuthFields(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("CURSOR_SECRET", "s3cr3t-from-env-91")
	cursor := filepath.Join(dir, "cursor.json")
	os.WriteFile(cursor, []byte(`{"mcpServers": {"pipes": {"url": "https://mcp.example.com/mcp",
		"auth": {"CLIENT_ID": "cursor-client", "CLIENT_SECRET": "${env:CURSOR_SECRET}", "scopes": ["read", "write"]}}}}`), 0o600)
	claude := filepath.Join(dir, "claude.json")
	os.WriteFile(claude, []byte(`{"mcpServers": {"notes": {"type": "http", "url": "https://mcp.example.com/mcp",
		"oauth": {"clientId": "claude-client", "scopes": "notes:read notes:write", "callbackPort": 8080}}}}`), 0o600)

	tg, err := resolveArgs(t, []string{"--config", cursor}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := tg.Auth
	if a == nil || a.ClientID != "cursor-client" || a.ClientSecret != "s3cr3t-from-env-91" || strings.Join(a.Scopes, " ") != "read write" {
		t.Fatalf("cursor auth: %+v", a)
	}
	if got := tg.Redactor().String("secret " + a.ClientSecret); strings.Contains(got, "s3cr3t") {
		t.Errorf("the config's client secret is not redacted: %q", got)
	}
	if _, err := resolveArgs(t, []string{"--config", cursor, "--client-credentials"}, nil); err != nil {
		t.Errorf("--client-credentials with the config's pair: %v", err)
	}

	tg, err = resolveArgs(t, []string{"--config", claude}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a := tg.Auth; a == nil || a.ClientID != "claude-client" || a.ClientSecret != "" || strings.Join(a.Scopes, " ") != "notes:read notes:write" ||
		a.CallbackURL != "http://localhost:8080/callback" {
		t.Fatalf("claude code oauth: %+v", a)
	}
	tg, err = resolveArgs(t, []string{"--config", claude, "--client-id", "flag-client", "--scope", "x", "--callback-url", "http://127.0.0.1:9999/cb"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a := tg.Auth; a.ClientID != "flag-client" || strings.Join(a.Scopes, " ") != "x" || a.CallbackURL != "http://127.0.0.1:9999/cb" {
		t.Errorf("the flags do not override the config: %+v", a)
	}
	if _, err := resolveArgs(t, []string{"--config", claude, "--client-credentials"}, nil); err == nil {
		t.Errorf("--client-credentials without a secret was accepted")
	}
	// -H Authorization gives the credentials itself: no OAuth at all.
	tg, err = resolveArgs(t, []string{"--config", claude, "-H", "Authorization: Bearer abc"}, nil)
	if err != nil || tg.Auth != nil {
		t.Errorf("with -H Authorization: auth %+v, err %v", tg.Auth, err)
	}
}
