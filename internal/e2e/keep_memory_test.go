//go:build unix

package e2e

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestKeptServerMemory: @modelcontextprotocol/server-memory wrapped with
// --keep; an entity is created, Claude Code's process for the server (the
// shim) is SIGTERMed, and the next call reads the entity from the same
// server process.
func TestKeptServerMemory(t *testing.T) {
	testenv.NeedsFull(t, "Claude Code and an npm server")
	t.Parallel()
	memory := testenv.NPMBin(t, "mcp-server-memory", testenv.ServerMemory)
	var s *session
	var before int
	s = newModeSession(t, healed,
		Turn{Tools: []ToolUse{call("mem", "create_entities", map[string]any{"entities": []map[string]any{
			{"name": "mcp-heal", "entityType": "project", "observations": []string{"kept warm"}}}})}},
		Turn{
			Before: func() error {
				if err := s.waitShim("mem", 10*time.Second, func(r *state.Record) bool { return r.Kept && r.ChildPID > 0 }); err != nil {
					return err
				}
				for _, r := range s.shimRecords() {
					if r.Server == "mem" && r.Attached {
						before = r.ChildPID
					}
				}
				_, err := s.killDirectChild("shim")
				return err
			},
			Tools: []ToolUse{call("mem", "read_graph", nil)},
		},
		Turn{Text: "Read it back."},
	)
	s.env = append(s.env, "MEMORY_FILE_PATH="+filepath.Join(t.TempDir(), "memory.jsonl"))
	s.addStdio("mem", true, []string{"--keep", keepWindow.String()}, memory)
	t.Cleanup(func() { stopKept(t, s, "mem") })
	s.drive(false, "Remember mcp-heal, then read it back.", 2)
	logCalls(t, s.model, ToolUseID(1, 0))
	wantOK(t, "read_graph after the shim was SIGTERMed", mustResult(t, s.model, 2, ToolUseID(1, 0)), "kept warm")
	after := 0
	for _, r := range s.shimRecords() {
		if r.Server == "mem" && r.Kept {
			after = r.ChildPID
		}
	}
	t.Logf("server-memory pid before the SIGTERM %d, after %d", before, after)
	if before == 0 || after != before {
		t.Errorf("server-memory pid %d before the shim's SIGTERM, %d after: want the same kept process", before, after)
	}
}
