// Package bridge connects the shim to a remote MCP server: the Streamable
// HTTP transport (2025-03-26 and later, including the 2026-07-28 stateless
// era) and the legacy HTTP+SSE transport (2024-11-05), behind the
// upstream.Dialer/Conn interface the shim uses for a child process.
//
// A Conn is one remote session. The bridge does not recover anything
// itself: recovery (handshake replay, state replay, retry policy, queue)
// lives in the shim, once for both kinds of upstream. The bridge's job is
// to report precisely:
//
//   - Dial reaches the server before it returns (a GET on the URL, which
//     also tells the transports apart), so a server that is down fails Dial
//     in milliseconds with a descriptive error and the shim backs off.
//   - A Conn dies on session loss (404, or a 4xx whose body says the
//     session is unknown; never 401/403), on a refused or broken
//     connection, on 502/503/504, and when a stream it cannot resume drops.
//     Exit.Reason is one line ("session lost: HTTP 404 session not found");
//     Exit.Undelivered lists the requests the server refused or that were
//     never written, which the shim may always re-send.
//   - Send returns ErrDead only when the message was not sent at all.
//   - In the stateless era (2026-07-28) a lost response stream cancelled
//     its request: nothing is resumed, and a request the shim sends again
//     after such a loss goes out under a new id, its answers mapped back
//     to the client's id (reissue.go). A subscriptions/listen stream that
//     closes is re-opened that way without ending the connection, within
//     bounds (listen.go).
//
// Secrets (header values, URL credentials and query values) never appear
// in Target, logs, errors or exit reasons.
package bridge
