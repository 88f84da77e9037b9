package proc

import (
	"context"
	"strings"

	"github.com/mcp-heal/mcp-heal/internal/redact"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/upstream"
)

// Dialer starts a fresh child for every Dial: the upstream.Dialer of a
// stdio shim.
type Dialer struct {
	Config Config
}

var _ upstream.Dialer = (*Dialer)(nil)

// Dial starts the command. ctx is not used to kill the child (that would
// skip the stop ladder); the shim closes the Process itself.
func (d *Dialer) Dial(ctx context.Context) (upstream.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p, err := Start(d.Config)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Target is the command line, shell-quoted, with secrets redacted.
func (d *Dialer) Target() string {
	parts := make([]string, 0, 1+len(d.Config.Args))
	for _, a := range append([]string{d.Config.Path}, d.Config.Args...) {
		parts = append(parts, quote(a))
	}
	return redact.String(strings.Join(parts, " "))
}

// Mode is state.ModeStdio.
func (d *Dialer) Mode() string { return state.ModeStdio }

func quote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`;&|<>()*?[]{}!#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
