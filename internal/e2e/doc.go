// Package e2e is the end-to-end suite: the real Claude Code CLI runs whole
// sessions against Model, a scripted local stand-in for the Anthropic
// Messages API, with the mcp-heal plugin loaded and real MCP servers that
// the tests kill, hang and restart mid-session.
//
// The non-test code here is the stand-in model and the helpers that read
// what Claude Code sent it; the sessions, scenarios and the `-report` table
// live in the _test.go files.
package e2e
