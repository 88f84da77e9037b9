//go:build unix

package hook_test

import (
	"context"
	"os"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/hook"
)

// BenchmarkPreToolUseInProcess is the healthy path's own work, without
// the process around it.
func BenchmarkPreToolUseInProcess(b *testing.B) {
	_, payload := healthyWorld(b)
	h := hook.New(os.Getenv, hook.NewLogger())
	for b.Loop() {
		if out := h.Handle(context.Background(), hook.PreToolUse, payload); out != nil {
			b.Fatalf("got %s", out)
		}
	}
}
