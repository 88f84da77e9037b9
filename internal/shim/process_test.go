package shim

import "testing"

func TestDefaultName(t *testing.T) {
	for _, tc := range []struct {
		cmd  []string
		url  string
		want string
	}{
		{[]string{"/usr/bin/my-server", "--flag"}, "", "my-server"},
		{[]string{"npx", "-y", "@modelcontextprotocol/server-memory@1.2.3"}, "", "server-memory"},
		{[]string{"uvx", "mcp-server-fetch"}, "", "mcp-server-fetch"},
		{[]string{"node", "/srv/mcp/index.js"}, "", "index"},
		{[]string{"pnpx", "dlx", "weather"}, "", "weather"},
		{[]string{"npx"}, "", "npx"},
		{nil, "https://mcp.example.com/mcp?key=secret", "mcp.example.com"},
		{nil, "http://user:token@host.example:8080/sse", "host.example:8080"},
		{nil, "http://[::1]:8080/mcp", "[::1]:8080"},
		{nil, "http://user:p%zz@host/", "remote"}, // unparseable: never its userinfo
	} {
		if got := DefaultName(tc.cmd, tc.url); got != tc.want {
			t.Errorf("DefaultName(%q, %q) = %q, want %q", tc.cmd, tc.url, got, tc.want)
		}
	}
}
