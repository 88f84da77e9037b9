//go:build unix

package guardian_test

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/proc"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestMain doubles as a daemonizing server: started with
// GUARDIAN_TEST=daemonize it starts `sleep` in a session of its own (what
// setsid(1) or a double fork does), writes its pid and exits at once.
func TestMain(m *testing.M) {
	if os.Getenv("GUARDIAN_TEST") == "daemonize" {
		cmd := exec.Command("sleep", "98767")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			os.Exit(3)
		}
		os.WriteFile(os.Getenv("GUARDIAN_PIDFILE"), []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o600)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestShimKilledLeavesNothing: the shim SIGKILLed (Claude Code killing it,
// the OOM killer) must leave no process of its server's tree behind: a
// shell's background job and the server behind `exec` included. Without
// the guardian, Pdeathsig reaches only the shell, and `sleep` lives on
// under PID 1.
func TestShimKilledLeavesNothing(t *testing.T) {
	bin := testenv.Binary(t)
	pidfile := filepath.Join(t.TempDir(), "pids")
	shim := exec.Command(bin, "shim", "--name", "tree", "--", "sh", "-c", `sleep 98765 & echo $! $$ > "$1"; exec "$0" example-server`, bin, pidfile)
	shim.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir(), "XDG_RUNTIME_DIR="+t.TempDir())
	stdin, stdout := testenv.StartPiped(t, shim)
	defer shim.Process.Kill()
	// The server answers through the shim: the data path works.
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.Contains(line, `"result"`) {
		t.Fatalf("initialize through the shim: %q %v", line, err)
	}
	pids := testenv.ReadPIDs(t, pidfile, 2, 15*time.Second) // sleep, then the server (the shell exec'ed it)
	g := testenv.ParentPID(pids[1])
	if g == shim.Process.Pid {
		t.Errorf("the server is the shim's own child: no guardian")
	} else if testenv.ParentPID(g) != shim.Process.Pid {
		t.Errorf("the server's parent %d is not a child of the shim %d", g, shim.Process.Pid)
	}
	shim.Process.Signal(syscall.SIGKILL)
	shim.Wait()
	testenv.WaitGone(t, "after SIGKILL of the shim", 15*time.Second, pids[0], pids[1], g)
}

func guardedConfig(t *testing.T, script string, env ...string) proc.Config {
	return proc.Config{
		Path: "/bin/sh", Args: []string{"-c", script}, Env: append(os.Environ(), env...),
		StopStep: 300 * time.Millisecond, Guardian: []string{testenv.Binary(t), "guardian"},
	}
}

// TestGuardianKilled: when the guardian itself dies, the shim kills the
// server's group and tree, and the exit says why.
func TestGuardianKilled(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	p, err := proc.Start(guardedConfig(t, `sleep 98765 & echo $! $$ > "$PF"; exec sleep 98766`, "PF="+pidfile))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	pids := testenv.ReadPIDs(t, pidfile, 2, 15*time.Second)
	g := testenv.ParentPID(pids[1])
	syscall.Kill(g, syscall.SIGKILL)
	select {
	case <-p.Done():
	case <-time.After(15 * time.Second):
		t.Fatal("the server did not end after its guardian was killed")
	}
	if r := p.Exit().Reason; !strings.Contains(r, "guardian died") {
		t.Errorf("exit reason %q does not say the guardian died", r)
	}
	testenv.WaitGone(t, "after SIGKILL of the guardian", 15*time.Second, pids[0], pids[1], g)
}

// TestDaemonizingServer: a server that starts a process in a session of
// its own and exits leaks one daemon per respawn unless it is detected;
// the guardian kills it and the exit says so.
func TestDaemonizingServer(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "daemon")
	cfg := guardedConfig(t, "")
	cfg.Path, cfg.Args = os.Args[0], nil
	cfg.Env = append(os.Environ(), "GUARDIAN_TEST=daemonize", "GUARDIAN_PIDFILE="+pidfile)
	p, err := proc.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	select {
	case <-p.Done():
	case <-time.After(15 * time.Second):
		t.Fatal("the daemonizing server did not end")
	}
	daemon := testenv.ReadPIDs(t, pidfile, 1, 15*time.Second)[0]
	if r := p.Exit().Reason; !strings.Contains(r, "outside its process group") || !strings.Contains(r, strconv.Itoa(daemon)) || strings.Contains(r, "daemonized") {
		t.Errorf("exit reason %q does not name the daemon %d, or blames the server", r, daemon)
	}
	// The shim's sentence is built from the count, not from the reason.
	if ex := p.Exit(); ex.Strays != 1 || ex.Cause != state.CauseExit {
		t.Errorf("exit %+v: want cause %q and 1 stray", ex.Exit, state.CauseExit)
	}
	testenv.WaitGone(t, "the daemon", 15*time.Second, daemon)
}

// TestStopLadderAndData: under a guardian the data path is the server's
// own pipes, Close runs the ladder (a server ignoring stdin EOF and
// SIGTERM is SIGKILLed), and the guardian exits after.
func TestStopLadderAndData(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	p, err := proc.Start(guardedConfig(t, `trap '' TERM; echo $$ > "$PF"; read x; echo "$x"; while :; do sleep 1; done`, "PF="+pidfile))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Send([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-p.Recv():
		if string(m) != `{"jsonrpc":"2.0","id":1,"result":{}}` {
			t.Errorf("echo: %q", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no echo")
	}
	pids := testenv.ReadPIDs(t, pidfile, 1, 15*time.Second)
	g := testenv.ParentPID(pids[0])
	start := time.Now()
	p.Close()
	if ex := p.Exit(); ex.Signal != "killed" {
		t.Errorf("exit %+v, want killed by SIGKILL", ex.Exit)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("ladder took %v", d)
	}
	testenv.WaitGone(t, "after Close", 15*time.Second, pids[0], g)
}

// TestStartErrors: a server that cannot start is reported as exec would,
// not as a guardian failure.
func TestStartErrors(t *testing.T) {
	cfg := guardedConfig(t, "")
	cfg.Path = filepath.Join(t.TempDir(), "missing")
	_, err := proc.Start(cfg)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), cfg.Path) {
		t.Errorf("missing program: got %v, want a not-exist error naming it", err)
	}
	if strings.Contains(err.Error(), "guardian") {
		t.Errorf("missing program reported as a guardian failure: %v", err)
	}
}
