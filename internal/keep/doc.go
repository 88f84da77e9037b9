// Package keep is kept servers (`mcp-heal shim --keep DURATION`): a
// server that outlives its client for a window, so that a reconnect, a
// restart of Claude Code or a shim killed by Claude Code finds the same
// warm server (its logged-in browser, open connections, caches).
//
// The server runs under a kept guardian (internal/guardian) that does not
// die with the shim. Shims find it through a unix socket named after the
// server's identity (a hash of name, command, args, environment and
// working directory) in a 0700 directory; both ends check that the peer
// runs as the same uid. A shim attaches (one at a time), gets the server's
// stdio descriptors, and then talks to the server directly.
//
// The guardian moves descriptors and bytes; this package owns the MCP
// session on both sides of it: the shim's translation (conn.go) and the
// kept guardian process's memory of the session (session.go: the
// callbacks Serve gives the guardian).
//
// Taking over a session that another client began: the new client's
// initialize is answered from the InitializeResult the server gave the
// first one (same protocol version: the server never sees a second
// initialize; another version: the server is restarted), its
// notifications/initialized is swallowed, the old client's subscriptions
// are dropped, and notifications/{tools,prompts,resources}/list_changed is
// sent, after the client's notifications/initialized, for each list that
// changed while nobody was attached. Request ids sent upstream
// carry the attach's epoch, so a late response to a request of the dead
// shim is recognised and dropped, never delivered to the new client.
package keep
