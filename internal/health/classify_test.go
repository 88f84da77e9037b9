package health

import "testing"

func TestClassify(t *testing.T) {
	tests := []struct {
		text   string
		class  Class
		server string
		retry  int
	}{
		// Every string in docs/claude-code-behaviour.md.
		{`Connection closed`, ConnClosed, "", 0},
		{`MCP error -32000: Connection closed`, ConnClosed, "", 0},
		{`MCP server "tiny" is not connected`, NotConnected, "tiny", 0},
		{`<tool_use_error>Error: No such tool available: mcp__tiny__echo. Its MCP server 'tiny' has disconnected. Continue without this tool; it becomes callable again only if the server reconnects.</tool_use_error>`, Disconnected, "tiny", 0},
		{`ECONNREFUSED: Unable to connect. Is the computer able to access the url?`, Refused, "", 0},
		{`Claude Code tried to connect to MCP server "everything" again and could not. It can be tried again in 10 s.`, GaveUp, "everything", 10},
		{`<tool_use_error>Error: No such tool available: mcp__everything__echo. MCP server "everything" did not connect when it was last tried, and is not tried again for 8 s.</tool_use_error>`, Cooldown, "everything", 8},
		{`Error POSTing to endpoint: {"error":{"code":-32001,"message":"Session not found"},"id":3,"jsonrpc":"2.0"}`, SessionLost, "", 0},
		{`MCP server "tiny" session expired`, SessionLost, "tiny", 0},
		{`MCP server "tiny" tool "echo" sent no response or progress for 30s; aborting. If this server is configured in your MCP settings, set a per-server "timeout" (ms) to allow longer silent runs for just this server; otherwise set CLAUDE_CODE_MCP_TOOL_IDLE_TIMEOUT (ms) globally (0 disables).`, IdleTimeout, "tiny", 0},
		{`MCP error -32001: Request timed out`, RequestTimeout, "", 0},
		{`MCP server "tiny" connection closed before the tool call ran`, ClosedBeforeRun, "tiny", 0},
		{`MCP server "tiny" connection closed before the tool call was answered. The tool may have run: check whether it did before running it again.`, ClosedBeforeAnswer, "tiny", 0},
		{`Tool mcp__tiny__echo is not available yet. Its MCP server 'tiny' is still connecting; try again shortly.`, StillConnecting, "tiny", 0},
		{"ECONNRESET: The socket connection was closed unexpectedly. For more information, pass `verbose: true` in the second argument to fetch()", Reset, "", 0},
		// mcp-heal's shims (PROTOCOL.md, -32603).
		{`MCP error -32603: server process exited (signal 9) while this call was running; it was restarted; the call was not retried and may or may not have taken effect`, ShimRestarted, "", 0},
		{`MCP error -32603: MCP server "tiny": the server process exited with code 1 while this call was running; it was restarted; the call was not retried (not read-only or idempotent) and may or may not have taken effect`, ShimRestarted, "", 0},
		{`MCP error -32603: MCP server "tiny": the server was restarted on purpose (SIGHUP) while this call was running; the call was not retried and may or may not have taken effect`, ShimRestarted, "", 0},
		{`MCP error -32603: MCP server "tiny" is failing (crash loop): it exited with code 1 after 12ms; last stderr: boom; mcp-heal keeps restarting it (at most every 30s); this call was not sent`, ShimFailed, "tiny", 0},
		{`MCP error -32603: MCP server "remote" (https://example.com/mcp) is unreachable: 4 connection attempts failed over 31s; last error: connection refused; this call waited 30s and was not sent`, ShimUnreachable, "remote", 0},
		{`MCP error -32603: MCP server "tiny" is marked failed after 5 restarts in 30s: exited with code 1`, ShimFailed, "", 0},
		// Not disconnects.
		{`tinymcp failure: boom`, "", "", 0},
		{`<tool_use_error>Error: No such tool available: mcp__tiny__nosuchtool</tool_use_error>`, "", "", 0},
		{`db error: Connection closed by peer`, "", "", 0},
		{`fetch failed: ECONNREFUSED 127.0.0.1:80`, "", "", 0},
		{``, "", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			m, ok := Classify(tt.text)
			if ok != (tt.class != "") || m.Class != tt.class || m.Server != tt.server || m.RetryIn != tt.retry {
				t.Fatalf("Classify: got %+v, %v; want class %q server %q retry %d", m, ok, tt.class, tt.server, tt.retry)
			}
		})
	}
}
