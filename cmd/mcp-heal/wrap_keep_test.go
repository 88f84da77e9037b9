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

// TestWrapKeepAfterWrap: the quick start's `wrap --all`, then `wrap --keep`
// of a server it wrapped: --keep is applied (the entry's shim args
// rewritten as a fresh wrap --keep writes them) and said, where it was
// once ignored without a word; a fresh `wrap --keep` says it kept; a
// second one says it is kept already and writes nothing; a remote entry
// says --keep does not apply to it; unwrap still restores every byte.
func TestWrapKeepAfterWrap(t *testing.T) {
	c := newCfgEnv(t)
	before := c.snapshot()
	shimArgs := func() string {
		b, err := os.ReadFile(filepath.Join(c.dots, "claude.json"))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, a := range gjson.GetBytes(b, "mcpServers.mem.args").Array() {
			got = append(got, a.String())
		}
		return strings.Join(got, " ")
	}
	wrap := func(args ...string) string {
		t.Helper()
		code, out, errOut := c.run(append([]string{"wrap", "--shim", "/opt/mh/mcp-heal"}, args...)...)
		if code != 0 {
			t.Fatalf("wrap %v: %d %s", args, code, errOut)
		}
		return out
	}
	wrap("mem", "api", "proj-srv")
	if s := shimArgs(); strings.Contains(s, "--keep") {
		t.Fatalf("wrap without --keep: %s", s)
	}
	out := wrap("--keep", "10m", "mem", "api", "proj-srv")
	const want = "shim --name mem --keep 10m0s --keep-env MEMORY_FILE -- npx -y @modelcontextprotocol/server-memory"
	if s := shimArgs(); !strings.HasPrefix(s, want) {
		t.Errorf("wrap --keep after wrap: args %s, want them to start %q", s, want)
	}
	for _, w := range []string{"mem: --keep set (user, ", "proj-srv: --keep set (project, ", "(--keep 10m0s); set in the local entry that protects it", "kept: its server keeps running 10m0s after Claude Code lets go of it", "was not kept", "api: already wrapped (user, ", "not kept: --keep applies to stdio servers only", "run in it: '/mcp reconnect mem', "} {
		if !strings.Contains(out, w) {
			t.Errorf("wrap --keep after wrap says:\n%s\nwant %q in it", out, w)
		}
	}
	out = wrap("--keep", "1h", "mem")
	if s := shimArgs(); !strings.HasPrefix(s, "shim --name mem --keep 1h0m0s --keep-env MEMORY_FILE -- npx") || strings.Count(s, "--keep ") != 1 {
		t.Errorf("wrap --keep 1h after --keep 10m: args %s", s)
	}
	if !strings.Contains(out, "was --keep 10m0s") {
		t.Errorf("wrap --keep 1h after --keep 10m says:\n%s", out)
	}
	mid := c.snapshot()
	if out = wrap("--keep", "1h", "mem"); !strings.Contains(out, "mem: already wrapped") || !strings.Contains(out, "kept already (--keep 1h0m0s)") {
		t.Errorf("wrap --keep again says:\n%s", out)
	}
	for f, v := range c.snapshot() {
		if mid[f] != v {
			t.Errorf("%s rewritten by a wrap --keep that changed nothing", f)
		}
	}
	if code, _, errOut := c.run("unwrap", "mem", "api", "proj-srv"); code != 0 {
		t.Fatalf("unwrap: %d %s", code, errOut)
	}
	for f, v := range c.snapshot() {
		if before[f] != v {
			t.Errorf("%s not restored by unwrap", f)
		}
	}

	// A fresh wrap --keep says that it kept.
	if out = wrap("--keep", "10m", "mem"); !strings.Contains(out, "mem: wrapped (user, ") || !strings.Contains(out, "kept: its server keeps running 10m0s") {
		t.Errorf("a fresh wrap --keep says:\n%s", out)
	}
}
