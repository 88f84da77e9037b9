//go:build unix

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// binRun is one run of the real binary.
type binRun struct {
	code           int
	stdout, stderr string
	rssMiB         int64 // peak resident set
}

// TestMain: with MCP_HEAL_TEST_RSS set, the test binary is a small
// runner for one command (os.Args[1:]) that writes the command's peak RSS
// in KiB to the file MCP_HEAL_TEST_RSS names and exits with its status.
// A child the big test process starts directly inherits that process's
// peak (Linux keeps the high-water mark of the memory an exec replaces,
// and Go forks with CLONE_VM), so a small process in between starts it.
func TestMain(m *testing.M) {
	if out := os.Getenv("MCP_HEAL_TEST_RSS"); out != "" {
		os.Exit(rssRunner(out))
	}
	os.Exit(m.Run())
}

// rssRunner runs os.Args[1:] under a 3 GiB address-space limit (so that
// an unbounded read this file tests cannot take the machine down when it
// regresses) and records its peak RSS in out.
func rssRunner(out string) int {
	_ = syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: 3 << 30, Max: 3 << 30})
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		fmt.Fprintln(os.Stderr, "rss runner:", err)
		return 125
	}
	kib := int64(0)
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		kib = int64(ru.Maxrss) // KiB on Linux
		if runtime.GOOS == "darwin" {
			kib >>= 10 // bytes
		}
	}
	if err := os.WriteFile(out, []byte(strconv.FormatInt(kib, 10)), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "rss runner:", err)
		return 125
	}
	return cmd.ProcessState.ExitCode()
}

// runCapped runs the mcp-heal binary with args, stdin and env in dir,
// through rssRunner, with a 60 s deadline after which the test fails:
// the hang is the failure.
func runCapped(t *testing.T, dir string, env []string, stdin []byte, args ...string) binRun {
	t.Helper()
	bin := testenv.Binary(t)
	rssFile := filepath.Join(t.TempDir(), "rss")
	cmd := exec.Command(os.Args[0], append([]string{bin}, args...)...)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, append(env, "MCP_HEAL_TEST_RSS="+rssFile), bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	// A process group of its own, so that the deadline stops the runner
	// and the hook it started (which a FIFO would hold forever).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	done := testenv.StartWait(t, cmd)
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		t.Fatalf("mcp-heal %s still running after 60 s; stderr:\n%.2000s", strings.Join(args, " "), errb.String())
	}
	r := binRun{code: cmd.ProcessState.ExitCode(), stdout: out.String(), stderr: errb.String()}
	b, err := os.ReadFile(rssFile)
	kib, _ := strconv.ParseInt(string(b), 10, 64)
	if err != nil || kib == 0 {
		t.Fatalf("no peak RSS from the runner (%v); stderr:\n%.2000s", err, r.stderr)
	}
	r.rssMiB = kib >> 10
	t.Logf("mcp-heal %s: exit %d, peak RSS %d MiB", strings.Join(args, " "), r.code, r.rssMiB)
	return r
}

// deep is 10 million nested arrays (20 MB, under the hooks' 64 MiB cap):
// deeper than any recursive parser's stack.
func deep() string {
	return strings.Repeat("[", 10_000_000) + strings.Repeat("]", 10_000_000)
}

// hookEnv is a clean environment for a hook: its own HOME and state dir.
func hookEnv(t *testing.T) (env []string, home, stateDir string) {
	home, stateDir = t.TempDir(), t.TempDir()
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_STATE_HOME=" + stateDir}, home, stateDir
}

// hookProject is a clean environment for a hook (hookEnv) and a project
// in its HOME whose .mcp.json plant makes (plant is given its path).
func hookProject(t *testing.T, plant func(path string) error) (env []string, proj string) {
	t.Helper()
	env, home, _ := hookEnv(t)
	proj = filepath.Join(home, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := plant(filepath.Join(proj, ".mcp.json")); err != nil {
		t.Fatal(err)
	}
	return env, proj
}

// writeMCPJSON plants a .mcp.json holding data.
func writeMCPJSON(data string) func(path string) error {
	return func(path string) error { return os.WriteFile(path, []byte(data), 0o644) }
}

// needsAttention puts a marker in the attention directory under stateDir,
// as the launcher sees it when it starts the binary for PreToolUse (on
// the healthy path, none, it answers by itself).
func needsAttention(t *testing.T, stateDir string) {
	t.Helper()
	dir := filepath.Join(stateDir, "mcp-heal", "attention")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "server-x"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestHookDeepPayloadFailsOpen: every hook event fed a payload nested 10
// million deep exits 0 silently, logs why, and stays within 200 MiB. It
// used to overflow the Go stack in gjson.ValidBytes: exit 2 (which blocks
// a PreToolUse call), 1.1 GB, and a 25 KB trace on stderr for the model.
func TestHookDeepPayloadFailsOpen(t *testing.T) {
	payload := []byte(`{"session_id":"s","cwd":"/nonexistent","tool_name":"mcp__x__y","error":"Not connected","tool_input":` + deep() + `}`)
	for _, event := range []string{"PreToolUse", "SessionStart", "PostToolUseFailure"} {
		t.Run(event, func(t *testing.T) {
			env, _, stateDir := hookEnv(t)
			needsAttention(t, stateDir)
			r := runCapped(t, t.TempDir(), env, payload, "hook", event)
			if r.code != 0 || r.stdout != "" || r.stderr != "" {
				t.Errorf("exit %d, stdout %q, stderr:\n%.500s", r.code, r.stdout, r.stderr)
			}
			if r.rssMiB > 100 {
				t.Errorf("peak RSS %d MiB for a 20 MB payload", r.rssMiB)
			}
			log, _ := os.ReadFile(filepath.Join(stateDir, "mcp-heal", "hook.log"))
			if !strings.Contains(string(log), "nested deeper than 10000 levels") {
				t.Errorf("hook.log does not say why the payload was ignored:\n%.500s", log)
			}
		})
	}
}

// TestDeepMCPJSON: a cloned repository's .mcp.json nested 5 million deep
// (10 MB, under regfile.MaxConfigBytes) is reported, with its position, by
// status, wrap and the SessionStart hook, none of which crashes. They used to overflow the Go stack (exit 2
// and a trace).
func TestDeepMCPJSON(t *testing.T) {
	env, proj := hookProject(t, writeMCPJSON(`{"mcpServers":{"x":`+strings.Repeat("[", 5_000_000)+strings.Repeat("]", 5_000_000)+`}}`))
	want := ".mcp.json:1:10018: invalid JSON: nested deeper than 10000 levels"
	for _, args := range [][]string{{"status"}, {"wrap", "--all", "--dry-run"}} {
		r := runCapped(t, proj, env, nil, args...)
		if r.code == 2 || strings.Contains(r.stderr, "goroutine ") || !strings.Contains(r.stderr, want) {
			t.Errorf("%s: exit %d, stderr:\n%.1000s\nwant a line saying %q, and no exit 2", args[0], r.code, r.stderr, want)
		}
		if r.rssMiB > 100 {
			t.Errorf("%s: peak RSS %d MiB for a 10 MB .mcp.json", args[0], r.rssMiB)
		}
	}
	r := runCapped(t, proj, env, []byte(`{"hook_event_name":"SessionStart","session_id":"s","source":"startup","cwd":`+quote(proj)+`}`), "hook", "SessionStart")
	if r.code != 0 || r.stderr != "" {
		t.Errorf("SessionStart: exit %d, stderr:\n%.1000s", r.code, r.stderr)
	}
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

// TestHookPlantedShimRecords: a FIFO planted as a shim record made
// PreToolUse wait for a writer until Claude Code's timeout; a record
// linked to /dev/zero was read until memory ran out. Both are skipped now:
// the hook exits 0 at once, within bounded memory.
func TestHookPlantedShimRecords(t *testing.T) {
	payload, err := os.ReadFile(filepath.Join(testenv.HookPayloadDir(t), "PreToolUse.mcp.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		plant func(path string) error
	}{
		{"fifo", func(path string) error { return syscall.Mkfifo(path, 0o600) }},
		{"link to /dev/zero", func(path string) error { return os.Symlink("/dev/zero", path) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			env, _, stateDir := hookEnv(t)
			needsAttention(t, stateDir)
			shims := filepath.Join(stateDir, "mcp-heal", "shims")
			if err := os.MkdirAll(shims, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := c.plant(filepath.Join(shims, "1.json")); err != nil {
				t.Fatal(err)
			}
			r := runCapped(t, t.TempDir(), env, payload, "hook", "PreToolUse")
			if r.code != 0 || r.stderr != "" {
				t.Errorf("exit %d, stderr:\n%.500s", r.code, r.stderr)
			}
			if r.rssMiB > 100 {
				t.Errorf("peak RSS %d MiB", r.rssMiB)
			}
		})
	}
}

// panicWriter stands for a stdout whose Write panics.
type panicWriter struct{}

func (panicWriter) Write([]byte) (int, error) { panic("stdout exploded") }

// TestHookPanicExitsZero: a panic outside Handler.Handle (here writing the
// reply) is logged and the hook exits 0; Go's own exit status for a panic
// is 2, which blocks a PreToolUse call.
func TestHookPanicExitsZero(t *testing.T) {
	stateDir := t.TempDir()
	testenv.UseStateDir(t, stateDir)
	// A failed shim of this server: PreToolUse replies with a deny.
	if err := state.Write(&state.Record{Server: "everything", ShimPID: os.Getpid(), Mode: state.ModeStdio, State: state.Failed, Started: time.Now()}); err != nil {
		t.Fatal(err)
	}
	payload, err := os.ReadFile(filepath.Join(testenv.HookPayloadDir(t), "PreToolUse.mcp.json"))
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	env := &Env{Stdin: bytes.NewReader(payload), Stdout: panicWriter{}, Stderr: &errb, Getenv: os.Getenv}
	code := run(context.Background(), env, []string{"hook", "PreToolUse"})
	if code != 0 || errb.Len() != 0 {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
	log, err := os.ReadFile(filepath.Join(state.Dir(), "hook.log"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), "stdout exploded") {
		t.Errorf("hook.log does not record the panic:\n%s", log)
	}
}

// TestLogsPlantedFIFO: `mcp-heal logs` on a FIFO planted as a server's
// lifecycle log says so at once; it used to wait for a writer.
func TestLogsPlantedFIFO(t *testing.T) {
	testenv.UseStateDir(t, t.TempDir())
	if err := os.MkdirAll(state.LogsDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(state.LogPath("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: os.Getenv}
	done := make(chan int, 1)
	go func() { done <- run(context.Background(), env, []string{"logs", "x"}) }()
	select {
	case code := <-done:
		if code != 1 || !strings.Contains(errb.String(), "not a regular file") {
			t.Errorf("exit %d, stderr %q", code, errb.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("mcp-heal logs still waiting on a FIFO after 10 s")
	}
}

// TestPlantedMCPJSON: a cloned repository's .mcp.json that is a symbolic
// link to /dev/zero (git stores such a link) or a FIFO is reported by
// status, and skipped by the SessionStart and PostToolUseFailure hooks,
// at once and within bounded memory. status and SessionStart used to read
// /dev/zero until memory ran out, and to wait on the FIFO forever.
func TestPlantedMCPJSON(t *testing.T) {
	plant := map[string]func(string) error{
		"devzero": func(p string) error { return os.Symlink("/dev/zero", p) },
		"fifo":    func(p string) error { return syscall.Mkfifo(p, 0o644) },
	}
	failure, err := os.ReadFile(filepath.Join(testenv.HookPayloadDir(t), "PostToolUseFailure.stdio-not-connected.json"))
	if err != nil {
		t.Fatal(err)
	}
	for name, mk := range plant {
		t.Run(name, func(t *testing.T) {
			env, proj := hookProject(t, mk)
			r := runCapped(t, proj, env, nil, "status")
			if want := ".mcp.json: not a regular file"; r.code == 2 || !strings.Contains(r.stderr, want) {
				t.Errorf("status: exit %d, stderr:\n%.1000s\nwant a line saying %q", r.code, r.stderr, want)
			}
			if r.rssMiB > 100 {
				t.Errorf("status: peak RSS %d MiB", r.rssMiB)
			}
			// The recorded failure of a server "tiny" (not configured
			// anywhere: the hook looks it up in every config file).
			payloads := map[string][]byte{
				"SessionStart":       []byte(`{"hook_event_name":"SessionStart","session_id":"s","source":"startup","cwd":` + quote(proj) + `}`),
				"PostToolUseFailure": bytes.Replace(failure, []byte(`"/home/dev/project"`), []byte(quote(proj)), 1),
			}
			for event, p := range payloads {
				r := runCapped(t, proj, env, p, "hook", event)
				if r.code != 0 || r.stderr != "" {
					t.Errorf("%s: exit %d, stderr:\n%.1000s", event, r.code, r.stderr)
				}
				if r.rssMiB > 100 {
					t.Errorf("%s: peak RSS %d MiB", event, r.rssMiB)
				}
			}
		})
	}
}

// TestLargeMCPJSON: a .mcp.json over regfile.MaxConfigBytes is refused by name,
// having read no more than the cap.
func TestLargeMCPJSON(t *testing.T) {
	env, proj := hookProject(t, writeMCPJSON(`{"mcpServers":{},"x":"`+strings.Repeat("a", 17<<20)+`"}`))
	r := runCapped(t, proj, env, nil, "status")
	if want := ".mcp.json: larger than mcp-heal accepts (16 MiB)"; !strings.Contains(r.stderr, want) {
		t.Errorf("status: exit %d, stderr:\n%.1000s\nwant a line saying %q", r.code, r.stderr, want)
	}
}
