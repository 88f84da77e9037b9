package proc

import (
	"sync"

	"github.com/mcp-heal/mcp-heal/internal/redact"
)

// maxTailLine bounds one remembered stderr line.
const maxTailLine = 512

// tail keeps the last n lines written to it, redacted and truncated.
type tail struct {
	mu    sync.Mutex
	n     int
	lines []string
}

func (t *tail) add(line []byte) {
	if len(line) == 0 {
		return
	}
	if len(line) > maxTailLine {
		line = append(line[:maxTailLine:maxTailLine], "…"...)
	}
	s := redact.String(string(line))
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) >= t.n {
		copy(t.lines, t.lines[1:])
		t.lines = t.lines[:len(t.lines)-1]
	}
	t.lines = append(t.lines, s)
}

func (t *tail) get() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.lines...)
}
