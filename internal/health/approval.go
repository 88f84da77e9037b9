package health

import (
	"path/filepath"

	"github.com/mcp-heal/mcp-heal/internal/ccpolicy"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/text"
)

// ApproveFirst is the probe's hint for a server it refused as not
// approved (it knows no file to name).
const ApproveFirst = "approve it in Claude Code (/mcp) if you trust the repository it came from"

// NotApprovedHint is what to do about project server s that is not
// approved: approve it in Claude Code only if its file is trusted.
func NotApprovedHint(s Entry, a Audience) string {
	file := s.File
	if s.Protects != "" {
		file = s.Protects // wrap's local copy of it
	}
	return "if you trust " + filepath.Base(file) + " in " + filepath.Dir(file) + ", approve " + text.Name(s.Name) + " in Claude Code (/mcp), then run " + a.Cmd("doctor "+text.Name(s.Name))
}

// Entry is what health reads of a configured server (a claudecfg.Server,
// converted by its callers): health does not import the config package, so
// the shim, which links health, links no config discovery.
type Entry struct {
	Name     string
	File     string // the config file it was read from
	Wrapped  bool
	Shadowed bool
	Approval string // ccpolicy.Approved, Pending or Rejected ("" when not asked)
	Protects string // a local copy's .mcp.json
	Drift    string
	Policy   *ccpolicy.Decision
	// Gone is the last shim of it that died (killed or crashed) in a
	// session that still runs, when none runs it since (state.FindGone).
	Gone *state.Gone
}
