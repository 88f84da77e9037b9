// Package demo runs `mcp-heal demo`: the built-in example MCP server behind
// the shim, a client driving bursts of calls at it, and three failures
// injected mid-burst (SIGKILL, a hang, a crash loop that recovers). The same
// script is run against the example server directly, so the report shows
// side by side what the shim changed. Nothing needs the network or anything
// but the mcp-heal binary.
package demo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Options configure a demo run.
type Options struct {
	// Binary is the mcp-heal executable to run as `shim` and
	// `example-server` (the demo re-executes itself).
	Binary string
	// Calls per failure phase (default 24), sent by Workers concurrent
	// clients (default 4).
	Calls, Workers int
	// CallTimeout: a call unanswered this long counts as lost (default 10s).
	CallTimeout time.Duration
	// ShimFlags go before `--` on the shim's command line; nil uses
	// DefaultShimFlags.
	ShimFlags []string
	// Progress, when non-nil, is called with one line per step.
	Progress func(string)
}

// DefaultShimFlags make the shim detect the demo's hang within about 1.5 s
// instead of the production defaults (60 s + 10 s).
//
// --max-failures is raised because the demo packs three failures into a few
// seconds: with the default (5 quick failures in a row) the crash-loop phase
// would mark the server failed and answer calls with an error until the next
// attempt, which is right for a real crash loop but not what this phase
// shows (queued calls released once the server starts again).
var DefaultShimFlags = []string{"--hang-after", "1s", "--ping-timeout", "500ms", "--backoff-max", "1s", "--max-failures", "8"}

// failingStarts is how many starts fail in the crash-loop phase.
const failingStarts = 3

// Report is what the demo found; it is also the --json output.
type Report struct {
	CallsPerPhase int     `json:"calls_per_phase"`
	Workers       int     `json:"workers"`
	Phases        []Phase `json:"phases"`
	Shim          Totals  `json:"shim_totals"`
	Direct        Totals  `json:"direct_totals"`
	DurationMS    int64   `json:"duration_ms"`
}

// Phase is one injected failure seen both ways.
type Phase struct {
	Failure string `json:"failure"`
	Shim    Stats  `json:"shim"`
	Direct  Stats  `json:"direct"`
}

// Stats is what the client saw in one phase.
type Stats struct {
	OK     int `json:"ok"`
	Failed int `json:"failed"`
	Lost   int `json:"lost"` // no answer within the call timeout
	// Retried is the number of requests the shim re-sent to the new
	// server (its state record's counter).
	Retried int `json:"retried"`
	// RecoveryMS is the time from the failure to the first successful
	// answer to a call sent after it; -1 when no call succeeded again.
	RecoveryMS int64 `json:"recovery_ms"`
	// Errors counts the error messages the client got, shortened.
	Errors map[string]int `json:"errors,omitempty"`
	// OldPID and NewPID are the server processes before and after.
	OldPID int `json:"old_pid,omitempty"`
	NewPID int `json:"new_pid,omitempty"`
	// SessionReplayed: after recovery the new server had the client's log
	// level and resource subscription (shim only).
	SessionReplayed bool `json:"session_replayed"`
	// RanTwice counts non-idempotent calls the server executed more than
	// once (an unsafe retry); it must be 0.
	RanTwice int `json:"ran_twice"`
}

// Totals sum the phases of one side.
type Totals struct {
	Calls    int `json:"calls"`
	OK       int `json:"ok"`
	Failed   int `json:"failed"`
	Lost     int `json:"lost"`
	Retried  int `json:"retried"`
	RanTwice int `json:"ran_twice"`
}

// Run runs the script directly against the example server, then through
// the shim, and returns the report.
func Run(ctx context.Context, o Options) (*Report, error) {
	if o.Binary == "" {
		return nil, errors.New("demo: no binary")
	}
	if o.Calls <= 0 {
		o.Calls = 24
	}
	if o.Workers <= 0 {
		o.Workers = 4
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 10 * time.Second
	}
	if o.ShimFlags == nil {
		o.ShimFlags = DefaultShimFlags
	}
	if o.Progress == nil {
		o.Progress = func(string) {}
	}
	dir, err := os.MkdirTemp("", "mcp-heal-demo-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)

	begin := time.Now()
	o.Progress("direct: the example server with the client connected straight to it")
	direct, err := runScript(ctx, o, filepath.Join(dir, "direct"), false)
	if err != nil {
		return nil, fmt.Errorf("direct run: %w", err)
	}
	o.Progress("shim: the same script through mcp-heal shim")
	shim, err := runScript(ctx, o, filepath.Join(dir, "shim"), true)
	if err != nil {
		return nil, fmt.Errorf("shim run: %w", err)
	}
	rep := &Report{CallsPerPhase: o.Calls, Workers: o.Workers, DurationMS: time.Since(begin).Milliseconds()}
	for i, f := range failures {
		rep.Phases = append(rep.Phases, Phase{Failure: f.name, Shim: shim[i], Direct: direct[i]})
		rep.Shim.add(shim[i], o.Calls)
		rep.Direct.add(direct[i], o.Calls)
	}
	return rep, nil
}

func (t *Totals) add(s Stats, calls int) {
	t.Calls += calls
	t.OK += s.OK
	t.Failed += s.Failed
	t.Lost += s.Lost
	t.Retried += s.Retried
	t.RanTwice += s.RanTwice
}

// failure is one way to break the server.
type failure struct {
	name   string
	inject func(pid int, failFile string) error
}

var failures = []failure{
	{"SIGKILL", func(pid int, _ string) error { return kill(pid) }},
	{"hang (SIGSTOP)", func(pid int, _ string) error { return freeze(pid) }},
	{fmt.Sprintf("crash loop (%d failed starts)", failingStarts), func(pid int, failFile string) error {
		// The server fails a start while its start count is at most
		// --fail-starts: rewind the count so the next starts fail.
		if err := os.WriteFile(failFile, []byte(strconv.Itoa(failStartsFlag-failingStarts)), 0o644); err != nil {
			return err
		}
		return kill(pid)
	}},
}

// failStartsFlag is the example server's --fail-starts; its fail file
// starts at this count so normal starts succeed.
const failStartsFlag = 1000

// runScript runs every phase against one target and returns their stats.
func runScript(ctx context.Context, o Options, dir string, viaShim bool) ([]Stats, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	failFile := filepath.Join(dir, "starts")
	callLog := filepath.Join(dir, "calls.log")
	if err := os.WriteFile(failFile, []byte(strconv.Itoa(failStartsFlag)), 0o644); err != nil {
		return nil, err
	}
	server := []string{o.Binary, "example-server", "--era", "handshake",
		"--state-file", filepath.Join(dir, "counter"), "--call-log", callLog,
		"--fail-starts", strconv.Itoa(failStartsFlag), "--fail-file", failFile}
	bin, args := server[0], server[1:]
	if viaShim {
		bin = o.Binary
		args = append(append([]string{"shim", "--name", "demo"}, o.ShimFlags...), append([]string{"--"}, server...)...)
	}
	t, err := startTarget(bin, args, viaShim, filepath.Join(dir, "xdg-state"))
	if err != nil {
		return nil, err
	}
	defer t.stop()

	setupCtx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if _, err := t.client.Initialize(setupCtx, "2025-11-25"); err != nil {
		return nil, fmt.Errorf("initialize: %w (stderr: %s)", err, t.stderr)
	}
	// Session state a respawned server must get back.
	for _, m := range []struct {
		method string
		params map[string]any
	}{
		{"logging/setLevel", map[string]any{"level": "info"}},
		{"resources/subscribe", map[string]any{"uri": "example://counter"}},
		// Claude Code lists tools before calling them; the shim decides
		// what it may re-send from the annotations in this list.
		{"tools/list", nil},
	} {
		r, err := t.client.Call(setupCtx, m.method, m.params)
		if err != nil || r.Error != nil {
			return nil, fmt.Errorf("%s: %v %v", m.method, err, r.Error)
		}
	}
	// Drain notifications so the client's buffer never matters.
	go func() {
		for {
			select {
			case <-t.client.Notifications():
			case <-t.client.Done():
				return
			}
		}
	}()

	var out []Stats
	for i, f := range failures {
		st := runPhase(ctx, o, t, i, f, failFile)
		if viaShim {
			st.SessionReplayed = sessionReplayed(ctx, t)
		}
		st.RanTwice = ranTwice(callLog, i)
		side := "direct"
		if viaShim {
			side = "shim"
		}
		o.Progress(fmt.Sprintf("%s: %s: %d ok, %d failed, %d lost", side, f.name, st.OK, st.Failed, st.Lost))
		out = append(out, st)
	}
	return out, nil
}
