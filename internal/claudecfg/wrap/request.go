package wrap

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
	"github.com/mcp-heal/mcp-heal/internal/cli"
)

// Complete checks a Request built from wrap's or unwrap's command line and
// fills in what wrap defaults: the shim binary (DefaultShim when r.Shim is
// empty, made absolute) and, for keep > 0, the stdio entries' --keep flag.
// A bad flag value is a *cli.UsageError.
func (r *Request) Complete(keep time.Duration) error {
	switch r.Scope {
	case "all", claudecfg.ScopeProject, claudecfg.ScopeUser, claudecfg.ScopeLocal:
	default:
		return &cli.UsageError{Msg: fmt.Sprintf("unknown scope %q", r.Scope), Hint: "use project, user, local or all"}
	}
	if r.Unwrap {
		return nil
	}
	switch r.Project {
	case ProjectLocal, ProjectSkip, ProjectRewrite:
	default:
		return &cli.UsageError{Msg: fmt.Sprintf("unknown --project-servers %q", r.Project), Hint: "use local, skip or rewrite"}
	}
	var err error
	if r.Shim == "" {
		if r.Shim, err = claudecfg.DefaultShim(); errors.Is(err, claudecfg.ErrTemporaryBuild) {
			return &cli.UsageError{Msg: err.Error(), Hint: "install it (go install ./cmd/mcp-heal) and run that, or pass --shim PATH"}
		} else if err != nil {
			return err
		}
	}
	if r.Shim, err = filepath.Abs(r.Shim); err != nil {
		return err
	}
	if keep > 0 {
		r.Flags = []string{"--keep", keep.String()}
	}
	return nil
}

// MissingError is the usage error for the names asked for that no entry in
// scope has (nil when there are none): plugin-provided servers cannot be
// wrapped, their config belongs to the plugin and is replaced when it
// updates.
func (p *Plan) MissingError(scope string) error {
	if len(p.Missing) == 0 {
		return nil
	}
	hint := "run 'mcp-heal status' to see the servers and their scopes"
	for _, n := range p.Missing {
		if strings.HasPrefix(n, "plugin:") {
			hint = "plugin-provided servers cannot be wrapped: their config belongs to the plugin and is replaced when it updates"
		}
	}
	return &cli.UsageError{Msg: fmt.Sprintf("no server named %s in scope %s", cli.QuoteList(p.Missing), scope), Hint: hint}
}
