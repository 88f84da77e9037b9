package wrap_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestWrapWhileClaudeCodeWrites: the real Claude Code adds servers to
// ~/.claude.json (`claude mcp add`, which also records its own state in the
// file) while `mcp-heal wrap --all` and `unwrap --all` rewrite the same
// file in a loop. Every server Claude Code added is in the file at the end
// and the file is valid JSON throughout: neither side loses the other's
// update, and mcp-heal never asks to be run again (a rewrite that finds the
// file changed plans again from Claude Code's version). (Measured with
// 2.1.328: `claude mcp add` waits for the lock directory, but its
// first-start write does not, so the swap's own check is what protects that
// one; before Plan.Commit planned again, 1 to 4 of 100 rewrites gave up.)
func TestWrapWhileClaudeCodeWrites(t *testing.T) {
	testenv.NeedsFull(t, "the real Claude Code")
	claude, heal := testenv.NPMBin(t, "claude", testenv.ClaudeCode), testenv.Binary(t)
	base := testenv.TempDir(t)
	home, proj := filepath.Join(base, "home"), filepath.Join(base, "proj")
	os.MkdirAll(home, 0o700)
	os.MkdirAll(proj, 0o755)
	global := filepath.Join(home, ".claude.json")
	if err := os.WriteFile(global, []byte(`{"mcpServers":{"base":{"command":"/bin/true","args":[]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CLAUDE_") && !strings.HasPrefix(kv, "XDG_") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+home, "XDG_STATE_HOME="+filepath.Join(base, "state"), "XDG_DATA_HOME="+filepath.Join(base, "data"),
		"CLAUDE_PROJECT_DIR="+proj, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1")
	run := func(bin string, args ...string) ([]byte, error) {
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = proj, env
		return cmd.CombinedOutput()
	}

	var stop atomic.Bool
	var rewrites, refused, invalid atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; !stop.Load(); i++ {
			args := []string{"wrap", "--all", "--shim", heal}
			if i%2 == 1 {
				args = []string{"unwrap", "--all"}
			}
			out, err := run(heal, args...)
			switch {
			case err == nil:
				rewrites.Add(1)
			case strings.Contains(string(out), "changed while mcp-heal was rewriting it"):
				refused.Add(1) // nothing written, but the user must run it again
			default:
				t.Errorf("%s: %v\n%s", args[0], err, out)
				return
			}
			if b, err := os.ReadFile(global); err != nil || !gjson.ValidBytes(b) {
				invalid.Add(1)
			}
		}
	})
	const adds = 3
	for i := range adds {
		if out, err := run(claude, "mcp", "add", "-s", "user", "added-"+strconv.Itoa(i), "--", "/bin/true"); err != nil {
			t.Errorf("claude mcp add: %v\n%s", err, out)
		}
	}
	stop.Store(true)
	wg.Wait()
	b, _ := os.ReadFile(global)
	t.Logf("%d rewrites by mcp-heal (%d refused as changed) during %d adds by Claude Code", rewrites.Load(), refused.Load(), adds)
	if refused.Load() != 0 {
		t.Errorf("%d rewrites gave up because Claude Code changed the file, want none", refused.Load())
	}
	if invalid.Load() != 0 || !gjson.ValidBytes(b) {
		t.Fatalf("~/.claude.json was not valid JSON %d times:\n%s", invalid.Load(), b)
	}
	for i := range adds {
		if !gjson.GetBytes(b, "mcpServers.added-"+strconv.Itoa(i)).Exists() {
			t.Errorf("the server Claude Code added as added-%d is gone:\n%s", i, b)
		}
	}
	if rewrites.Load() < 4 {
		t.Errorf("only %d rewrites ran beside Claude Code: too few to mean anything", rewrites.Load())
	}
}
