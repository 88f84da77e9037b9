package shim

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/health"
)

// A command that is not found or not executable cannot start however often
// it is tried: that is not a crash loop. The shim marks the server failed
// at its first failed start (calls are answered at once with
// health.CannotStartError, which names the path), records the failure as
// cannot-start for the hooks and status, and instead of respawning at full
// backoff forever it waits for the command file to change (one stat a
// second, no exec) or for a restart on purpose (SIGHUP: /mcp-heal heal).

// startablePoll is how often a command that cannot start is looked at.
const startablePoll = time.Second

// commander is implemented by dialers that start a local command
// (proc.Dialer).
type commander interface{ Command() string }

// startFailure says whether err, from a dial, means the command cannot
// start. Called without mu: it may stat the command.
func (s *Shim) startFailure(err error) (string, bool) {
	c, ok := s.o.Dialer.(commander)
	if !ok {
		return "", false
	}
	return health.StartFailure(c.Command(), err)
}

// waitStartable, after a failed start of a command that cannot start,
// waits until the command's file changes, a restart is asked for, or ctx
// ends; it reports whether it waited (false: the failure was of another
// kind, for the usual backoff).
func (s *Shim) waitStartable(ctx context.Context) bool {
	s.mu.Lock()
	cant := s.cantStart
	s.mu.Unlock()
	if !cant {
		return false
	}
	command := s.o.Dialer.(commander).Command()
	before := s.dialSig
	t := s.clk.NewTimer(startablePoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return true
		case <-s.restartCh:
			return true
		case <-t.C():
			if fileSig(command) != before {
				s.event("command-changed", "command", command)
				return true
			}
			t.Reset(startablePoll)
		}
	}
}

// noteCommand records what the command's file looks like before a Dial,
// so that a change made while the start fails is not missed.
func (s *Shim) noteCommand() {
	if c, ok := s.o.Dialer.(commander); ok {
		s.dialSig = fileSig(c.Command())
	}
}

// fileSig is what the command's file looks like now: where it resolves,
// and its mode, size and time ("" when there is none).
func fileSig(command string) string {
	path := command
	if !strings.ContainsRune(command, '/') {
		lp, err := exec.LookPath(command)
		if err != nil {
			return ""
		}
		path = lp
	}
	st, err := os.Stat(path)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%s %v %d %d", path, st.Mode(), st.Size(), st.ModTime().UnixNano())
}
