package probe

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/proc"
	"github.com/mcp-heal/mcp-heal/internal/text"
	"github.com/mcp-heal/mcp-heal/internal/upstream"
)

// probeStdio starts the server with proc, as the shim does (own process
// group, redacted stderr tail, decoded exit status), and kills the whole
// group when the probe ends.
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
	p, err := proc.Start(proc.Config{Path: expand(t.Command, missing), Args: args, Env: env, Dir: t.Dir, TailLines: 10})
	if err != nil {
		return startFailure(t, err)
	}
	defer func() {
		select {
		case <-p.Done():
		default:
			p.Kill("")
		}
		p.Close()
	}()
	ct := &connTransport{c: p}
	r, err := handshake(ctx, ct)
	nonJSON := ct.firstNonJSON()
	if err == nil {
		if nonJSON != "" {
			r.Warnings = append(r.Warnings, fmt.Sprintf("the server wrote non-JSON to stdout (%s); Claude Code logs an error for each such line: send it to stderr", text.Quote(nonJSON)))
		}
		return r
	}
	var re *rpcError
	switch {
	case errors.As(err, &re):
		return fail(RPCError, fmt.Sprintf("the server answered initialize with an error: %s", re.Message), "check the server's arguments and version")
	case errors.Is(err, errExited):
		return exitFailure(t, p.Exit(), nonJSON, missing)
	case nonJSON != "":
		return fail(NonJSON, fmt.Sprintf("the server wrote non-JSON to stdout: %s", text.Quote(nonJSON)),
			"send logs and banners to stderr: an MCP stdio server must write only JSON-RPC on stdout")
	case errors.Is(err, context.DeadlineExceeded):
		r := fail(Timeout, fmt.Sprintf("no answer to initialize within %s", timeout), "run it by hand to see what it waits for: the server may be hung or slow to start")
		r.Problem.Stderr = p.StderrTail()
		if name := envComplaint(r.Problem.Stderr, t.Env); name != "" {
			r.Problem.Kind, r.Problem.Summary, r.Problem.Hint = MissingEnv, fmt.Sprintf("no answer within %s; its stderr mentions %s, which is not set", timeout, name), fmt.Sprintf("set %s in the server's \"env\" in the MCP config", name)
		}
		return r
	default:
		return fail(Exited, err.Error(), "")
	}
}

func startFailure(t Target, err error) Result {
	switch {
	case errors.Is(err, os.ErrNotExist) && strings.ContainsRune(t.Command, '/') && isFile(t.Command):
		// The file is there: what is missing is its #! interpreter.
		return fail(NotFound, fmt.Sprintf("%s: its interpreter (the #! line) was not found", t.Command), "install the interpreter its first line names, or fix that line")
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, os.ErrNotExist):
		if filepath.IsAbs(t.Command) {
			// Already a path: advice to use one would send the reader
			// in a circle (issue 32).
			return fail(NotFound, fmt.Sprintf("command not found: %s", t.Command), fmt.Sprintf("fix the path in the MCP config, or install the server there: no file at %s", t.Command))
		}
		hint := fmt.Sprintf("install %s or give its full path in the MCP config: Claude Code starts it with the PATH it was started with", t.Command)
		return fail(NotFound, fmt.Sprintf("command not found: %s", t.Command), hint)
	case errors.Is(err, syscall.ENOEXEC):
		return fail(NotExecutable, fmt.Sprintf("%s is not a program (exec format error)", t.Command), "give it a #! line, or run it through its interpreter: e.g. \"command\": \"node\", \"args\": [\"server.js\"]")
	case errors.Is(err, os.ErrPermission):
		return fail(NotExecutable, fmt.Sprintf("%s is not executable", t.Command), fmt.Sprintf("chmod +x %s, or run it through its interpreter", t.Command))
	}
	return fail(NotExecutable, fmt.Sprintf("cannot start %s: %v", t.Command, err), "")
}

// isFile reports whether path names a file that is not a directory.
func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir()
}

func exitFailure(t Target, ex upstream.Exit, nonJSON string, missing map[string]bool) Result {
	how, code, stderr := ex.Reason, ex.Code, ex.StderrTail
	switch {
	case ex.Signal != "":
		how = "was killed by signal " + ex.Signal
	case code != nil:
		how = fmt.Sprintf("exited with code %d", *code)
	}
	p := &Problem{Kind: Exited, Summary: "the server " + how + " before answering initialize", ExitCode: code, Stderr: stderr}
	if len(stderr) > 0 {
		p.Summary += "; " + text.Said("its stderr", stderr[len(stderr)-1])
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
		p.Kind, p.Hint = MissingEnv, fmt.Sprintf("add %s to the server's \"env\" in the MCP config: %[1]s is not set (or export it before starting Claude Code)", name)
	} else if len(names) > 0 {
		p.Kind, p.Hint = MissingEnv, fmt.Sprintf("export %s before starting Claude Code, or put its value in \"env\": the config uses ${%[1]s}, which is not set", names[0])
	} else if nonJSON != "" {
		p.Kind, p.Hint = NonJSON, fmt.Sprintf("send its logs and banners to stderr: it also wrote non-JSON to stdout (%s), where an MCP stdio server must write only JSON-RPC", text.Quote(nonJSON))
	}
	return Result{Problem: p}
}
