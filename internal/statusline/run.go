package statusline

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/jsoncheck"
	"github.com/mcp-heal/mcp-heal/internal/state"
)

// Wanted reports whether `mcp-heal statusline` without flags is asked for
// the line (Claude Code runs it: its payload on a pipe) rather than for
// its setup (a terminal on stdin, or the /mcp-heal command).
func Wanted(stdin *os.File, getenv func(string) string) bool {
	if getenv("MCP_HEAL_CONTEXT") != "" {
		return false
	}
	return !terminal(stdin)
}

// MaxPayload bounds what is read of stdin: Claude Code's payload is a few
// KiB.
const MaxPayload = 1 << 20

// StdinWait bounds how long the line waits for its payload: Claude Code
// writes it at once, and a writer that never does (or never closes the
// pipe) costs this, never a hung status line.
const StdinWait = 500 * time.Millisecond

// Main prints the status line for the session named on stdin (Claude
// Code's payload: session_id; else $CLAUDE_CODE_SESSION_ID, or the
// Claude Code of $CLAUDE_PID) and returns 0, always: whatever goes wrong
// (no payload, bad JSON, no state directory, a record that cannot be
// read, a panic) prints nothing.
func Main(stdin io.Reader, stdout io.Writer, getenv func(string) string, now func() time.Time) (code int) {
	defer func() {
		if p := recover(); p != nil {
			code = 0
			if getenv("MCP_HEAL_DEBUG") != "" {
				fmt.Fprintf(os.Stderr, "mcp-heal statusline: %v\n%s", p, debug.Stack())
			}
		}
	}()
	session, pid := getenv("CLAUDE_CODE_SESSION_ID"), 0
	if b := readPayload(stdin); b != nil {
		if s := gjson.GetBytes(b, "session_id"); s.Type == gjson.String && s.Str != "" {
			session = s.Str
		}
	}
	if n, err := strconv.Atoi(getenv("CLAUDE_PID")); err == nil && n > 0 {
		pid = n
	}
	if session == "" && pid == 0 {
		return 0 // no session to speak of: every record would match
	}
	recs, err := state.FindSession(session, pid)
	if err != nil {
		return 0
	}
	if line := Line(recs, now(), Color(getenv)); line != "" {
		io.WriteString(stdout, line+"\n")
	}
	return 0
}

// readPayload reads Claude Code's JSON object from stdin: at most
// MaxPayload bytes, for at most StdinWait, done as soon as what was read
// is one whole JSON value (jsoncheck, before gjson reads it); nil for
// anything else (a terminal, nothing, junk, too much, too late).
func readPayload(stdin io.Reader) []byte {
	if f, ok := stdin.(*os.File); ok && terminal(f) {
		return nil
	}
	got := make(chan []byte, 1)
	go func() {
		var buf []byte
		chunk := make([]byte, 8<<10)
		for len(buf) <= MaxPayload {
			n, err := stdin.Read(chunk)
			buf = append(buf, chunk[:n]...)
			if n > 0 && jsoncheck.Valid(buf) == nil {
				got <- buf
				return
			}
			if err != nil {
				break
			}
		}
		got <- nil
	}()
	t := time.NewTimer(StdinWait)
	defer t.Stop()
	select {
	case b := <-got:
		if b == nil || len(b) > MaxPayload || !gjson.ParseBytes(b).IsObject() {
			return nil
		}
		return b
	case <-t.C:
		return nil
	}
}
