package hook

import (
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/mcp-heal/mcp-heal/internal/redact"
	"github.com/mcp-heal/mcp-heal/internal/state"
)

// maxLogBytes is the size past which the hook log starts over (the old one
// is kept as hook.log.1).
const maxLogBytes = 1 << 20

// LogPath is where hooks log: stdout belongs to Claude Code, and stderr of
// a hook that exits 0 is shown to nobody.
func LogPath() string { return filepath.Join(state.Dir(), "hook.log") }

// lazyFile opens the log on the first write, so a hook that has nothing to
// say never touches the disk.
type lazyFile struct {
	once sync.Once
	f    *os.File
}

func (l *lazyFile) Write(p []byte) (int, error) {
	l.once.Do(func() {
		if state.EnsureDir(state.Dir()) != nil {
			return
		}
		path := LogPath()
		if st, err := os.Stat(path); err == nil && st.Size() > maxLogBytes {
			_ = os.Rename(path, path+".1")
		}
		// Never through a link planted in the state dir (state.OpenFile).
		l.f, _ = state.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE)
	})
	if l.f == nil {
		return len(p), nil
	}
	// Hook log lines quote errors and servers' answers: the one rule.
	if _, err := l.f.Write([]byte(redact.String(string(p)))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// NewLogger returns a logger that appends to LogPath on first use.
func NewLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(&lazyFile{}, &slog.HandlerOptions{Level: slog.LevelInfo}))
}
