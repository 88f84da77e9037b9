// Package guardian runs an MCP server under a small per-server process, the
// guardian (`mcp-heal guardian`, the same binary re-executed), so that
// nothing the server started outlives it, whatever happens to the shim.
//
// The shim starts the guardian with one end of a unix socketpair; the
// guardian starts the server in a process group of its own, marks every
// process of the tree with a cookie in its environment, and hands the
// server's stdin, stdout and stderr back over the socket (SCM_RIGHTS), so the
// JSON-RPC data path stays shim <-> server with nothing in between. The
// socket is the lifeline both ways:
//   - the shim goes away (exit, crash, SIGKILL): the guardian reads EOF,
//     stops the server with the stop ladder of the MCP stdio transport
//     (stdin closed, SIGTERM to the group, SIGKILL to the group), kills every
//     process carrying the cookie, and exits;
//   - the guardian dies: the shim reads EOF and kills the server's group and
//     every process carrying the cookie.
//
// Why a cookie: a process group is left by setsid(2), and a re-parented
// orphan is not the guardian's child on macOS (no sub-reaper there). The
// environment is inherited through fork, exec, setsid and double forks, so
// scanning the processes of our uid for the cookie finds the whole tree on
// Linux (/proc/PID/environ) and macOS (sysctl kern.procargs2) alike: the
// technique of Jenkins' ProcessTreeKiller (BUILD_ID). On Linux the guardian
// is also a child sub-reaper (PR_SET_CHILD_SUBREAPER), so orphans that scrub
// their environment still come back to it and are killed.
//
// A server whose leader exits while cookie-carrying processes live on
// outside its group has daemonized (e.g. setsid and exit): they are killed
// and the exit says so, so the shim reports it and backs off instead of
// leaking one daemon per respawn.
//
// A kept guardian (ServeKept, `shim --keep`) outlives its shims and serves
// the next one over a unix socket. It still only moves descriptors and
// bytes: what the MCP session is (the handshake to answer, open requests,
// lists that changed) is internal/keep's, which passes it callbacks
// (KeepHooks); this package never parses JSON-RPC and never imports keep.
package guardian
