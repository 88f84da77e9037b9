//go:build linux

package e2e

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestWrappedRemoteKeyOutOfArgv: a user-scope remote entry with its key in
// the URL's path and a header, both through ${VAR} (issue 31 item 1), is
// wrapped, and the real `claude mcp list` (pinned and newest) connects
// it through the shim: Claude Code expands ${VAR} in the wrapped entry's
// env, the key reaches the server, and while the server answers, no
// process's argv (/proc/*/cmdline, what ps shows) holds the key or the
// header's value; neither does `claude mcp list`'s own output.
func TestWrappedRemoteKeyOutOfArgv(t *testing.T) {
	testenv.NeedsFull(t, "Claude Code")
	const key, hdr = "sk-E2ePathKey0042", "E2eHeaderValue77"
	onReleases(t, false, func(t *testing.T, version string) {
		var mu sync.Mutex
		var seen int
		var leaks []string
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
			return mcp.NewServer(&mcp.Implementation{Name: "keyed", Version: "1.0.0"}, nil)
		}, nil)
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/mcp/"+key+"/x" || r.Header.Get("X-Key") != hdr {
				http.Error(w, "forbidden", http.StatusForbidden)
				return
			}
			// The shim waits on this answer: it is running now.
			cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
			mu.Lock()
			seen++
			for _, p := range cmdlines {
				b, err := os.ReadFile(p)
				if err == nil && (strings.Contains(string(b), key) || strings.Contains(string(b), hdr)) {
					leaks = append(leaks, strings.ReplaceAll(string(b), "\x00", " "))
				}
			}
			mu.Unlock()
			h.ServeHTTP(w, r)
		}))
		defer ts.Close()

		s := newSession(t)
		s.claude = testenv.NPMBin(t, "claude", version)
		s.servers["zap"] = map[string]any{"type": "http", "url": ts.URL + "/mcp/${ADV_KEY}/x", "headers": map[string]any{"X-Key": "${ADV_HDR}"}}
		s.writeClaudeJSON()
		s.env = append(s.env, "ADV_KEY="+key, "ADV_HDR="+hdr)
		bin := testenv.Binary(t)
		if out, err := s.mcpHeal("wrap", "--all", "--shim", bin); err != nil || !strings.Contains(string(out), "zap: wrapped") {
			t.Fatalf("wrap: %v\n%s", err, out)
		}
		cfg, _ := os.ReadFile(filepath.Join(s.home, ".claude.json"))
		if strings.Contains(string(cfg), key) || !strings.Contains(string(cfg), "${ADV_KEY}") {
			t.Fatalf("the wrapped config lost ${ADV_KEY} or holds the key:\n%s", cfg)
		}
		cmd := exec.Command(s.claude, "mcp", "list")
		cmd.Env, cmd.Dir = s.environ(), s.work
		list, _ := cmd.CombinedOutput()
		t.Logf("claude mcp list (%s):\n%s", version, list)
		mu.Lock()
		defer mu.Unlock()
		for _, l := range leaks {
			t.Errorf("argv holds a secret: %s", l)
		}
		if seen == 0 {
			t.Errorf("the server never got a request with the key: Claude Code did not expand ${ADV_KEY} in the entry's env")
		}
		if !strings.Contains(string(list), "zap: "+bin+" shim --name zap --url-env MCP_HEAL_URL") || !strings.Contains(string(list), "✔ Connected") {
			t.Errorf("claude mcp list does not show zap connected through the shim with --url-env:\n%s", list)
		}
		if strings.Contains(string(list), key) || strings.Contains(string(list), hdr) {
			t.Errorf("claude mcp list shows a secret:\n%s", list)
		}
	})
}
