package guardian

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
)

// CookieVar is the environment variable that marks every process of a
// guardian's tree.
const CookieVar = "MCP_HEAL_TREE"

// ErrUnsupported is returned where there is no guardian (Windows).
var ErrUnsupported = errors.New("the server guardian is not supported on this platform")

// StartError is the server's own start failure (not found, not
// executable), as opposed to a failure to run the guardian.
type StartError struct{ Err error }

func (e *StartError) Error() string { return e.Err.Error() }
func (e *StartError) Unwrap() error { return e.Err }

// Spec is what the guardian starts.
type Spec struct {
	Path string   `json:"path"` // resolved program path
	Argv []string `json:"argv"` // argv[0] as the user wrote it, then the arguments
	// Env is the server's environment; nil inherits the guardian's (which
	// is the shim's).
	Env []string `json:"env,omitempty"`
	Dir string   `json:"dir,omitempty"`
	// StopStepMS is how long each step of the stop ladder waits.
	StopStepMS int64 `json:"stop_step_ms"`
	// Cookie marks the tree (CookieVar); the shim chooses it so that it
	// can sweep the tree itself when the guardian dies.
	Cookie string `json:"cookie"`
}

// Status is how the server ended.
type Status struct {
	Exited bool `json:"exited,omitempty"` // Code is valid
	Code   int  `json:"code,omitempty"`
	Signal int  `json:"signal,omitempty"` // killed by this signal
	// Daemons are processes of the tree that outlived the leader outside
	// its process group (it daemonized); they were killed.
	Daemons []int `json:"daemons,omitempty"`
	// Lost: the guardian died before reporting; the shim killed the group
	// and swept the tree itself.
	Lost bool `json:"lost,omitempty"`
	// Detached: the shim let go of a kept server, which runs on.
	Detached bool   `json:"detached,omitempty"`
	Err      string `json:"err,omitempty"` // wait failed
}

// DaemonNote is what an exit's reason adds when processes of the tree
// outlived the server outside its process group. That is no fault: many
// servers run a helper in its own group (Playwright runs chromium so), so
// the words say what happened and blame nobody.
func (s Status) DaemonNote() string {
	if len(s.Daemons) == 0 {
		return ""
	}
	pids := make([]string, len(s.Daemons))
	for i, p := range s.Daemons {
		pids[i] = fmt.Sprint(p)
	}
	return fmt.Sprintf("%d process(es) it had started outside its process group (pid %s) were stopped with it", len(s.Daemons), strings.Join(pids, ", "))
}

// msg is one line on the control socket. Requests carry Op, events Ev.
type msg struct {
	Op   string `json:"op,omitempty"` // start, signal
	ID   int    `json:"id,omitempty"` // the server run, chosen by the shim
	Spec *Spec  `json:"spec,omitempty"`
	Sig  int    `json:"sig,omitempty"`
	// FDs is how many descriptors came with this message.
	FDs int `json:"fds,omitempty"`

	// Kept guardians (keep_unix.go): attach, writing, stop requests;
	// attached, busy, stopped events. What the shim tells of the MCP
	// session (op "note") is the keeper's (KeepHooks.Note), read as raw.
	Identity string `json:"identity,omitempty"`
	Epoch    int    `json:"epoch,omitempty"`
	// Session is the keeper's session for the attaching shim, handed
	// over as it gave it (KeepHooks.Attach).
	Session json.RawMessage `json:"session,omitempty"`
	Prefix  []byte          `json:"prefix,omitempty"` // stdout bytes read while detached, before the next line
	Open    bool            `json:"open,omitempty"`

	Ev      string  `json:"ev,omitempty"` // started (with 3 fds), exit, error
	PID     int     `json:"pid,omitempty"`
	Started int64   `json:"started,omitempty"` // unix nanoseconds
	Status  *Status `json:"status,omitempty"`
	Err     string  `json:"err,omitempty"`
	Errno   int     `json:"errno,omitempty"`

	// raw is the line as received (for KeepHooks.Note).
	raw []byte
}

func encode(m msg) []byte {
	b, _ := json.Marshal(m) // plain structs: cannot fail
	return append(b, '\n')
}

// SelfCommand is the command that runs a guardian: this binary and
// "guardian". On Linux it is /proc/self/exe, which still runs this binary
// after a plugin update replaced the file; nil when the binary cannot be
// found (the server then runs without a guardian).
func SelfCommand() []string {
	if runtime.GOOS == "linux" {
		if _, err := os.Stat("/proc/self/exe"); err == nil {
			return []string{"/proc/self/exe", "guardian"}
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	return []string{exe, "guardian"}
}
