package shim

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/mcp-heal/mcp-heal/internal/rawio"

	"github.com/mcp-heal/mcp-heal/internal/state"
)

// This file is what `mcp-heal shim` does around Run as a process: the
// server's default name, its logs, the runtime's tuning, the signals.

// DefaultName is the server's name when --name is not given: the host of
// url for a remote, else a guess from the command: its base name, or for
// package runners (npx, uvx, ...) the package it runs.
func DefaultName(cmd []string, url string) string {
	if url != "" {
		return hostOf(url)
	}
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

// hostOf is the host (and port) of u, without a userinfo part (which may
// be a secret). A URL the bridge would refuse (bridge.ParseURL) has none:
// its shim stops at that error, under the name "remote".
func hostOf(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return "remote"
	}
	return p.Host
}

// eventLogger is a dialer that writes lifecycle events of its own (a kept
// server's, internal/keep) to the server's lifecycle log.
type eventLogger interface{ LogEventsTo(w io.Writer) }

// OpenLogs opens o.Name's lifecycle log into o.Lifecycle and, with traffic,
// its traffic log into o.Traffic; close closes them. A lifecycle log that
// cannot be opened is warned about on o.Log (the shim runs without it); a
// traffic log asked for and not opened is an error.
func OpenLogs(o *Options, traffic bool) (close func(), err error) {
	var files []io.Closer
	close = func() {
		for _, f := range files {
			f.Close()
		}
	}
	if f, err := state.OpenLog(o.Name); err != nil {
		o.Log.Warn("no lifecycle log", "err", err)
	} else {
		files = append(files, f)
		o.Lifecycle = f
		if el, ok := o.Dialer.(eventLogger); ok {
			el.LogEventsTo(f)
		}
	}
	if traffic {
		f, err := state.OpenTrafficLog(o.Name)
		if err != nil {
			close()
			return func() {}, fmt.Errorf("open traffic log: %w", err)
		}
		files = append(files, f)
		o.Traffic = f
	}
	return close, nil
}

// TuneRuntime sets the garbage collector and GOMAXPROCS for a shim process,
// unless the user set GOGC or GOMAXPROCS in its environment.
func TuneRuntime(getenv func(string) string, remote bool) {
	if getenv("GOGC") == "" {
		// The shim's live heap is tiny (a few buffers and the in-flight
		// table); the default GOGC lets the heap grow to 4 MiB before the
		// first collection, which is most of its RSS growth under load.
		debug.SetGCPercent(50)
	}
	if getenv("GOMAXPROCS") == "" && !remote {
		// The shim relays bytes between three processes; with one P the
		// hand-offs between its goroutines stay on one thread instead of
		// waking another (measured: +20-60% throughput of 4 KiB messages
		// on a busy 2-core machine, same latency). System calls and blocking
		// writes still get their own threads. (A remote upstream keeps the
		// default: HTTP and TLS work can use more than one core.)
		runtime.GOMAXPROCS(1)
	}
}

// RunWithSignals is Run for the shim process: SIGHUP restarts the server
// on purpose (on Windows, which has no SIGHUP, the heal event that
// state.NudgeShim sets); SIGINT and SIGTERM stop it and return.
func (s *Shim) RunWithSignals(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if stop, err := state.ListenHeal(func() { s.Restart("heal") }); err != nil {
		s.log.Warn("heal and the hooks cannot restart this shim's server", "err", err)
	} else {
		defer stop()
	}
	sigs := make(chan os.Signal, 4)
	// SIGPIPE is caught so that a client gone away makes writes fail
	// instead of killing the shim before it stops its child. On Windows
	// only SIGINT (Ctrl+C) and SIGTERM (its console closed) arrive.
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

// Pollable returns f as a non-blocking *os.File when it is a pipe or a
// socket, so reads and writes go through Go's netpoller instead of
// parking an OS thread in a blocking syscall per call (which costs a
// scheduler hand-off on every message). Terminals and files are left
// alone: their descriptions may be shared with other processes.
func Pollable[T any](f T) T {
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
	if r := rawio.Wrap(nf); r != nil {
		if v, ok := r.(T); ok {
			return v
		}
	}
	if v, ok := any(nf).(T); ok {
		return v
	}
	return f
}
