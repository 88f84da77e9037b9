package wrap

import (
	"os"
	"strings"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
)

// TestRewrapMovesURL: entries an older mcp-heal wrapped with the URL in the
// shim's args (testdata/oldurl.wrapped, written by 37ff092 from
// testdata/oldurl.json) are rewrapped by wrap with the URL in their env,
// once; unwrap still gives the original bytes back.
func TestRewrapMovesURL(t *testing.T) {
	old, err := os.ReadFile("testdata/oldurl.wrapped")
	if err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile("testdata/oldurl.json")
	if err != nil {
		t.Fatal(err)
	}
	got, ch, err := Wrap(old, []string{"mcpServers"}, nil, "/opt/mh/mcp-heal")
	if err != nil {
		t.Fatal(err)
	}
	if len(ch) != 2 || ch[0].Action != ActURLMoved || ch[1].Action != ActURLMoved {
		t.Fatalf("changes %+v, want both %s", ch, ActURLMoved)
	}
	obj, _ := claudecfg.At(got, []string{"mcpServers"})
	for _, m := range claudecfg.Members(obj) {
		args, _ := claudecfg.StringArray(claudecfg.LastVal(m.Val, "args"))
		if a := strings.Join(args, " "); strings.Contains(a, "127.0.0.1") || strings.Contains(a, "x.example") || !strings.Contains(a, "--url-env MCP_HEAL_URL") {
			t.Errorf("%s: args %q, want the URL out of them", m.Key, args)
		}
	}
	for _, want := range []string{`"--url-env",`, `"MCP_HEAL_URL": "http://127.0.0.1:9/mcp/${ADV_KEY}/sse"`, `"args": ["shim","--name","plain","--url-env","MCP_HEAL_URL","--transport","sse"],"env": {"MCP_HEAL_URL": "https://x.example/sse"}`} {
		if !strings.Contains(string(got), want) {
			t.Errorf("rewrapped config lacks %s:\n%s", want, got)
		}
	}
	// What a fresh wrap writes: wrapping again changes nothing.
	fresh, _, err := Wrap(orig, []string{"mcpServers"}, nil, "/opt/mh/mcp-heal")
	if err != nil || string(fresh) != string(got) {
		t.Errorf("rewrapped differs from a fresh wrap (%v):\n%s\nfresh:\n%s", err, got, fresh)
	}
	again, ch, _ := Wrap(got, []string{"mcpServers"}, nil, "/opt/mh/mcp-heal")
	if string(again) != string(got) || ch[0].Action != ActAlreadyWrapped {
		t.Errorf("wrap again: %+v\n%s", ch, again)
	}
	back, _, err := Unwrap(got, []string{"mcpServers"}, nil)
	if err != nil || string(back) != string(orig) {
		t.Errorf("unwrap after the move (%v):\n%s\nwant:\n%s", err, back, orig)
	}
}
