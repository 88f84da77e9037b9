package shim

import (
	"encoding/json"
	"strings"

	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/text"
)

// errData is the machine-readable `data` of the shim's -32603 errors.
// reason is one of: not-retried, retries-exhausted, cursor-lost,
// server-failed, unreachable, unreadable-answer.
type errData struct {
	Reason     string      `json:"reason"`
	Retried    bool        `json:"retried"`
	Server     string      `json:"server,omitempty"`
	Method     string      `json:"method,omitempty"`
	Tool       string      `json:"tool,omitempty"`
	Exit       *state.Exit `json:"exit,omitempty"`
	StderrTail []string    `json:"stderr_tail,omitempty"`
	Attempts   int         `json:"attempts,omitempty"`
	Restarts   int         `json:"restarts,omitempty"`
	Target     string      `json:"target,omitempty"`
	WaitedMS   int64       `json:"waited_ms,omitempty"`
	LastError  string      `json:"last_error,omitempty"`
	Bytes      int64       `json:"bytes,omitempty"` // of an answer cut by the server's end
	Task       string      `json:"task,omitempty"`  // the taskId of a task that ended with its server
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return text.Clip(s, 300)
}

func lastLines(lines []string, n int) string {
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ") // the server's words: health.CrashLoopError quotes them
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
