package example

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestCatalogFile: editing the catalog file changes the lists and makes
// the server announce each changed list, to a handshake-era client and on
// a stateless listen stream that asked for it; an unchanged file
// announces nothing.
func TestCatalogFile(t *testing.T) {
	f := filepath.Join(testenv.TempDir(t), "catalog")
	if err := os.WriteFile(f, []byte("tool first\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	r := start(t, Options{Era: EraHandshake, CatalogFile: f})
	mustInit(t, r.c, "handshake")
	if resp, _ := r.c.Call(ctxT(t), "tools/list", nil); !strings.Contains(string(resp.Result), `"first"`) {
		t.Fatalf("tools/list lacks the catalog's tool: %s", resp.Raw)
	}
	time.Sleep(3 * catalogPoll)
	select {
	case n := <-r.c.Notifications():
		t.Fatalf("unchanged catalog, got %s", n)
	default:
	}
	if err := os.WriteFile(f, []byte("tool first\ntool second\nprompt p1\nresource extra://r1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed"} {
		wantNote(t, r.c, m)
	}
	if got := call(t, r.c, "second", nil).Text(); got != "second" {
		t.Errorf("catalog tool: got %q, want %q", got, "second")
	}
	if resp, _ := r.c.Call(ctxT(t), "prompts/get", map[string]any{"name": "p1"}); resp.Error != nil {
		t.Errorf("prompts/get p1: %s", resp.Raw)
	}
	if resp, _ := r.c.Call(ctxT(t), "resources/read", map[string]any{"uri": "extra://r1"}); resp.Error != nil {
		t.Errorf("resources/read extra://r1: %s", resp.Raw)
	}

	s := start(t, Options{Era: EraStateless, CatalogFile: f})
	mustInit(t, s.c, "stateless")
	go s.c.Call(context.Background(), "subscriptions/listen", map[string]any{
		"notifications": map[string]any{"promptsListChanged": true}})
	wantNote(t, s.c, "notifications/subscriptions/acknowledged")
	if err := os.WriteFile(f, []byte("prompt p2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	n := wantNote(t, s.c, "notifications/prompts/list_changed")
	if !strings.Contains(string(n), `"io.modelcontextprotocol/subscriptionId":`) {
		t.Errorf("list_changed lacks the subscription id: %s", n)
	}
}
