package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/ccpolicy"
	"github.com/mcp-heal/mcp-heal/internal/guardian"
	"github.com/mcp-heal/mcp-heal/internal/keep"
	"github.com/mcp-heal/mcp-heal/internal/proc"
	"github.com/mcp-heal/mcp-heal/internal/shim"
	"github.com/mcp-heal/mcp-heal/internal/text"
	"github.com/mcp-heal/mcp-heal/internal/upstream"
)

const shimSynopsis = "shim [flags] -- CMD [ARGS...]\n       mcp-heal shim [flags] --url URL"

const shimDescription = `
Run the MCP server CMD (or bridge the remote server at URL) and heal its
failures: Claude Code talks to the shim on stdin/stdout as if it were the
server. When the server exits, crashes or hangs, the shim starts it again,
replays the session's handshake and state, re-sends the calls that are safe to
re-send, answers the others with one clear error, and queues what arrives
meanwhile.

Put it in front of a server in Claude Code's config, e.g.
  "command": "mcp-heal", "args": ["shim", "--name", "memory", "--", "npx", "-y", "@modelcontextprotocol/server-memory"]

Signals: SIGHUP restarts the server on purpose; SIGINT/SIGTERM stop it (close
its stdin, SIGTERM its process group, SIGKILL) and exit.

Set MCP_HEAL_DEBUG=1 for debug logs on stderr.`

func runShim(ctx context.Context, env *Env, args []string) error {
	fs := newFlags("shim")
	fs.SetInterspersed(false)
	name := fs.String("name", "", "the server's `name` as Claude Code knows it (default: from the command)")
	noRetry := fs.Bool("no-retry", false, "never re-send a tools/call after the server died, whatever its annotations say")
	pingTimeout := fs.Duration("ping-timeout", shim.DefaultPingTimeout, "a ping unanswered this long means the server is deaf: not answering (killed past --hang-after, or after a cancelled call with --kill-on-cancel)")
	killOnCancel := fs.Bool("kill-on-cancel", false, "kill the server when it stays deaf to a ping for --ping-timeout after the client cancelled a call (off: it is left running, reported as not answering, and `mcp-heal heal NAME` restarts it)")
	pingInterval := fs.Duration("ping-interval", 0, "ping an idle server this often and kill it when deaf (0: off)")
	hangAfter := fs.Duration("hang-after", 0, "your deadline: kill the server when a call has been outstanding this long with no sign of life from it and a ping goes unanswered (0: none; silence alone never kills a server)")
	maxFailures := fs.Int("max-failures", 5, "quick failures in a row before the server is marked failed")
	backoffMax := fs.Duration("backoff-max", 30*time.Second, "longest wait between restarts of a crash-looping server")
	trafficLog := fs.Bool("traffic-log", false, "log every message (secrets redacted) to the server's traffic log")
	keepFor := fs.Duration("keep", 0, "keep the server running this long after its client went away, so that the next session or /mcp reconnect re-attaches to it (0: off)")
	keepEnv := fs.StringSlice("keep-env", nil, "with --keep: the environment variables (`NAMES`) the server's config entry sets, part of what makes it the same server")
	queueTimeout := fs.Duration("queue-timeout", 0, "fail calls that waited this long for a server that is down (0: wait until it is up or marked failed)")
	ro := &remoteFlags{}
	ro.Register(fs, env.Getenv)
	if err := parseFlags(env, fs, shimSynopsis, shimDescription, args); err != nil {
		return err
	}
	cmdArgs := fs.Args()
	if ro.URL != "" && len(cmdArgs) > 0 {
		return &usageError{msg: "give either --url or a command, not both"}
	}
	if ro.URL == "" && len(cmdArgs) == 0 {
		return &usageError{msg: "missing the server command", hint: "mcp-heal shim [flags] -- CMD [ARGS...]"}
	}
	if *maxFailures < 1 {
		return &usageError{msg: "--max-failures must be at least 1"}
	}

	level := slog.LevelWarn
	if env.Getenv("MCP_HEAL_DEBUG") != "" {
		level = slog.LevelDebug
	}
	if *name == "" {
		*name = shim.DefaultName(cmdArgs, ro.URL)
	}
	log := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: level})).With("shim", "mcp-heal", "server", text.Name(*name))

	if why := policyDenies(env, *name, cmdArgs, ro.URL); why != "" {
		// Claude Code runs the wrapped entry (a deny rule by command or
		// URL matches the entry as written, not the server inside it):
		// an entry wrapped before the rule was written would lift it.
		return fmt.Errorf("not starting MCP server %s: Claude Code's policy blocks it: %s; run 'mcp-heal unwrap %s' to hand it back to Claude Code", text.QuotedName(*name), why, text.Name(*name))
	}

	var dialer upstream.Dialer
	qt := *queueTimeout
	if ro.URL != "" {
		d, err := ro.Dialer(env.Getenv, log)
		if err != nil {
			return err
		}
		dialer = d
		if qt == 0 {
			qt = ro.Deadline
		}
		if !fs.Changed("backoff-max") {
			// Dialling a remote is one cheap GET: try about once a second
			// while it is down, so a call goes through soon after it is back.
			*backoffMax = time.Second
		}
	} else {
		pc := proc.Config{Path: cmdArgs[0], Args: cmdArgs[1:], Stderr: env.Stderr, Log: log, Guardian: guardian.SelfCommand(), MaxMessage: int(ro.MaxMessage)}
		dialer = stdioDialer(runtime.GOOS, pc, *name, *keepFor, *keepEnv, log)
	}

	o := shim.Options{
		Name:         *name,
		Dialer:       dialer,
		Stdin:        shim.Pollable(env.Stdin),
		Stdout:       shim.Pollable(env.Stdout),
		Log:          log,
		NoRetry:      *noRetry,
		HangAfter:    *hangAfter,
		PingTimeout:  *pingTimeout,
		PingInterval: *pingInterval,
		KillOnCancel: *killOnCancel,
		MaxFailures:  *maxFailures,
		BackoffMax:   *backoffMax,
		QueueTimeout: qt,
		ResetOnUp:    ro.URL != "",
		MaxMessage:   int(ro.MaxMessage),
		Record:       true,
		Session:      env.Getenv("CLAUDE_CODE_SESSION_ID"),
		ClaudePID:    os.Getppid(),
	}
	closeLogs, err := shim.OpenLogs(&o, *trafficLog)
	if err != nil {
		return err
	}
	defer closeLogs()
	shim.TuneRuntime(env.Getenv, ro.URL != "")
	return shim.New(o).RunWithSignals(ctx)
}

// stdioDialer is the upstream of `mcp-heal shim -- CMD` on goos: the kept
// server (internal/keep) with --keep, else the server's own process
// (internal/proc), which is also what a server that cannot be kept gets:
// it runs unkept, with one warning on the log, rather than not at all. On
// Windows the keeper does not exist (it needs unix sockets and descriptor
// passing; issue 20 leaves it unix-only), so --keep says so there.
func stdioDialer(goos string, pc proc.Config, name string, window time.Duration, envNames []string, log *slog.Logger) upstream.Dialer {
	switch {
	case window <= 0:
	case goos == "windows":
		log.Warn("--keep is not supported on Windows: the server runs unkept")
	default:
		kd, err := keep.NewDialer(pc, name, window, envNames, log)
		if err == nil {
			return kd
		}
		log.Warn("cannot keep the server: it runs unkept", "err", err)
	}
	return &proc.Dialer{Config: pc}
}

// policyDenies says why Claude Code's deniedMcpServers (ccpolicy) blocks the
// server this shim was asked to run, "" when it does not. The project is
// the folder Claude Code started the shim in.
func policyDenies(env *Env, name string, cmdArgs []string, url string) string {
	o, _ := ccpolicy.FromEnv(env.Getenv, "", "") // no working directory: the user's and managed rules still apply
	e := ccpolicy.Entry{Name: name, URL: url}
	if len(cmdArgs) > 0 {
		e.Command, e.Args = cmdArgs[0], cmdArgs[1:]
	}
	_, why := ccpolicy.Load(o).Denies(e)
	return why
}
