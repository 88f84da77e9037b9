package claudecfg

import (
	"path/filepath"
	"strings"

	"github.com/mcp-heal/mcp-heal/internal/jsoncheck"
	"github.com/mcp-heal/mcp-heal/internal/regfile"
)

// OAuthServers names the servers Claude Code holds OAuth credentials for
// (~/.claude/.credentials.json "mcpOAuth", keyed "<name>|<hash>"): a shim
// cannot sign in for them, so wrap leaves them alone.
func OAuthServers(o Options) map[string]bool {
	out := map[string]bool{}
	data, err := regfile.ReadConfig(filepath.Join(o.ClaudeDir(), ".credentials.json"))
	if err != nil || jsoncheck.Valid(data) != nil {
		return out
	}
	for _, m := range Members(LastVal(root(data), "mcpOAuth")) {
		name, _, _ := strings.Cut(m.Key, "|")
		out[name] = true
		if n := m.Val.Get("serverName").String(); n != "" {
			out[n] = true
		}
	}
	return out
}
