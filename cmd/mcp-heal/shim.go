package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/guardian"
	"github.com/mcp-heal/mcp-heal/internal/keep"
	"github.com/mcp-heal/mcp-heal/internal/proc"
	"github.com/mcp-heal/mcp-heal/internal/shim"
	"github.com/mcp-heal/mcp-heal/internal/state"
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
	pingTimeout := fs.Duration("ping-timeout", 10*time.Second, "kill the server when a liveness ping gets no answer within this long")
	pingInterval := fs.Duration("ping-interval", 0, "ping an idle server this often (0: only when a call is outstanding)")
	hangAfter := fs.Duration("hang-after", 60*time.Second, "ping the server when a call has been outstanding this long with nothing heard from it")
	maxFailures := fs.Int("max-failures", 5, "quick failures in a row before the server is marked failed")
	backoffMax := fs.Duration("backoff-max", 30*time.Second, "longest wait between restarts of a crash-looping server")
	trafficLog := fs.Bool("traffic-log", false, "log every message (secrets redacted) to the server's traffic log")
	keepFor := fs.Duration("keep", 0, "keep the server running this long after its client went away, so that the next session or /mcp reconnect re-attaches to it (0: off)")
	keepEnv := fs.StringSlice("keep-env", nil, "with --keep: the environment variables (`NAMES`) the server's config entry sets, part of what makes it the same server")
	queueTimeout := fs.Duration("queue-timeout", 0, "fail calls that waited this long for a server that is down (0: wait until it is up or marked failed)")
	ro := addRemoteFlags(fs, env)
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
		if ro.URL != "" {
			*name = hostOf(ro.URL)
		} else {
			*name = defaultServerName(cmdArgs)
		}
	}
	log := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: level})).With("shim", "mcp-heal", "server", *name)

	var dialer upstream.Dialer
	qt := *queueTimeout
	if ro.URL != "" {
		d, err := newRemoteDialer(ro, env, log)
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
		dialer = &proc.Dialer{Config: pc}
		if *keepFor > 0 {
			if kd, err := keep.NewDialer(pc, *name, *keepFor, *keepEnv, log); err != nil {
				log.Warn("cannot keep the server: it runs unkept", "err", err)
			} else {
				dialer = kd
			}
		}
	}

	o := shim.Options{
		Name:         *name,
		Dialer:       dialer,
		Stdin:        pollable(env.Stdin),
		Stdout:       pollable(env.Stdout),
		Log:          log,
		NoRetry:      *noRetry,
		HangAfter:    *hangAfter,
		PingTimeout:  *pingTimeout,
		PingInterval: *pingInterval,
		MaxFailures:  *maxFailures,
		BackoffMax:   *backoffMax,
		QueueTimeout: qt,
		ResetOnUp:    ro.URL != "",
		Record:       true,
		Session:      env.Getenv("CLAUDE_CODE_SESSION_ID"),
		ClaudePID:    os.Getppid(),
	}
	if f, err := state.OpenLog(*name); err != nil {
		log.Warn("no lifecycle log", "err", err)
	} else {
		defer f.Close()
		o.Lifecycle = f
		if kd, ok := dialer.(*keep.Dialer); ok {
			kd.Event = func(ev string, kv ...any) { keep.LogEvent(f, *name, ev, append(kv, "shim_pid", os.Getpid())...) }
		}
	}
	if *trafficLog {
		f, err := state.OpenTrafficLog(*name)
		if err != nil {
			return fmt.Errorf("open traffic log: %w", err)
		}
		defer f.Close()
		o.Traffic = f
	}
	if env.Getenv("GOGC") == "" {
		// The shim's live heap is tiny (a few buffers and the in-flight
		// table); the default GOGC lets the heap grow to 4 MiB before the
		// first collection, which is most of its RSS growth under load.
		debug.SetGCPercent(50)
	}
	if env.Getenv("GOMAXPROCS") == "" && ro.URL == "" {
		// The shim relays bytes between three processes; with one P the
		// hand-offs between its goroutines stay on one thread instead of
		// waking another (measured: +20-60% throughput of 4 KiB messages
		// on a busy 2-core machine, same latency). System calls and blocking
		// writes still get their own threads. (A remote upstream keeps the
		// default: HTTP and TLS work can use more than one core.)
		runtime.GOMAXPROCS(1)
	}
	s := shim.New(o)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sigs := make(chan os.Signal, 4)
	// SIGPIPE is caught so that a client gone away makes writes fail
	// instead of killing the shim before it stops its child.
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE)
	defer signal.Stop(sigs)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case sig := <-sigs:
				switch sig {
				case syscall.SIGPIPE:
					continue
				case syscall.SIGHUP:
					s.Signalled(sig)
					s.Restart("SIGHUP")
				default:
					s.Signalled(sig)
					cancel()
				}
			}
		}
	}()
	return s.Run(ctx)
}

// defaultServerName guesses the name from the command: its base name, or
// for package runners (npx, uvx, ...) the package it runs.
func defaultServerName(cmd []string) string {
	base := filepath.Base(cmd[0])
	switch base {
	case "npx", "uvx", "bunx", "pnpx", "pipx", "node", "python", "python3", "deno", "bun", "uv", "go", "docker":
		for _, a := range cmd[1:] {
			if strings.HasPrefix(a, "-") || a == "run" || a == "exec" || a == "dlx" {
				continue
			}
			a = strings.TrimPrefix(a, "@")
			if i := strings.LastIndex(a, "@"); i > 0 {
				a = a[:i]
			}
			a = filepath.Base(a)
			a = strings.TrimSuffix(a, filepath.Ext(a))
			if a != "" {
				return a
			}
		}
	}
	return base
}

func hostOf(u string) string {
	u = strings.TrimPrefix(strings.TrimPrefix(u, "https://"), "http://")
	if i := strings.IndexAny(u, "/?#"); i >= 0 {
		u = u[:i]
	}
	if i := strings.LastIndexByte(u, '@'); i >= 0 {
		u = u[i+1:]
	}
	return u
}

// pollable returns f as a non-blocking *os.File when it is a pipe or a
// socket, so reads and writes go through Go's netpoller instead of
// parking an OS thread in a blocking syscall per call (which costs a
// scheduler hand-off on every message). Terminals and files are left
// alone: their descriptions may be shared with other processes.
func pollable[T any](f T) T {
	file, ok := any(f).(*os.File)
	if !ok {
		return f
	}
	st, err := file.Stat()
	if err != nil || st.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return f
	}
	fd := file.Fd()
	if setNonblock(fd) != nil {
		return f
	}
	nf := os.NewFile(fd, file.Name())
	if v, ok := any(nf).(T); ok {
		return v
	}
	return f
}
