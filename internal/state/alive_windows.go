package state

import "github.com/mcp-heal/mcp-heal/internal/procinfo"

// Alive reports whether a process with pid exists and has not exited
// (Windows lets a process that exited be opened while anyone holds a
// handle to it: procinfo tells it from a live one by its exit code).
func Alive(pid int) bool { return procinfo.Alive(pid) }
