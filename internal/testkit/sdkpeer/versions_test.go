package sdkpeer_test

import (
	"bufio"
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"testing"

	"inflight/internal/testkit/sdkpeer"
)

// EnvVersions makes a peer legacy-only to a modern probe: go-sdk refuses
// the modern server/discover with the versions it supports (-32022), and
// mcp-go answers it listing only the pinned ones.
func TestVersionsPin(t *testing.T) {
	probe := `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + modernMeta + `}}}` + "\n"
	for _, name := range sdkpeer.Names {
		cmd := exec.Command(sdkpeer.BuildPeer(t, name))
		cmd.Env = append(cmd.Environ(), sdkpeer.EnvVersions+"=2025-11-25")
		// Stdin stays open until the answer is read: go-sdk writes nothing
		// once its input has ended.
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(stdin, probe); err != nil {
			t.Fatal(err)
		}
		out, err := bufio.NewReader(stdout).ReadBytes('\n')
		_ = stdin.Close()
		if werr := cmd.Wait(); err != nil || werr != nil {
			t.Fatalf("%s: read %v, exit %v", name, err, werr)
		}
		var m struct {
			Result struct {
				SupportedVersions []string `json:"supportedVersions"`
			} `json:"result"`
			Error struct {
				Data struct {
					Supported []string `json:"supported"`
				} `json:"data"`
			} `json:"error"`
		}
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("%s: %v: %s", name, err, out)
		}
		got := slices.Concat(m.Result.SupportedVersions, m.Error.Data.Supported)
		if !slices.Equal(got, []string{"2025-11-25"}) {
			t.Errorf("%s pinned to 2025-11-25 answers the modern probe with versions %v: %s", name, got, out)
		}
	}
}
