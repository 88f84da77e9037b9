// Package interop holds tests only: real MCP servers from npm and the
// official TypeScript SDK client, and the official conformance suite, run
// through `mcp-heal shim`, with the child killed under them.
package interop
