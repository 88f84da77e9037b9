// Package interop holds tests only: real MCP servers from npm and the
// official TypeScript SDK client, and the official conformance suite (its
// server scenarios through `mcp-heal shim`, with the server killed under
// it, and through the bridge; its client scenarios with the bridge as the
// client), run against the SDKs' fixtures. They need npm and Node 22, so
// they run in the full suite only. docs/conformance.md holds the measured
// tables (go test ./internal/interop -args -conformance-report).
package interop
