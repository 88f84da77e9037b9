package proc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/procinfo"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// These tests run on unix and, cross-compiled, on Windows (under Wine in
// the full suite): the servers are this test binary re-executed with
// PROC_TEST_ROLE set, not sh, which Windows lacks.
//
//	echo      copies stdin lines to stdout; exits 0 at stdin's end
//	stubborn  ignores SIGTERM, writes {"ready":true}, reads stdin to its
//	          end, never exits
//	exit      exits with PROC_TEST_CODE at once
//	tree      starts a stubborn grandchild, writes {"child":PID,"grandchild":PID},
//	          then echoes
//	shim      runs a tree server with Start and writes its first line and
//	          its own pid, then waits to be killed (a shim that dies)
func init() {
	role := os.Getenv("PROC_TEST_ROLE")
	if role == "" {
		return
	}
	switch role {
	case "echo":
		roleEcho()
	case "stubborn":
		signal.Ignore(syscall.SIGTERM)
		fmt.Println(`{"ready":true}`)
		io.Copy(io.Discard, os.Stdin)
		sleepForever()
	case "exit":
		fmt.Fprintln(os.Stderr, "exit role: leaving")
		code, _ := strconv.ParseUint(os.Getenv("PROC_TEST_CODE"), 0, 32)
		os.Exit(int(code))
	case "tree":
		gc := exec.Command(selfExe())
		gc.Env = roleEnv("stubborn")
		if err := gc.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(5)
		}
		fmt.Printf("{\"child\":%d,\"grandchild\":%d}\n", os.Getpid(), gc.Process.Pid)
		roleEcho()
	case "shim":
		p, err := Start(Config{Path: selfExe(), Env: roleEnv("tree"), Stderr: os.Stderr})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(5)
		}
		line := <-p.Recv()
		fmt.Printf("%s %d\n", line, os.Getpid())
		sleepForever()
	default:
		fmt.Fprintln(os.Stderr, "unknown PROC_TEST_ROLE", role)
		os.Exit(5)
	}
	os.Exit(0)
}

// sleepForever never returns: not select{}, which the runtime calls a
// deadlock when no other goroutine can wake it.
func sleepForever() {
	for {
		time.Sleep(time.Hour)
	}
}

func roleEcho() {
	r := bufio.NewReaderSize(os.Stdin, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			os.Stdout.Write(line)
		}
		if err != nil {
			return
		}
	}
}

func selfExe() string {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	return exe
}

func roleEnv(role string, kv ...string) []string {
	return append(append(os.Environ(), "PROC_TEST_ROLE="+role), kv...)
}

func role(role string, kv ...string) Config {
	return Config{Path: selfExe(), Env: roleEnv(role, kv...), StopStep: 300 * time.Millisecond}
}

func waitExit(t *testing.T, p *Process) {
	t.Helper()
	select {
	case <-p.Done():
	case <-time.After(20 * time.Second):
		t.Fatalf("child %d did not end", p.PID())
	}
}

// waitGone waits (20 s at most) until none of pids is a live process.
func waitGone(t *testing.T, what string, pids ...int) {
	t.Helper()
	testenv.WaitFor(t, 20*time.Second, fmt.Sprintf("%s: %v to end", what, pids), func() bool {
		return !slices.ContainsFunc(pids, procinfo.Alive)
	})
}

type treePIDs struct{ Child, Grandchild int }

// readTree reads the tree role's first line.
func readTree(t *testing.T, p *Process) treePIDs {
	t.Helper()
	var pids treePIDs
	select {
	case line := <-p.Recv():
		if err := json.Unmarshal(line, &pids); err != nil || pids.Grandchild == 0 {
			t.Fatalf("tree line %q: %v", line, err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no tree line")
	}
	return pids
}

// Lines go both ways whole, a 2 MiB one included, and a server that exits
// at its stdin's end is an exit with code 0.
func TestJobRelay(t *testing.T) {
	cfg := role("echo")
	cfg.StopStep = 20 * time.Second // a loaded machine must not turn the exit at stdin's end into a kill
	p, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	big := `{"jsonrpc":"2.0","id":2,"result":"` + strings.Repeat("x", 2<<20) + `"}`
	msgs := []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, big, `{"jsonrpc":"2.0","method":"notifications/initialized"}`}
	for _, m := range msgs {
		if err := p.Send([]byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range msgs {
		select {
		case got := <-p.Recv():
			if !bytes.Equal(got, []byte(want)) {
				t.Fatalf("message %d: got %d bytes, want %d", i, len(got), len(want))
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("message %d never came back", i)
		}
	}
	p.Close()
	ex := p.Exit()
	if ex.Cause != state.CauseExit || ex.Code == nil || *ex.Code != 0 || ex.Killed {
		t.Errorf("exit: %+v", ex.Exit)
	}
}

// An exit code is reported as such, with the stderr tail; on Windows a
// crash's NTSTATUS code is named.
func TestJobExitCode(t *testing.T) {
	codes := map[string]string{"7": "exited with code 7"}
	if runtime.GOOS == "windows" {
		codes["0xC0000005"] = "exited with code 3221225477; 0xC0000005: it crashed with an access violation"
	}
	for code, reason := range codes {
		p, err := Start(role("exit", "PROC_TEST_CODE="+code))
		if err != nil {
			t.Fatal(err)
		}
		waitExit(t, p)
		ex := p.Exit()
		if ex.Cause != state.CauseExit || ex.Reason != reason || ex.Killed {
			t.Errorf("code %s: %+v", code, ex.Exit)
		}
		if tail := strings.Join(ex.StderrTail, "\n"); !strings.Contains(tail, "exit role: leaving") {
			t.Errorf("code %s: stderr tail %q", code, tail)
		}
		p.Close()
	}
}

// A server that ignores its stdin's end (and SIGTERM on unix) is killed
// by the ladder's last step, and reported as killed by SIGKILL (on
// Windows, where the job is terminated, too).
func TestJobStopLadder(t *testing.T) {
	p, err := Start(role("stubborn"))
	if err != nil {
		t.Fatal(err)
	}
	// Ready: SIGTERM is ignored from now on.
	select {
	case <-p.Recv():
	case <-time.After(20 * time.Second):
		t.Fatal("the stubborn server never said it was ready")
	}
	p.Close()
	ex := p.Exit()
	if ex.Cause != state.CauseSignal || ex.Signal != syscall.SIGKILL.String() || ex.Killed {
		t.Errorf("exit: %+v", ex.Exit)
	}
}

// Kill takes the server's tree: its child and the grandchild it started.
func TestJobKillTakesTheTree(t *testing.T) {
	p, err := Start(role("tree"))
	if err != nil {
		t.Fatal(err)
	}
	pids := readTree(t, p)
	p.Kill("test")
	waitExit(t, p)
	p.Close()
	if ex := p.Exit(); !ex.Killed || ex.Reason != "test (killed by signal 9 (killed))" {
		t.Errorf("exit: %+v", ex.Exit)
	}
	waitGone(t, "after Kill", pids.Child, pids.Grandchild)
}

// A shim killed from outside (TerminateProcess: no code of its runs)
// takes its server's tree with it: the job's last handle closes with it.
// On unix the same guarantee comes from the guardian (its own tests); a
// direct child has only Linux's parent-death signal, which spares the
// grandchild, so this test is Windows' alone.
func TestJobShimDeathTakesTheTree(t *testing.T) {
	if runtime.GOOS != "windows" {
		t.Skip("Windows' job object; on unix the guardian's tests (internal/guardian) show it")
	}
	cmd := exec.Command(selfExe())
	cmd.Env = roleEnv("shim")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("shim role: %v", err)
	}
	var pids treePIDs
	var shimPID int
	js, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
	if err := json.Unmarshal([]byte(js), &pids); err != nil || pids.Grandchild == 0 {
		t.Fatalf("shim line %q: %v", line, err)
	}
	shimPID, _ = strconv.Atoi(rest)
	if !procinfo.Alive(pids.Child) || !procinfo.Alive(pids.Grandchild) {
		t.Fatalf("tree %+v not running before the kill", pids)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	waitGone(t, fmt.Sprintf("shim %d killed", shimPID), pids.Child, pids.Grandchild)
}

// A server started through a .cmd wrapper (npx is npx.cmd on Windows: a
// cmd.exe running node) relays, and a kill takes cmd.exe, the program it
// runs and that program's child: the job holds what cmd.exe starts.
func TestJobCmdWrapper(t *testing.T) {
	if runtime.GOOS != "windows" {
		t.Skip("a .cmd wrapper is Windows'")
	}
	dir := testenv.TempDir(t)
	wrapper := dir + `\server.cmd`
	if err := os.WriteFile(wrapper, []byte("@echo off\r\n\""+selfExe()+"\" %*\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := role("tree")
	cfg.Path = wrapper
	p, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pids := readTree(t, p)
	if err := p.Send([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case line := <-p.Recv():
		if string(line) != `{"jsonrpc":"2.0","id":1,"method":"ping"}` {
			t.Fatalf("echo through the wrapper: %q", line)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no echo through the wrapper")
	}
	p.Kill("test")
	waitExit(t, p)
	p.Close()
	waitGone(t, "after Kill", p.PID(), pids.Child, pids.Grandchild)
}
