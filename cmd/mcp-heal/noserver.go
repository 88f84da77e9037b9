package main

import (
	"fmt"
	"strings"

	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
	"github.com/mcp-heal/mcp-heal/internal/cli"
)

// noServerError is the usage error for server names that are not
// configured for project: its hint names the servers that are. (A usage
// error is the command line's: it lives here, not in claudecfg, which the
// shim links.)
func noServerError(project string, names []string, servers []claudecfg.Server) error {
	var known []string
	for _, s := range servers {
		known = append(known, s.Name)
	}
	hint := "add one with 'claude mcp add', or pass --project DIR: this project has no MCP servers"
	if len(known) > 0 {
		hint = "name one of: " + strings.Join(known, ", ")
	}
	return &cli.UsageError{Msg: fmt.Sprintf("no MCP server named %s for %s", cli.QuoteList(names), project), Hint: hint}
}
