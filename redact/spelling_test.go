package redact

import (
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// The names issue 14 found leaking: each must be taken for a secret, and
// the look-alikes must not.
func TestIsSecretNamePasswordsAndSignatures(t *testing.T) {
	for name, want := range map[string]bool{
		"password":        true,
		"DB_PASSWORD":     true,
		"PGPASSWORD":      true,
		"db-password":     true,
		"passwd":          true,
		"MYSQL_PWD":       true,
		"pwd":             true,
		"credential":      true,
		"AWS_CREDENTIALS": true,
		"X-Auth":          true,
		"auth":            true,
		"basicAuth":       true,
		"MCP_AUTH_HEADER": true,
		"sig":             true,
		"X-Amz-Sig":       true,
		"signature":       true,
		"X-Signature":     true,
		// The shell's working directory, and words that only look alike.
		"PWD":          false,
		"OLDPWD":       false,
		"author":       false,
		"AUTHOR_NAME":  false,
		":authority":   false,
		"signal":       false,
		"design":       false,
		"assign":       false,
		"Content-Type": false,
	} {
		if got := IsSecretName(name); got != want {
			t.Errorf("IsSecretName(%q) = %v, want %v", name, got, want)
		}
	}
}

// Every way issue 14 found a password on a command line, in an
// environment, in a URL or a header must be redacted.
func TestPasswordsEverywhere(t *testing.T) {
	cases := []struct {
		name   string
		red    *Redactor
		secret string
	}{
		{"--password value", New(nil, nil, "", "server", "--password", "hunter2hunter2"), "hunter2hunter2"},
		{"--db-password=value", New(nil, nil, "", "server", "--db-password=s3cr3tpass"), "s3cr3tpass"},
		{"DB_PASSWORD=value arg", New(nil, nil, "", "env", "DB_PASSWORD=pa55word!", "server"), "pa55word!"},
		{"DB_PASSWORD env", New(nil, []string{"DB_PASSWORD=pa55word!"}, ""), "pa55word!"},
		{"PGPASSWORD env", New(nil, []string{"PGPASSWORD=pgpa55"}, ""), "pgpa55"},
		{"DATABASE_URL env", New(nil, []string{"DATABASE_URL=postgres://app:dbpa55w0rd@db.internal:5432/app"}, ""), "dbpa55w0rd"},
		{"DATABASE_URL arg", New(nil, nil, "", "server", "--db", "postgres://app:dbpa55w0rd@db/app?sslmode=off"), "dbpa55w0rd"},
		{"URL in a flag's value", New(nil, nil, "", "--dsn=mysql://root:r00tpw@tcp/db"), "r00tpw"},
		{"?password=", New(nil, nil, "https://example.com/mcp?password=qpa55word"), "qpa55word"},
		{"?sig=", New(nil, nil, "https://acct.blob.example/mcp?sv=2024&sig=AbCdEf%2B123"), "AbCdEf+123"},
		{"?sig= as typed", New(nil, nil, "https://acct.blob.example/mcp?sv=2024&sig=AbCdEf%2B123"), "AbCdEf%2B123"},
		{"X-Auth header", New(http.Header{"X-Auth": {"xauthvalue"}}, nil, ""), "xauthvalue"},
		{"URL in a header", New(http.Header{"X-Upstream": {"redis://:cachepw99@cache:6379"}}, nil, ""), "cachepw99"},
		{"credentials flag", New(nil, nil, "", "--credentials", "cr3dential"), "cr3dential"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, text := range []string{
				"connected to server " + c.secret + " ok",
				`{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"bad ` + c.secret + `"}}`,
			} {
				if got := c.red.String(text); strings.Contains(got, c.secret) || !strings.Contains(got, Placeholder) {
					t.Errorf("String(%q) = %q", text, got)
				}
				if got := string(c.red.Bytes([]byte(text))); strings.Contains(got, c.secret) {
					t.Errorf("Bytes(%q) = %q", text, got)
				}
			}
		})
	}
}

// A switch that turns something off does not take the next argument as its
// value, and the shell's PWD is not a secret.
func TestSwitchesAndPWDAreNotSecrets(t *testing.T) {
	r := New(nil, []string{"PWD=/home/someone"}, "", "--no-auth", "server.py", "--signal", "SIGTERM")
	if got := r.String("cd /home/someone; run server.py --signal SIGTERM"); got != "cd /home/someone; run server.py --signal SIGTERM" {
		t.Errorf("redacted what is no secret: %q", got)
	}
}

// spellings are the ways a JSON writer may spell the secret sk/ab+cdä1A
// inside a string: as Go does, as PHP does (escaping "/"), with \u escapes
// for non-ASCII and even for plain letters, with upper-case hex, and with
// a surrogate-free rune spelled twice over.
var spellings = []string{
	`sk/ab+cdä1A`,
	`sk\/ab+cdä1A`,
	`sk\/ab+cd\u00e41A`,
	`sk\/ab+cd\u00E41\u0041`,
	`\u0073\u006b\u002f\u0061\u0062\u002b\u0063\u0064\u00e4\u0031\u0041`,
}

const spelledSecret = "sk/ab+cdä1A"

func TestEverySpellingIsRedacted(t *testing.T) {
	var b Builder
	b.AddValue(spelledSecret)
	r := b.Build()
	for _, sp := range spellings {
		msg := `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"echo: ` + sp + ` (done)"}],"path":"a\/b"}}`
		for name, got := range map[string]string{
			"Bytes":  string(r.Bytes([]byte(msg))),
			"String": r.String(msg),
		} {
			if !json.Valid([]byte(got)) {
				t.Fatalf("%s(%s) is not JSON: %s", name, sp, got)
			}
			var v struct {
				Result struct {
					Content []struct{ Text string } `json:"content"`
					Path    string                  `json:"path"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(got), &v); err != nil {
				t.Fatal(err)
			}
			if text := v.Result.Content[0].Text; strings.Contains(text, spelledSecret) || text != "echo: "+Placeholder+" (done)" {
				t.Errorf("%s(%s): decoded text %q", name, sp, text)
			}
			// The rest of the message is kept byte for byte.
			if !strings.Contains(got, `"path":"a\/b"`) || !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":7,`) {
				t.Errorf("%s(%s) changed more than the secret: %s", name, sp, got)
			}
		}
	}
	// A message whose strings escape something but hold no secret comes
	// back as it was, the very same slice.
	clean := []byte(`{"params":{"message":"a\/b \u00e4"}}`)
	if got := r.Bytes(clean); &got[0] != &clean[0] {
		t.Error("Bytes copied a message with nothing to redact")
	}
}

// A secret echoed inside a JSON string inside text that is not JSON (an
// error that quotes the server's body) is caught too.
func TestEscapedSecretInPlainText(t *testing.T) {
	var b Builder
	b.AddValue(spelledSecret)
	r := b.Build()
	got := r.String(`POST /mcp: 400 Bad Request: body {"error":"token sk\/ab+cd\u00e41A rejected"`)
	if strings.Contains(got, `sk\/ab`) || !strings.Contains(got, Placeholder+" rejected") {
		t.Errorf("got %q", got)
	}
}

func FuzzDecodeEscapes(f *testing.F) {
	for _, s := range append(spellings, `\ud83d\ude00`, `\ud83d`, `\u12`, `\`, `a\\b`, `x\u0041y\/z`) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		dec, runs := decodeEscapes(s)
		// Every decoded span maps back to a source span, in order, and
		// the whole decodes from the whole.
		if len(dec) > 0 && (sourceStart(runs, 0) != 0 || sourceEnd(runs, len(dec)) != len(s)) {
			t.Fatalf("%q → %q: the whole maps to [%d, %d)", s, dec, sourceStart(runs, 0), sourceEnd(runs, len(dec)))
		}
		for i := 0; i < len(dec); i++ {
			a, b := sourceStart(runs, i), sourceEnd(runs, i+1)
			if a < 0 || b > len(s) || a >= b {
				t.Fatalf("%q → %q: byte %d maps to [%d, %d)", s, dec, i, a, b)
			}
			if i > 0 && a < sourceStart(runs, i-1) {
				t.Fatalf("%q: the mapping goes back at %d", s, i)
			}
		}
		// encoding/json reads invalid UTF-8 as U+FFFD; the redactor
		// compares bytes, so it keeps them.
		if utf8.ValidString(s) && json.Valid([]byte(`"`+s+`"`)) {
			var want string
			_ = json.Unmarshal([]byte(`"`+s+`"`), &want)
			if dec != want {
				t.Fatalf("decodeEscapes(%q) = %q, encoding/json says %q", s, dec, want)
			}
		}
	})
}

// spell writes secret inside a JSON string, escaping rune i as \uXXXX when
// bit i of mask is set (and "/" as \/ when bit i+32 is).
func spell(secret string, mask uint64) string {
	var b strings.Builder
	for i, r := range []rune(secret) {
		switch {
		case mask>>(i%32)&1 == 1:
			for _, u := range utf16.Encode([]rune{r}) {
				fmt.Fprintf(&b, `\u%04x`, u)
			}
		case r == '/' && mask>>(32+i%32)&1 == 1:
			b.WriteString(`\/`)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// However a JSON writer spells the secret, and whatever surrounds it,
// nothing that decodes to it survives Bytes, and the message stays JSON.
func FuzzRedactSpelled(f *testing.F) {
	f.Add("you sent ", " (done)", uint64(0))
	f.Add("sk/ab+cdä1", "", uint64(0xffff))
	f.Add("\\", "\"", uint64(1<<33))
	f.Fuzz(func(t *testing.T, prefix, suffix string, mask uint64) {
		var b Builder
		b.AddValue(spelledSecret)
		r := b.Build()
		p, _ := json.Marshal(prefix)
		s, _ := json.Marshal(suffix)
		msg := `{"a":"` + string(p[1:len(p)-1]) + spell(spelledSecret, mask) + string(s[1:len(s)-1]) + `","b":1}`
		out := r.Bytes([]byte(msg))
		var v struct{ A string }
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("%s became invalid JSON: %s", msg, out)
		}
		if strings.Contains(v.A, spelledSecret) {
			t.Fatalf("%s → %s still decodes to the secret", msg, out)
		}
	})
}

// A large message costs at most a copy or two of itself to redact, however
// it escapes: the client lets messages reach 32 MiB, and the TUI redacts
// every message it keeps.
func TestLargeMessageIsCheap(t *testing.T) {
	r := testRedactor()
	big := []byte(`{"jsonrpc":"2.0","id":1,"result":{"text":"` + strings.Repeat("abc ", 2<<20) + `a\/b"}}`) // 8 MiB, one escape
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out := r.Bytes(big)
	runtime.ReadMemStats(&after)
	if &out[0] != &big[0] {
		t.Error("a message with no secret was copied")
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 3*uint64(len(big)) {
		t.Errorf("redacting %d bytes allocated %d", len(big), n)
	}
}
