package proc

import (
	"io"
	"log/slog"
	"os"
	"syscall"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/rawio"
)

// withDefaults fills in the defaults of cfg's optional fields.
func withDefaults(cfg Config) Config {
	if cfg.TailLines <= 0 {
		cfg.TailLines = 20
	}
	if cfg.StopStep <= 0 {
		cfg.StopStep = 2 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return cfg
}

// stderrFile is where a guardian logs: the shim's stderr when it is a
// file (Claude Code's MCP log), else nowhere.
func stderrFile(cfg Config) *os.File {
	f, _ := cfg.Stderr.(*os.File)
	return f
}

// spawned is a started child: how to wait for and signal it, and the
// parent's ends of its pipes.
type spawned struct {
	ch                    child
	pid                   int
	started               time.Time
	stdin, stdout, stderr *os.File
	// mark, when set, is told of the writes to stdin that may leave a
	// line unfinished (a kept server's guardian: guardian.Child.MarkWrite).
	mark func(open bool)
	// prefix is read before stdout: the start of a line a kept server's
	// guardian read while nobody was attached.
	prefix []byte
}

// child is a started server, run directly or under a guardian.
type child interface {
	// wait blocks until the leader has exited and what was left of its
	// group is killed.
	wait() status
	// signal signals the child's process group.
	signal(sig syscall.Signal) error
	// release lets go of the child once it is done.
	release()
}

// status is how a child ended.
type status struct {
	exited bool
	code   int
	sig    syscall.Signal
	err    error
	note   string // added to the reason (e.g. it daemonized)
	strays int    // processes it had left outside its group, stopped with it
	// detached: the child runs on under a kept guardian (Detach).
	detached bool
}

// writer is where messages to the server are written.
func (sp spawned) writer() io.Writer {
	if sp.mark != nil {
		return &lineWriter{w: rawio.Writer(sp.stdin), mark: sp.mark}
	}
	return rawio.Writer(sp.stdin)
}
