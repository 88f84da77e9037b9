package health

import (
	"strings"

	"github.com/mcp-heal/mcp-heal/internal/text"
)

// Audience is who reads a piece of advice, which decides how it names a
// command: plugin users have no mcp-heal on PATH, so inside Claude Code the
// advice is the slash command.
type Audience int

const (
	// Shell: someone who ran the mcp-heal binary in a terminal.
	Shell Audience = iota
	// Claude: the model or the user inside Claude Code (hooks, /mcp-heal).
	Claude
)

// EnvContext is set to ContextClaude by the plugin's launcher when it runs
// the binary for the /mcp-heal slash command (plugin/mcp-heal, "command").
const (
	EnvContext    = "MCP_HEAL_CONTEXT"
	ContextClaude = "claude-code"
)

// FromEnv is the audience of a command run with this environment.
func FromEnv(getenv func(string) string) Audience {
	if getenv(EnvContext) == ContextClaude {
		return Claude
	}
	return Shell
}

// Cmd names an mcp-heal subcommand line the reader can run:
// "/mcp-heal heal x" inside Claude Code, "mcp-heal heal x" in a shell.
func (a Audience) Cmd(line string) string {
	if a == Claude {
		return "/mcp-heal " + line
	}
	return "mcp-heal " + line
}

// Hint is a hint that quotes commands as 'mcp-heal ...', for this reader:
// inside Claude Code they become '/mcp-heal ...'.
func (a Audience) Hint(h string) string {
	if a == Claude {
		return strings.ReplaceAll(h, "'mcp-heal ", "'/mcp-heal ")
	}
	return h
}

// Reconnect names Claude Code's reconnect command for server, which only
// exists inside Claude Code: a shell reader is told where to type it.
func (a Audience) Reconnect(server string) string {
	if a == Claude {
		return "/mcp reconnect " + text.Name(server)
	}
	return "/mcp reconnect " + text.Name(server) + " in Claude Code"
}

// ReconnectEach names Claude Code's reconnect command for each server,
// quoted: "'/mcp reconnect a', '/mcp reconnect b'" (a general form past three).
func ReconnectEach(servers []string) string {
	if len(servers) > 3 {
		return "/mcp reconnect <name> for each"
	}
	parts := make([]string, len(servers))
	for i, n := range servers {
		parts[i] = "/mcp reconnect " + text.Name(n)
	}
	return "'" + strings.Join(parts, "', '") + "'"
}
