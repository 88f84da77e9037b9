// Package jsonrpc frames newline-delimited JSON-RPC 2.0 messages as the MCP
// stdio transport defines them, peeks at the few members a proxy routes on
// (id, method, result/error) without decoding the rest, and builds error
// replies.
//
// Messages are handled as raw bytes: a proxy forwards what it received as it
// received it, and ids are kept byte-exact (no float64 round trip), so maps
// keyed by id use the raw id text.
package jsonrpc
