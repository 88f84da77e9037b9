// Package setup is the settings side of `mcp-heal statusline`: the
// statusLine lines to add to Claude Code's user settings
// (~/.claude/settings.json), and adding them when the user asks and the
// file sets no statusLine. A statusLine the user set is never replaced:
// Claude Code takes one per settings file, so the two are combined by a
// line that runs both (Combined), which the user puts there.
//
// The file is written through internal/cfgfile (Claude Code's lock, a
// compare-and-swap, a backup, an atomic swap): never half-written, and a
// concurrent writer's change is never lost. Only the statusLine member is
// added; every other byte of the file stays as it was.
package setup

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/cfgfile"
	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
	"github.com/mcp-heal/mcp-heal/internal/regfile"
)

// RefreshInterval is the statusLine's refreshInterval (seconds): Claude
// Code runs the line on its own updates, and also this often, so that a
// restart while the session is idle shows without a keypress. The line
// costs a few milliseconds.
const RefreshInterval = 5

// SettingsPath is the user settings file of Claude Code for a home and
// $CLAUDE_CONFIG_DIR (when set).
func SettingsPath(home, configDir string) string {
	if configDir != "" {
		return filepath.Join(configDir, "settings.json")
	}
	return filepath.Join(home, ".claude", "settings.json")
}

// Command is the statusLine command that runs bin, for a shell (Claude
// Code runs it through one): bin single-quoted when it holds anything
// but letters, digits and / . _ - (a space, a quote).
func Command(bin string) string { return shellQuote(bin) + " statusline" }

func shellQuote(s string) string {
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', strings.ContainsRune("/._-+:", c):
		default:
			return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
	}
	return s
}

// StatusLine is the statusLine object for command, pretty-printed with
// each line after the first indented by indent.
func StatusLine(command, indent string) string {
	v := struct {
		Type            string `json:"type"`
		Command         string `json:"command"`
		Padding         int    `json:"padding"`
		RefreshInterval int    `json:"refreshInterval"`
	}{"command", command, 0, RefreshInterval}
	b, _ := json.MarshalIndent(v, indent, "  ")
	return string(b)
}

// Snippet is the lines to add to the settings file (inside its top-level
// object), as printed for the user.
func Snippet(command string) string { return `"statusLine": ` + StatusLine(command, "") }

// Combined is a statusLine command that runs theirs, the user's own, and
// then mcp-heal's (command) on the same payload, and shows both on one
// line: the first line of theirs, two spaces, mcp-heal's.
func Combined(theirs, command string) string {
	return `input=$(cat); printf '%s' "$input" | { ` + theirs + "\n" + `} | head -n 1 | tr -d '\n'; printf '  '; printf '%s' "$input" | ` + command
}

// Ours reports whether a statusLine command runs mcp-heal's line (alone,
// or combined with another).
func Ours(command string) bool {
	return strings.Contains(command, "mcp-heal") && strings.Contains(command, " statusline")
}

// Existing is the statusLine a settings file already sets.
type Existing struct {
	Raw     string // the whole statusLine value, as written
	Command string // its command ("" when it has none)
}

// ErrExists means the settings file sets a statusLine already: nothing
// was written.
var ErrExists = errors.New("a statusLine is already set")

// Current is the statusLine the settings file at path sets, or nil (no
// file, or no statusLine in it). A file that is not a JSON object is an
// error.
func Current(path string) (*Existing, error) {
	b, err := regfile.ReadConfig(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return existing(path, b)
}

func existing(path string, b []byte) (*Existing, error) {
	if err := claudecfg.Check(path, b); err != nil {
		return nil, err
	}
	sl := gjson.GetBytes(b, "statusLine")
	if !sl.Exists() || sl.Type == gjson.Null {
		return nil, nil
	}
	return &Existing{Raw: sl.Raw, Command: sl.Get("command").String()}, nil
}

// Install adds the statusLine for command to the settings file at path
// (made when missing) when it sets none. When it sets one it returns that
// one and ErrExists, and writes nothing. backup is the copy of the file as
// it was ("" for a new file).
func Install(path, command string) (backup string, cur *Existing, err error) {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		data := "{\n  " + `"statusLine": ` + StatusLine(command, "  ") + "\n}\n"
		err := cfgfile.Create(path, []byte(data), 0o600)
		if !errors.Is(err, cfgfile.ErrChanged) {
			return "", nil, err
		}
		// Another program made it meanwhile: add to what it wrote.
	}
	backup, err = cfgfile.Update(path, func(b []byte) ([]byte, error) {
		e, err := existing(path, b)
		if err != nil {
			return nil, err
		}
		if e != nil {
			cur = e
			return nil, ErrExists
		}
		return Insert(b, command)
	})
	return backup, cur, err
}

// Insert returns the settings file b (a JSON object with no statusLine)
// with the statusLine for command added as its last member, laid out like
// the file: pretty with the indent of its first member, or compact. Every
// other byte is kept.
func Insert(b []byte, command string) ([]byte, error) {
	end := strings.LastIndexByte(string(b), '}')
	start := strings.IndexByte(string(b), '{')
	if start < 0 || end < start {
		return nil, errors.New("the settings file is not a JSON object")
	}
	body := string(b[start+1 : end])
	nl := "\n"
	if strings.Contains(string(b), "\r\n") {
		nl = "\r\n"
	}
	last := start + 1 + len(strings.TrimRight(body, " \t\r\n"))
	var out []byte
	switch {
	case strings.TrimSpace(body) == "":
		add := nl + "  " + `"statusLine": ` + strings.ReplaceAll(StatusLine(command, "  "), "\n", nl) + nl
		out = splice(b, start+1, end, add)
	case !strings.Contains(body, "\n"):
		v, _ := json.Marshal(json.RawMessage(StatusLine(command, "")))
		out = splice(b, last, last, `,"statusLine":`+string(v))
	default:
		first := strings.TrimLeft(body, "\r\n")
		indent := first[:len(first)-len(strings.TrimLeft(first, " \t"))]
		out = splice(b, last, last, ","+nl+indent+`"statusLine": `+strings.ReplaceAll(StatusLine(command, indent), "\n", nl))
	}
	if e, err := existing("", out); err != nil || e == nil || e.Command != command {
		return nil, fmt.Errorf("adding the statusLine made no valid settings file (%v)", err)
	}
	return out, nil
}

// splice is b with b[i:j] replaced by s.
func splice(b []byte, i, j int, s string) []byte {
	out := make([]byte, 0, len(b)+len(s))
	out = append(out, b[:i]...)
	out = append(out, s...)
	return append(out, b[j:]...)
}
