//go:build unix

package statusline_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// world is a state directory (this process's too) with real shims (the
// mcp-heal binary in front of its example server) of two Claude Code
// sessions.
type world struct {
	t     *testing.T
	bin   string
	state string
}

func newWorld(t *testing.T) *world {
	return &world{t: t, bin: testenv.Binary(t), state: testenv.UseStateDir(t, testenv.TempDir(t))}
}

// shim starts `mcp-heal shim --name name` of session, in front of the
// example server with args; it ends with the test (its stdin closed).
func (w *world) shim(name, session string, args ...string) *exec.Cmd {
	w.t.Helper()
	argv := append([]string{"--name", name, "--max-failures", "2", "--backoff-max", "200ms", "--", w.bin, "example-server"}, args...)
	cmd, _ := testenv.StartShim(w.t, []string{"XDG_STATE_HOME=" + w.state, "CLAUDE_CODE_SESSION_ID=" + session}, argv...)
	return cmd
}

// record is the state record of the shim cmd (nil until it writes one).
func (w *world) record(cmd *exec.Cmd) *state.Record {
	r, _ := state.Read(cmd.Process.Pid)
	return r
}

// line runs `mcp-heal statusline` as Claude Code does: the payload on a
// pipe, env added to the test's environment.
func line(t *testing.T, payload string, env ...string) (code int, stdout, stderr string) {
	t.Helper()
	return testenv.RunBinary(t, append(os.Environ(), env...), "", payload, "statusline")
}

func (w *world) line(session string, env ...string) string {
	w.t.Helper()
	code, stdout, stderr := line(w.t, `{"session_id":"`+session+`","cwd":"/x","model":{"id":"m","display_name":"M"}}`, append([]string{"XDG_STATE_HOME=" + w.state}, env...)...)
	if code != 0 || stderr != "" {
		w.t.Fatalf("statusline: exit %d, stderr %q", code, stderr)
	}
	return stdout
}

// waitLine waits until the session's line (without colour) matches re.
func (w *world) waitLine(session, re string) string {
	w.t.Helper()
	var got string
	rx := regexp.MustCompile(re)
	testenv.WaitFor(w.t, 30*time.Second, "the status line to match "+re, func() bool {
		got = w.line(session, "NO_COLOR=1")
		return rx.MatchString(got)
	})
	return got
}

// TestLineWithRealShims: the binary's line for a session of two real
// shims, as a server of it goes through what users see: healthy, killed
// and restarted by its shim, in a crash loop. A shim of another session
// never counts.
func TestLineWithRealShims(t *testing.T) {
	w := newWorld(t)
	loopFile := filepath.Join(testenv.TempDir(t), "starts")
	if err := os.WriteFile(loopFile, []byte("1000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ex := w.shim("ex", "s1")
	loop := w.shim("loop", "s1", "--fail-starts", "1000", "--fail-file", loopFile)
	w.shim("other", "s2")
	running := func(cmd *exec.Cmd) func() bool {
		return func() bool { r := w.record(cmd); return r != nil && r.State == state.Running && r.ChildPID > 0 }
	}
	testenv.WaitFor(t, 30*time.Second, "both shims of s1 running", func() bool { return running(ex)() && running(loop)() })

	got := w.waitLine("s1", `^MCP 2/2 ok\n$`)
	t.Logf("healthy: %q", got)
	if c := w.line("s1"); c != "\x1b[2m\x1b[32mMCP 2/2 ok\x1b[0m\n" {
		t.Errorf("healthy, in colour: %q", c)
	}
	if o := w.waitLine("s2", `^MCP 1/1 ok\n$`); o == "" {
		t.Error("session s2 has its own line")
	}

	child := w.record(ex).ChildPID
	if err := syscall.Kill(child, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	got = w.waitLine("s1", `^MCP 2/2 · ex restarted \d+s ago\n$`)
	t.Logf("after kill -9 of ex's server: %q", got)
	if c := w.line("s1"); !strings.HasPrefix(c, "\x1b[33mMCP 2/2 · ex restarted") {
		t.Errorf("a restart is yellow: %q", c)
	}

	// From now on every start of loop's server fails: a crash loop.
	if err := os.WriteFile(loopFile, []byte("0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(w.record(loop).ChildPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	got = w.waitLine("s1", `^MCP 1/2 · run /mcp-heal doctor loop: crash loop · \+1 more\n$`)
	t.Logf("after a crash loop of loop: %q", got)
	if c := w.line("s1"); !strings.HasPrefix(c, "\x1b[31mMCP 1/2 · run /mcp-heal doctor loop") {
		t.Errorf("a crash loop is red: %q", c)
	}
	if o := w.line("s2", "NO_COLOR=1"); o != "MCP 1/1 ok\n" {
		t.Errorf("session s2's line took s1's news: %q", o)
	}
}

// TestLineNeverFails: whatever the state directory or stdin holds, the
// binary prints nothing, exits 0 and writes nothing to stderr (Claude
// Code would show an error in its footer), and never waits long for a
// payload that does not come.
func TestLineNeverFails(t *testing.T) {
	bin := testenv.Binary(t)
	payload := `{"session_id":"s1"}`
	dir := func(f func(d string)) string {
		d := testenv.TempDir(t)
		if err := os.MkdirAll(filepath.Join(d, "mcp-heal"), 0o700); err != nil {
			t.Fatal(err)
		}
		f(filepath.Join(d, "mcp-heal"))
		return d
	}
	write := func(p, data string) {
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	self := strconv.Itoa(os.Getpid()) // a live pid: its record is read, not pruned
	cases := []struct {
		name, state, payload string
	}{
		{"missing state dir", filepath.Join(testenv.TempDir(t), "nowhere"), payload},
		{"state dir is a file", dir(func(d string) { os.RemoveAll(d); write(d, "junk") }), payload},
		{"shims is a file", dir(func(d string) { write(filepath.Join(d, "shims"), "junk") }), payload},
		{"corrupt records", dir(func(d string) {
			s := filepath.Join(d, "shims")
			os.Mkdir(s, 0o700)
			write(filepath.Join(s, self+".json"), `{"server":"x","session":"s1","shim_pid":`)
			write(filepath.Join(s, "1.json"), strings.Repeat("[", 20000))
			write(filepath.Join(s, "junk.json"), "\x00\xff")
		}), payload},
		{"wrong types in a record", dir(func(d string) {
			s := filepath.Join(d, "shims")
			os.Mkdir(s, 0o700)
			write(filepath.Join(s, self+".json"), `{"server":5,"session":"s1","shim_pid":"x","state":[]}`)
		}), payload},
		{"a FIFO as a record", dir(func(d string) {
			s := filepath.Join(d, "shims")
			os.Mkdir(s, 0o700)
			if err := syscall.Mkfifo(filepath.Join(s, self+".json"), 0o600); err != nil {
				t.Fatal(err)
			}
		}), payload},
		{"empty stdin", testenv.TempDir(t), ""},
		{"junk stdin", testenv.TempDir(t), "\x1b[2J not json {"},
		{"stdin not an object", testenv.TempDir(t), `["session_id","s1"]`},
		{"stdin over the limit", testenv.TempDir(t), `{"session_id":"s1","x":"` + strings.Repeat("a", 2<<20) + `"}`},
		{"session_id not a string", testenv.TempDir(t), `{"session_id":{"a":1}}`},
	}
	for _, c := range cases {
		code, stdout, stderr := line(t, c.payload, "XDG_STATE_HOME="+c.state, "CLAUDE_CODE_SESSION_ID=", "CLAUDE_PID=")
		if stdout != "" || stderr != "" || code != 0 {
			t.Errorf("%s: stdout %q, stderr %q, exit %d; want nothing and 0", c.name, stdout, stderr, code)
		}
	}

	// A payload that never comes on a pipe that stays open: the line
	// gives up after StdinWait.
	cmd := exec.Command(bin, "statusline")
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+testenv.TempDir(t))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	var out bytes.Buffer
	cmd.Stdout = &out
	done := testenv.StartWait(t, cmd)
	select {
	case err := <-done:
		if err != nil || out.Len() != 0 {
			t.Errorf("an open, silent stdin: %v, stdout %q", err, out.String())
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the status line waited 20s for a payload that never came")
	}
}
