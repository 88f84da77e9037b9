// Package hook handles the Claude Code hook events mcp-heal subscribes to:
// it decodes the payload, classifies MCP disconnect errors with a catalogue
// of every string Claude Code 2.1.328 (and mcp-heal's own shims) produce,
// heals what can be healed (SIGHUP to a wrapped server's shim, killing a
// hung unwrapped server so Claude Code respawns it), records an incident, and tells the model in one or two
// sentences what happened and what to do next.
//
// Hooks start no process: they never run a command taken from the payload,
// nor one from the MCP config (no probe). They act only on what Claude
// Code itself started (a shim it runs, a hung server among its children)
// and explain the rest; only a command the user runs (doctor, heal) starts
// a server, and only one Claude Code's policy lets run (ccpolicy).
package hook

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/jsoncheck"
	"github.com/mcp-heal/mcp-heal/internal/text"
)

// Input is the part of a hook payload mcp-heal uses.
type Input struct {
	Event     string // hook_event_name
	Session   string // session_id
	Cwd       string
	Source    string // SessionStart: startup, resume, clear, compact
	ToolName  string
	ToolUseID string
	PromptID  string // prompt_id: the user prompt (turn) the call belongs to
	Server    string // mcp_server.name, else derived from the tool name
	// ServerSource is mcp_server.source: the scope the session runs the
	// server from ("user", "local", "project", "plugin", "dynamic").
	ServerSource string
	Error        string // PostToolUseFailure
	IsInterrupt  bool
}

var errNotObject = errors.New("payload is not a JSON object")

// Parse decodes a hook payload. gjson does not validate, so the payload is
// validated first, by jsoncheck: a hook's stdin is untrusted input, and a
// payload nested deeper than gjson's recursion can go is refused there.
func Parse(b []byte) (*Input, error) {
	if err := jsoncheck.Valid(b); err != nil {
		return nil, fmt.Errorf("payload is not valid JSON: %w", err)
	}
	r := gjson.ParseBytes(b)
	if !r.IsObject() {
		return nil, errNotObject
	}
	in := &Input{
		Event:        str(r, "hook_event_name"),
		Session:      str(r, "session_id"),
		Cwd:          str(r, "cwd"),
		Source:       str(r, "source"),
		ToolName:     str(r, "tool_name"),
		ToolUseID:    str(r, "tool_use_id"),
		PromptID:     str(r, "prompt_id"),
		Server:       str(r, "mcp_server.name"),
		ServerSource: str(r, "mcp_server.source"),
		Error:        str(r, "error"),
		IsInterrupt:  r.Get("is_interrupt").Type == gjson.True,
	}
	if in.Server == "" {
		in.Server = ServerFromTool(in.ToolName)
	}
	// Claude Code's error quotes the server's name as it is (MCP server
	// "<name>" is not connected); the error is recorded and shown, and
	// the name in it goes by the one rule as everywhere else.
	if in.Server != "" && in.Error != "" {
		in.Error = strings.ReplaceAll(in.Error, `"`+in.Server+`"`, text.QuotedName(in.Server))
	}
	return in, nil
}

// str returns the member at path when it is a string.
func str(r gjson.Result, path string) string {
	v := r.Get(path)
	if v.Type != gjson.String {
		return ""
	}
	return v.Str
}

// ServerFromTool returns the server part of an MCP tool name
// (mcp__<server>__<tool>), or "" for other tools. Claude Code replaces
// characters outside [A-Za-z0-9_-] in server names, so this is a fallback
// for payloads without mcp_server.name.
func ServerFromTool(tool string) string {
	rest, ok := strings.CutPrefix(tool, "mcp__")
	if !ok {
		return ""
	}
	server, _, ok := strings.Cut(rest, "__")
	if !ok {
		return ""
	}
	return server
}
