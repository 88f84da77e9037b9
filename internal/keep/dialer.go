package keep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/guardian"
	"github.com/mcp-heal/mcp-heal/internal/proc"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/upstream"
)

// Dialer is the upstream.Dialer of `shim --keep`: the first Dial attaches
// to the kept server of this identity (or starts a kept guardian for it);
// later Dials (respawns) start a new server under the same guardian. When
// another shim is attached, or the keep is unusable, the shim gets a
// server of its own, not kept, and says why.
type Dialer struct {
	Proc     proc.Config // the server; Proc.Guardian runs a guardian
	Name     string
	Keep     time.Duration
	Identity string
	// Slot is the place the kept server holds (Slot): only a server of
	// the same slot replaces it.
	Slot   string
	Socket string
	Log    *slog.Logger
	// Event, when set, receives the lifecycle events of the keep
	// (keep-attached, keep-started, keep-busy, keep-unusable).
	Event func(event string, kv ...any)

	mu       sync.Mutex
	g        *guardian.Guardian
	epoch    int
	fallback *proc.Dialer
	attached bool
}

var _ upstream.Dialer = (*Dialer)(nil)

// Target is the command line, redacted.
func (d *Dialer) Target() string { return (&proc.Dialer{Config: d.Proc}).Target() }

// Mode is state.ModeStdio.
func (d *Dialer) Mode() string { return state.ModeStdio }

func (d *Dialer) event(ev string, kv ...any) {
	if d.Event != nil {
		d.Event(ev, kv...)
	}
}

// Dial attaches to the kept server or starts one.
func (d *Dialer) Dial(ctx context.Context) (upstream.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fallback != nil {
		return d.fallback.Dial(ctx)
	}
	if d.g != nil {
		select {
		case <-d.g.Dead():
			// Stopped (mcp-heal stop) or killed: the user or the system
			// ended the keep; this session goes on with a server of its
			// own rather than start another kept one behind their back.
			d.g = nil
			d.Log.Warn("the kept server's guardian is gone: this session's server is no longer kept", "server", d.Name)
			d.event("keep-ended")
			d.fallback = &proc.Dialer{Config: d.Proc}
			return d.fallback.Dial(ctx)
		default:
		}
	}
	if d.g == nil {
		a, err := d.attach()
		if err != nil {
			if errors.Is(err, guardian.ErrBusy) {
				d.Log.Warn("another session is attached to the kept server: this one gets a server of its own, not kept", "server", d.Name)
				d.event("keep-busy")
			} else {
				d.Log.Warn("cannot keep the server: it runs unkept", "err", err)
				d.event("keep-unusable", "err", err.Error())
			}
			d.fallback = &proc.Dialer{Config: d.Proc}
			return d.fallback.Dial(ctx)
		}
		d.g, d.epoch = a.Guardian, a.Epoch
		if a.Child != nil {
			d.event("keep-attached", "pid", a.Child.PID, "since", a.Child.Started.UTC())
			p := proc.Adopt(d.Proc, a.Child, a.Prefix)
			var s Session
			if len(a.Session) > 0 {
				if err := json.Unmarshal(a.Session, &s); err != nil {
					// The guardian wrote it from what we noted: the
					// server then sees this client's initialize.
					d.Log.Warn("the kept server's session is unreadable: the new client starts a session of its own", "err", err)
					s = Session{}
				}
			}
			return newConn(p, d.g, d.epoch, &s, d.Log), nil
		}
	}
	p, err := proc.StartUnder(d.Proc, d.g)
	if err != nil {
		return nil, err
	}
	d.event("keep-started", "pid", p.PID(), "window", d.Keep.String())
	return newConn(p, d.g, d.epoch, nil, d.Log), nil
}

// attach attaches to the kept guardian of this identity, starting one
// when none listens.
func (d *Dialer) attach() (*guardian.Attached, error) {
	var last error
	busyUntil := time.Now().Add(2 * time.Second)
	for i := 0; i < 5; i++ {
		a, err := guardian.Attach(d.Socket, d.Identity)
		if errors.Is(err, guardian.ErrBusy) && time.Now().Before(busyUntil) {
			// The shim before us may have just died (Claude Code's
			// /mcp reconnect kills and starts at once): its guardian
			// has not read the EOF yet. Ask again for a moment.
			time.Sleep(50 * time.Millisecond)
			i--
			continue
		}
		if err == nil || errors.Is(err, guardian.ErrBusy) {
			return a, err
		}
		last = err
		if !errors.Is(err, syscall.ECONNREFUSED) && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		if err := d.spawn(errors.Is(err, syscall.ECONNREFUSED)); err != nil {
			last = err
			time.Sleep(50 * time.Millisecond) // another shim may be starting one
		} else {
			d.replaceOld()
		}
	}
	return nil, fmt.Errorf("attach to %s: %w", d.Socket, last)
}

// spawn starts a kept guardian listening on the socket; stale, the file
// of a guardian that died, is removed first.
func (d *Dialer) spawn(stale bool) error {
	if len(d.Proc.Guardian) == 0 {
		return errors.New("no guardian command")
	}
	if stale {
		if fi, err := os.Lstat(d.Socket); err == nil && fi.Mode()&os.ModeSocket != 0 {
			_ = os.Remove(d.Socket)
		}
	}
	ln, err := listen(d.Socket)
	if err != nil {
		return err
	}
	defer ln.Close()
	argv := append(append([]string(nil), d.Proc.Guardian...), "--keep", d.Keep.String(), "--identity", d.Identity, "--slot", d.Slot, "--name", d.Name)
	// The guardian outlives Claude Code's pipe: its own log goes to a file
	// of its own when debugging (MCP_HEAL_DEBUG), else nowhere.
	var logf *os.File
	if os.Getenv("MCP_HEAL_DEBUG") != "" {
		if f, err := state.OpenChildLog(d.Name + ".guardian"); err == nil {
			defer f.Close()
			logf = f
		}
	}
	return guardian.StartKept(argv, ln, logf)
}

// replaceOld stops the detached kept servers of the same slot whose
// identity differs: their config entry changed, and a server of an old
// configuration is never kept (nor re-attached: the identity differs).
// Another slot's server (another project, other --keep-env values) is
// not ours to stop, and neither is one whose record names no slot
// (written by an older version): those end with their window.
func (d *Dialer) replaceOld() {
	recs, err := state.List()
	if err != nil {
		return
	}
	for _, r := range recs {
		if r.Server != d.Name || !r.Kept || r.Attached || r.KeepSocket == "" || r.KeepSocket == d.Socket || r.KeepSlot == "" || r.KeepSlot != d.Slot {
			continue
		}
		if err := Stop(r.KeepSocket); err == nil {
			d.Log.Warn("the server's configuration changed: stopped the kept server of the old one", "pid", r.ChildPID)
			d.event("keep-replaced", "old_pid", r.ChildPID)
		}
	}
}

// KeepRecord adds the keep to the shim's state record.
func (d *Dialer) KeepRecord(r *state.Record) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fallback != nil || d.g == nil {
		return // not (or not yet) attached to a kept server
	}
	r.Kept, r.Attached, r.KeepSocket, r.KeepSlot = true, true, d.Socket, d.Slot
}

// Stop asks the kept guardian of the server whose socket is path to stop
// it and exit.
func Stop(path string) error { return guardian.StopKept(path) }

// NewDialer is the Dialer for the server cfg known as name, kept for
// window: its identity covers the environment variables envNames (the
// ones its config entry sets) as this process has them, and the working
// directory; its slot the same variables, the working directory and
// Claude Code's config dir.
func NewDialer(cfg proc.Config, name string, window time.Duration, envNames []string, log *slog.Logger) (*Dialer, error) {
	if len(cfg.Guardian) == 0 {
		return nil, errors.New("the mcp-heal binary cannot be found to run a guardian")
	}
	cwd, _ := os.Getwd() // $PWD when it names the same folder: any spelling
	cwd = Canonical(cwd)
	configDir := ConfigDir(os.Getenv)
	env := map[string]string{}
	for _, n := range envNames {
		if v, ok := os.LookupEnv(n); ok {
			env[n] = v
		}
	}
	id := Identity(name, cfg.Path, cfg.Args, env, cwd, configDir)
	sock, err := SocketPath(id)
	if err != nil {
		return nil, err
	}
	slot := Slot(name, env, cwd, configDir)
	return &Dialer{Proc: cfg, Name: name, Keep: window, Identity: id, Slot: slot, Socket: sock, Log: log}, nil
}

// Kept lists the sockets of the kept servers named name (every one when
// name is empty), from the state records, and the server pid of each.
func Kept(name string) (map[string]int, error) {
	recs, err := state.List()
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, r := range recs {
		if r.Kept && r.KeepSocket != "" && (name == "" || r.Server == name) {
			out[r.KeepSocket] = r.ChildPID
		}
	}
	return out, nil
}
