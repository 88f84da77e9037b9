package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
	"github.com/mcp-heal/mcp-heal/internal/redact"
)

// stdioTransport talks to one spawned server. One reader goroutine owns
// stdout and delivers lines on lines; it ends when the process's stdout
// closes (the process group is killed when the probe ends).
type stdioTransport struct {
	stdin  io.WriteCloser
	lines  chan []byte
	exited chan struct{} // closed when the process has exited

	mu      sync.Mutex
	nonJSON string // first non-JSON stdout line, if any
}

func (s *stdioTransport) firstNonJSON() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nonJSON
}

func (s *stdioTransport) send(msg []byte) error {
	_, err := s.stdin.Write(append(msg, '\n'))
	return err
}

func (s *stdioTransport) notify(ctx context.Context, method string, params any) error {
	return s.send(notification(method, params))
}

var errExited = errors.New("process exited")

func (s *stdioTransport) call(ctx context.Context, id int, method string, params any) (json.RawMessage, error) {
	if err := s.send(request(id, method, params)); err != nil {
		// A write to a dead process: report the exit, not EPIPE.
		select {
		case <-s.exited:
			return nil, errExited
		case <-time.After(time.Second):
			return nil, err
		}
	}
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case line, ok := <-s.lines:
			if !ok {
				return nil, errExited
			}
			if res, err, ok := response(line, id); ok {
				return res, err
			}
			if reply := answerServerRequest(line); reply != nil && gjson.GetBytes(line, "method").Exists() {
				_ = s.send(reply)
			}
		}
	}
}

// stderrTail keeps the last lines of the server's stderr.
type stderrTail struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	lines []string
}

func (t *stderrTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf.Write(p)
	for {
		i := bytes.IndexByte(t.buf.Bytes(), '\n')
		if i < 0 {
			break
		}
		t.add(string(t.buf.Next(i + 1)))
	}
	if t.buf.Len() > 4096 {
		t.add(string(t.buf.Next(t.buf.Len())))
	}
	return len(p), nil
}

func (t *stderrTail) add(line string) {
	line = strings.TrimRight(line, "\r\n")
	if strings.TrimSpace(line) == "" {
		return
	}
	if len(line) > 300 {
		line = line[:300] + "…"
	}
	t.lines = append(t.lines, redact.String(line))
	if len(t.lines) > 10 {
		t.lines = t.lines[len(t.lines)-10:]
	}
}

func (t *stderrTail) get() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.buf.Len() > 0 {
		t.add(t.buf.String())
		t.buf.Reset()
	}
	return append([]string(nil), t.lines...)
}

func probeStdio(ctx context.Context, t Target, timeout time.Duration) Result {
	missing := map[string]bool{}
	args := make([]string, len(t.Args))
	for i, a := range t.Args {
		args[i] = expand(a, missing)
	}
	env := os.Environ()
	keys := make([]string, 0, len(t.Env))
	for k := range t.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+expand(t.Env[k], missing))
	}
	cmd := exec.Command(expand(t.Command, missing), args...)
	cmd.Env = env
	cmd.Dir = t.Dir
	// Own process group, so the whole tree (npx, uv wrappers) is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return fail(NotExecutable, err.Error(), "")
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fail(NotExecutable, err.Error(), "")
	}
	tail := &stderrTail{}
	cmd.Stderr = tail
	if err := cmd.Start(); err != nil {
		return startFailure(t, err)
	}
	st := &stdioTransport{stdin: stdin, lines: make(chan []byte, 16), exited: make(chan struct{})}
	var waitErr error
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		defer close(st.lines)
		rd := jsonrpc.NewReader(stdout)
		for {
			line, err := rd.Next()
			if err != nil {
				return
			}
			line = bytes.TrimSpace(line)
			if len(line) == 0 {
				continue
			}
			if !gjson.ValidBytes(line) || line[0] != '{' {
				st.mu.Lock()
				if st.nonJSON == "" {
					st.nonJSON = snippet(string(line))
				}
				st.mu.Unlock()
				continue
			}
			st.lines <- append([]byte(nil), line...)
		}
	}()
	go func() {
		<-readDone
		waitErr = cmd.Wait()
		close(st.exited)
	}()
	defer func() {
		// Close stdin, then kill the group; the reader ends on EOF.
		stdin.Close()
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		for range st.lines {
		}
		<-st.exited
	}()

	r, err := handshake(ctx, st)
	nonJSON := st.firstNonJSON()
	if err == nil {
		if nonJSON != "" {
			r.Warnings = append(r.Warnings, fmt.Sprintf("the server wrote non-JSON to stdout (%q); Claude Code logs an error for each such line: send it to stderr", nonJSON))
		}
		return r
	}
	var re *rpcError
	switch {
	case errors.As(err, &re):
		return fail(RPCError, fmt.Sprintf("the server answered initialize with an error: %s", re.Message), "check the server's arguments and version")
	case errors.Is(err, errExited):
		select {
		case <-st.exited:
		case <-time.After(2 * time.Second):
			// stdout closed but the process lives on: end it to read
			// its status.
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-st.exited
		}
		return exitFailure(t, waitErr, tail.get(), nonJSON, missing)
	case nonJSON != "":
		return fail(NonJSON, fmt.Sprintf("the server wrote non-JSON to stdout: %q", nonJSON),
			"an MCP stdio server must write only JSON-RPC on stdout: send logs and banners to stderr")
	case errors.Is(err, context.DeadlineExceeded):
		p := fail(Timeout, fmt.Sprintf("no answer to initialize within %s", timeout), "the server may be hung or slow to start: run it by hand to see what it waits for")
		p.Problem.Stderr = tail.get()
		if name := envComplaint(p.Problem.Stderr, t.Env); name != "" {
			p.Problem.Kind, p.Problem.Summary, p.Problem.Hint = MissingEnv, fmt.Sprintf("no answer within %s; its stderr mentions %s, which is not set", timeout, name), fmt.Sprintf("set %s in the server's \"env\" in the MCP config", name)
		}
		return p
	default:
		return fail(Exited, err.Error(), "")
	}
}

func startFailure(t Target, err error) Result {
	switch {
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, os.ErrNotExist):
		hint := fmt.Sprintf("install %s or use its absolute path in the MCP config (Claude Code starts it with the PATH it was started with)", t.Command)
		return fail(NotFound, fmt.Sprintf("command not found: %s", t.Command), hint)
	case errors.Is(err, syscall.ENOEXEC):
		return fail(NotExecutable, fmt.Sprintf("%s is not a program (exec format error)", t.Command), "give it a #! line, or run it through its interpreter (e.g. \"command\": \"node\", \"args\": [\"server.js\"])")
	case errors.Is(err, os.ErrPermission):
		return fail(NotExecutable, fmt.Sprintf("%s is not executable", t.Command), fmt.Sprintf("chmod +x %s, or run it through its interpreter", t.Command))
	}
	return fail(NotExecutable, fmt.Sprintf("cannot start %s: %v", t.Command, err), "")
}

func exitFailure(t Target, waitErr error, stderr []string, nonJSON string, missing map[string]bool) Result {
	how := "exited"
	var code *int
	var ee *exec.ExitError
	if errors.As(waitErr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			how = "was killed by signal " + ws.Signal().String()
		} else {
			c := ee.ExitCode()
			code = &c
			how = fmt.Sprintf("exited with code %d", c)
		}
	} else if waitErr == nil {
		c := 0
		code = &c
		how = "exited with code 0"
	}
	p := &Problem{Kind: Exited, Summary: "the server " + how + " before answering initialize", ExitCode: code, Stderr: stderr}
	if len(stderr) > 0 {
		p.Summary += ": " + stderr[len(stderr)-1]
		p.Hint = "run the command by hand to see the whole error"
	} else {
		p.Hint = "run the command by hand: it printed nothing on stderr"
	}
	names := make([]string, 0, len(missing))
	for n := range missing {
		names = append(names, n)
	}
	sort.Strings(names)
	if name := envComplaint(stderr, t.Env); name != "" {
		p.Kind, p.Hint = MissingEnv, fmt.Sprintf("%s is not set: add it to the server's \"env\" in the MCP config (or export it before starting Claude Code)", name)
	} else if len(names) > 0 {
		p.Kind, p.Hint = MissingEnv, fmt.Sprintf("the config uses ${%s}, which is not set: export it before starting Claude Code or put the value in \"env\"", names[0])
	} else if nonJSON != "" {
		p.Kind, p.Hint = NonJSON, fmt.Sprintf("it also wrote non-JSON to stdout (%q): an MCP stdio server must write only JSON-RPC there", nonJSON)
	}
	return Result{Problem: p}
}

func snippet(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}
