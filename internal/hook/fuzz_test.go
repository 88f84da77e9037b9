package hook_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
	"github.com/mcp-heal/mcp-heal/internal/hook"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// FuzzHandle feeds arbitrary stdin to every event's handler: it must never
// panic, never block, and reply with nothing or one JSON object. The
// handler's outside world is stubbed: nothing from the input may reach a
// process, so signals are only counted.
func FuzzHandle(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(testenv.HookPayloadDir(f), "*.json"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"hook_event_name":"PostToolUseFailure","error":"MCP server \"a\" is not connected","mcp_server":{"name":"a"}}`))
	f.Add([]byte(`{"tool_calls":[{"tool_name":"mcp____","tool_response":"<tool_use_error>Error: No such tool available: x. Its MCP server '' has disconnected"}]}`))
	f.Add([]byte(``))
	f.Add([]byte(`{"error":"\u0000Connection closed"}`))
	testenv.UseStateDir(f, testenv.TempDir(f))

	signals := 0
	h := &hook.Handler{
		Getenv:   func(k string) string { return map[string]string{"HOME": "/nonexistent", "CLAUDE_PID": "1"}[k] },
		Now:      time.Now,
		Log:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		Discover: func(claudecfg.Options) ([]claudecfg.Server, error) { return nil, nil },
		Signal:   func(int, syscall.Signal) error { signals++; return nil },
		Procs:    func() ([]hook.Proc, error) { return nil, nil },
	}
	events := []string{hook.PreToolUse, hook.PostToolUseFailure, hook.SessionStart, "PostToolBatch", "Stop"}
	f.Fuzz(func(t *testing.T, payload []byte) {
		for _, ev := range events {
			done := make(chan []byte, 1)
			go func() { done <- h.Handle(context.Background(), ev, payload) }()
			select {
			case out := <-done:
				if len(out) > 0 && (out[0] != '{' || out[len(out)-1] != '\n') {
					t.Fatalf("%s: reply is not one JSON object line: %q", ev, out)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("%s blocked on %q", ev, payload)
			}
		}
		if signals != 0 {
			t.Fatalf("a fuzzed payload made the hook signal a process")
		}
	})
}
