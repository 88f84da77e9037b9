package proc

import (
	"context"
	"strings"
	"sync"

	"github.com/mcp-heal/mcp-heal/internal/guardian"
	"github.com/mcp-heal/mcp-heal/internal/redact"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/upstream"
)

// Dialer starts a fresh child for every Dial: the upstream.Dialer of a
// stdio shim. With Config.Guardian set, one guardian serves every Dial (a
// respawn costs no extra exec); a new one is started if it died.
type Dialer struct {
	Config Config

	mu sync.Mutex
	g  *guardian.Guardian
}

var _ upstream.Dialer = (*Dialer)(nil)

// Dial starts the command. ctx is not used to kill the child (that would
// skip the stop ladder); the shim closes the Process itself.
func (d *Dialer) Dial(ctx context.Context) (upstream.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p, err := start(d.Config, d.guardian())
	if err != nil {
		return nil, err
	}
	return p, nil
}

// guardian returns the live shared guardian, starting one when needed;
// nil when none is configured or it cannot start (Start says why).
func (d *Dialer) guardian() *guardian.Guardian {
	if len(d.Config.Guardian) == 0 {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.g != nil {
		select {
		case <-d.g.Dead():
			d.g = nil
		default:
			return d.g
		}
	}
	g, err := guardian.Start(d.Config.Guardian, stderrFile(d.Config))
	if err != nil {
		return nil // start falls back and logs
	}
	d.g = g
	return g
}

// Target is the command line, shell-quoted, with secrets redacted.
func (d *Dialer) Target() string {
	parts := make([]string, 0, 1+len(d.Config.Args))
	for _, a := range append([]string{d.Config.Path}, d.Config.Args...) {
		parts = append(parts, quote(a))
	}
	return redact.String(strings.Join(parts, " "))
}

// Command is the program Dial starts (the shim looks at it when a start
// fails: a command that is not there cannot start, however often tried).
func (d *Dialer) Command() string { return d.Config.Path }

// Mode is state.ModeStdio.
func (d *Dialer) Mode() string { return state.ModeStdio }

func quote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`;&|<>()*?[]{}!#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
