//go:build unix

package e2e

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// tmuxSession is an interactive Claude Code session in a private tmux
// server: send-keys types, capture-pane reads.
type tmuxSession struct {
	t      *testing.T
	s      *session
	socket string
	name   string
	Start  time.Time
}

// readyPrompt is on the screen while interactive Claude Code waits for
// input (without a status line, which takes its place). While a plugin's
// monitor runs, the footer may show the mode badges ("⏸ manual mode on ·
// 1 monitor · ↓ to manage") in its place from the first screen on (seen
// on 2.1.328 in a full run): waitScreen(readyPrompt) takes either, unless
// a turn is running ("esc to interrupt").
const readyPrompt = "? for shortcuts"

// isReady reports whether screen shows Claude Code waiting for input.
func isReady(screen string) bool {
	if strings.Contains(screen, readyPrompt) {
		return true
	}
	return strings.Contains(screen, "monitor · ↓ to manage") && strings.Contains(screen, "❯") && !strings.Contains(screen, "esc to interrupt")
}

// startInteractive starts `claude` (no -p) in a detached tmux session
// and waits until its prompt is ready for input: until the screen shows
// ready, for at most within. The test fails if it never does.
func (s *session) startInteractive(ready string, within time.Duration) *tmuxSession {
	s.t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		s.t.Fatalf("tmux is required for the interactive scenarios: %v", err)
	}
	ts := &tmuxSession{t: s.t, s: s, socket: testenv.SocketPath(s.t, "tmux"), name: "e2e"}
	var cmdline []string
	cmdline = append(cmdline, "env", "-i")
	cmdline = append(cmdline, s.environ()...)
	cmdline = append(cmdline, s.claude)
	cmdline = append(cmdline, s.baseArgs()...)
	quoted := make([]string, len(cmdline))
	for i, a := range cmdline {
		quoted[i] = shellQuote(a)
	}
	ts.Start = time.Now()
	if out, err := ts.tmux("new-session", "-d", "-s", ts.name, "-x", "200", "-y", "50", "-c", s.work, strings.Join(quoted, " ")); err != nil {
		s.t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	ts.tmux("set-option", "-t", ts.name, "remain-on-exit", "on")
	s.t.Cleanup(func() {
		if pid := ts.panePID(); pid > 0 {
			s.track(pid)
		}
		s.killAll()
		ts.tmux("kill-server")
	})
	if pid := ts.panePID(); pid > 0 {
		// The pane runs env, which execs claude: same pid.
		s.track(pid)
		s.pid.Store(int64(pid))
	}
	if !ts.waitScreen(ready, within) {
		s.t.Fatalf("interactive claude did not become ready\n%s", ts)
	}
	return ts
}

// ask types line, waits until the model has been asked for turn (the
// turn before it ended; the test fails with failure if it never is),
// then lets the answer reach the screen before anything is typed on.
func (ts *tmuxSession) ask(line string, turn int, failure string) {
	ts.t.Helper()
	ts.typeLine(line)
	if !ts.s.model.WaitTurn(turn, 3*time.Minute) {
		ts.t.Fatalf("%s\n%s", failure, ts)
	}
	ts.waitScreen(readyPrompt, 30*time.Second)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func (ts *tmuxSession) tmux(args ...string) (string, error) {
	out, err := exec.Command("tmux", append([]string{"-S", ts.socket}, args...)...).CombinedOutput()
	return string(out), err
}

func (ts *tmuxSession) panePID() int {
	out, err := ts.tmux("display-message", "-p", "-t", ts.name, "#{pane_pid}")
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(out))
	return pid
}

// capture returns the visible screen.
func (ts *tmuxSession) capture() string {
	out, _ := ts.tmux("capture-pane", "-p", "-t", ts.name)
	return out
}

// waitScreen waits until the screen contains want.
func (ts *tmuxSession) waitScreen(want string, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if screen := ts.capture(); strings.Contains(screen, want) || want == readyPrompt && isReady(screen) {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// typeLine types text literally and presses Enter.
func (ts *tmuxSession) typeLine(text string) {
	ts.t.Helper()
	if out, err := ts.tmux("send-keys", "-t", ts.name, "-l", text); err != nil {
		ts.t.Fatalf("tmux send-keys: %v\n%s", err, out)
	}
	// Enter only once Claude Code has drawn the text: a key that arrives
	// first would be lost on a loaded machine.
	if !ts.waitScreen(text, 30*time.Second) {
		ts.t.Logf("the typed text %q did not show on the screen; pressing Enter all the same\n%s", text, ts)
	}
	if out, err := ts.tmux("send-keys", "-t", ts.name, "Enter"); err != nil {
		ts.t.Fatalf("tmux send-keys: %v\n%s", err, out)
	}
}

func (ts *tmuxSession) keys(keys ...string) {
	ts.tmux(append([]string{"send-keys", "-t", ts.name}, keys...)...)
}

func (ts *tmuxSession) String() string { return fmt.Sprintf("tmux screen:\n%s", ts.capture()) }

// quit leaves Claude Code the way a user does (/exit), so stdio servers
// get their SIGINT, and waits a little for it to go.
func (ts *tmuxSession) quit() {
	ts.keys("Escape")
	ts.typeLine("/exit")
	pid := ts.s.claudePID()
	if pid > 0 && !testenv.Gone(10*time.Second, pid) {
		ts.t.Logf("claude did not exit after /exit; it is killed at cleanup\n%s", ts)
	}
}
