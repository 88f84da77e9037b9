//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// TestWrapKeep: wrap --keep puts --keep before the server command in the
// shim's arguments (stdio entries only), and unwrap restores the entry.
func TestWrapKeep(t *testing.T) {
	c := newCfgEnv(t)
	before := c.snapshot()
	if code, _, errOut := c.run("wrap", "--keep", "10m", "--shim", "/opt/mh/mcp-heal", "mem", "api"); code != 0 {
		t.Fatalf("wrap --keep: %d %s", code, errOut)
	}
	b, err := os.ReadFile(filepath.Join(c.dots, "claude.json"))
	if err != nil {
		t.Fatal(err)
	}
	args := gjson.GetBytes(b, "mcpServers.mem.args").Array()
	var got []string
	for _, a := range args {
		got = append(got, a.String())
	}
	if s := strings.Join(got, " "); !strings.HasPrefix(s, "shim --name mem --keep 10m0s --keep-env MEMORY_FILE -- npx -y @modelcontextprotocol/server-memory") {
		t.Errorf("wrapped args: %s", s)
	}
	if strings.Contains(gjson.GetBytes(b, "mcpServers.api.args").Raw, "--keep") {
		t.Errorf("a remote entry got --keep: %s", gjson.GetBytes(b, "mcpServers.api").Raw)
	}
	if code, _, errOut := c.run("unwrap", "mem", "api"); code != 0 {
		t.Fatalf("unwrap: %d %s", code, errOut)
	}
	after := c.snapshot()
	for f, v := range before {
		if after[f] != v {
			t.Errorf("%s not restored by unwrap", f)
		}
	}
}
