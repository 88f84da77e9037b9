// Package bridge connects the shim to a remote MCP server: the Streamable
// HTTP transport and the legacy HTTP+SSE transport (2024-11-05), behind the
// upstream.Dialer/Conn interface the shim uses for a child process.
package bridge
