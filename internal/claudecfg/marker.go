package claudecfg

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/ccpolicy"
)

// What wrap leaves in an entry it rewrites, read back here so that
// discovery resolves a wrapped entry to the real server and notices a
// stale local copy (Server.Drift). claudecfg/wrap writes them.

// MarkerKey holds, inside a wrapped entry, the original entry exactly as it
// was ({"original": <entry>}), so unwrap restores it byte for byte. Claude
// Code 2.1.328 ignores unknown keys in a server entry and keeps them when it
// rewrites ~/.claude.json or .mcp.json (checked with `claude mcp get`,
// `claude mcp list` and `claude mcp add`).
const MarkerKey = "mcpHeal"

// ProjectMarker is the key, inside the marker, of {"file", "sha256"}.
const ProjectMarker = "project"

// EntryHash identifies an entry's content, whitespace aside.
func EntryHash(raw string) string {
	var buf bytes.Buffer
	if json.Compact(&buf, []byte(raw)) != nil {
		buf.Reset()
		buf.WriteString(raw)
	}
	sum := sha256.Sum256(buf.Bytes())
	return hex.EncodeToString(sum[:])
}

// CopyOf reads a local entry's marker: the .mcp.json file and the hash of
// the entry it stands in for ("" when it is not such a copy).
func CopyOf(e gjson.Result) (file, hash string) {
	p := LastVal(LastVal(e, MarkerKey), ProjectMarker)
	return LastVal(p, "file").String(), LastVal(p, "sha256").String()
}

// drift says how the local copy s differs from the project entry it
// stands in for (project: the servers read from .mcp.json files).
func drift(s Server, project []Server) string {
	if s.Unapproved() {
		return DriftUnapproved + " in Claude Code (" + s.Approval + "), yet Claude Code runs mcp-heal's copy of it from the local scope until it is unwrapped"
	}
	for _, p := range project {
		if p.Name == s.Name && p.File == s.Protects {
			if p.hash != s.hash {
				return "changed in " + s.Protects + " since mcp-heal copied it; Claude Code still runs the old copy until it is wrapped again"
			}
			return ""
		}
	}
	return "removed from " + s.Protects + "; Claude Code still runs mcp-heal's copy until it is unwrapped"
}

// DriftUnapproved begins the Drift of a local copy whose project server
// the user rejected or no longer approves: the copy must go (unwrap).
const DriftUnapproved = ccpolicy.DriftUnapproved
