package claudecfg

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// A project's .mcp.json is usually committed and shared: pointing its
// entries at a binary in one person's HOME breaks them for the team. So by
// default wrap protects a project server with a local-scope entry of the
// same name (~/.claude.json "projects"[<project>]["mcpServers"]), which
// Claude Code prefers over .mcp.json (local > project > user precedence),
// holding the wrapped copy, and leaves .mcp.json alone. The copy's marker
// names the .mcp.json file and a hash of the entry it copies, so a change
// to .mcp.json (a teammate's new argument) is noticed (Server.Drift) and
// wrap refreshes the copy.

// What wrap does with project (.mcp.json) servers.
const (
	ProjectLocal   = "local"   // protect them with a local entry (default)
	ProjectSkip    = "skip"    // leave them alone
	ProjectRewrite = "rewrite" // rewrite .mcp.json itself
)

// projectMarker is the key, inside the marker, of {"file", "sha256"}.
const projectMarker = "project"

// entryHash identifies an entry's content, whitespace aside.
func entryHash(raw string) string {
	var buf bytes.Buffer
	if json.Compact(&buf, []byte(raw)) != nil {
		buf.Reset()
		buf.WriteString(raw)
	}
	sum := sha256.Sum256(buf.Bytes())
	return hex.EncodeToString(sum[:])
}

// copyOf reads a local entry's marker: the .mcp.json file and the hash of
// the entry it stands in for ("" when it is not such a copy).
func copyOf(e gjson.Result) (file, hash string) {
	p := lastVal(lastVal(e, markerKey), projectMarker)
	return lastVal(p, "file").String(), lastVal(p, "sha256").String()
}

// protectEntry is the local entry that stands in for project entry e of
// file: e wrapped, on one line, its marker naming file and e's hash.
func protectEntry(name string, e gjson.Result, shimPath, file string) (string, Change) {
	text, ch := wrapEntry(name, e, shimPath)
	if ch.Action != ActWrapped {
		if ch.Action != ActSkipped {
			// Wrapped in .mcp.json itself (--project-servers rewrite
			// earlier): nothing to protect, and .mcp.json is not touched.
			ch.Action, ch.Detail = ActAlreadyWrapped, "in "+filepath.Base(file)+" itself"
		}
		return "", ch
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(text)); err != nil {
		return "", Change{Name: name, Action: ActSkipped, Detail: err.Error()}
	}
	mark := fmt.Sprintf(`{"file":%s,"sha256":%q}`, jsonString(file), entryHash(e.Raw))
	out, err := sjson.SetRaw(buf.String(), markerKey+"."+projectMarker, mark)
	if err != nil {
		return "", Change{Name: name, Action: ActSkipped, Detail: err.Error()}
	}
	ch.Detail = "by a local entry of the same name, which Claude Code prefers; " + filepath.Base(file) + " is not changed"
	return out, ch
}

// drift says how the local copy s differs from the project entry it
// stands in for (project: the servers read from .mcp.json files).
func drift(s Server, project []Server) string {
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
