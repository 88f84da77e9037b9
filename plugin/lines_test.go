package plugin_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

var updateLines = flag.Bool("update-lines", false, "rewrite testdata/launcher-lines.golden")

// launcherLine matches a line the launcher's scripts print to the user:
// say's, echo's and printf's "mcp-heal: ..." strings and the two texts
// kept in variables (building, nocache).
var launcherLine = regexp.MustCompile(`(?:say \w+ |echo |printf |building=|nocache=)(?:"mcp-heal: ([^"]*)"|'mcp-heal: ([^']*)')`)

// sampleVars stand for what the scripts fill in, at a common length.
var sampleVars = strings.NewReplacer(
	"$(uname -s 2>/dev/null)", "FreeBSD", "$(uname -m 2>/dev/null)", "x86_64",
	"$(id -un)", "alice", "$go_min", "1.26.8", "$goos", "linux", "$goarch", "amd64",
	"$name", "mcp-heal-linux-amd64", "$stable", "/home/alice/.local/share/mcp-heal/bin/mcp-heal",
	"$dir", "/home/alice/.local/bin", "$d", "/home/alice/.local/bin",
	"$where", "/home/alice/.claude/plugins/data/mcp-heal-mcp-heal", "$why", "exit status 1",
	"%s", "2",
)

// launcherLeads are how a line that asks something may start after
// "mcp-heal: " (or "mcp-heal: hint: "): the action first.
var launcherLeads = []string{"run ", "install ", "reinstall ", "make ", "nothing to run: "}

// TestLauncherLinesGolden lists every line the launcher's scripts
// (plugin/mcp-heal, integrity.sh, build.sh, link.sh) print to the user,
// as the cmd/mcp-heal and health golden tables list the binary's: each
// puts its action first and ends it by column 80, or is info (an error
// line whose hint follows, the build's progress line). The Windows
// launcher prints the same integrity lines (plugin/winlauncher).
func TestLauncherLinesGolden(t *testing.T) {
	root := testenv.ModuleRoot(t)
	var b strings.Builder
	b.WriteString("# Every line the plugin's launcher scripts print (TestLauncherLinesGolden).\n")
	b.WriteString("# action: the column the action ends at (at most 80); info: asks nothing.\n")
	for _, f := range []string{"plugin/mcp-heal", "plugin/integrity.sh", "plugin/build.sh", "plugin/link.sh"} {
		src, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range launcherLine.FindAllStringSubmatch(string(src), -1) {
			body := sampleVars.Replace(strings.TrimSuffix(m[1]+m[2], `\n`))
			line := "mcp-heal: " + body
			mark := ""
			switch {
			case strings.HasPrefix(body, "error: "):
				mark = "info: an error; the hint line after it carries the action"
			case strings.HasPrefix(body, "building its binary from source"):
				mark = "info: progress of a build the user started by using the plugin"
			default:
				rest, prefix := body, "mcp-heal: "
				if h, ok := strings.CutPrefix(body, "hint: "); ok {
					rest, prefix = h, "mcp-heal: hint: "
				}
				lead := ""
				for _, l := range launcherLeads {
					if strings.HasPrefix(rest, l) {
						lead = l
					}
				}
				// The action ends at its colon, or at the semicolon
				// between two commands, whichever comes first.
				end := strings.Index(rest, ": ")
				if l := strings.Index(rest, "; "); l >= 0 && (end < 0 || l < end) {
					end = l
				}
				if lead == "" {
					t.Errorf("%s: the action is not first: %q", f, line)
					mark = "action: not first"
					break
				}
				if lead == "nothing to run: " {
					end = len("nothing to run")
				} else if end < 0 {
					end = len(rest)
				}
				col := utf8.RuneCountInString(prefix + rest[:end])
				if col > 80 {
					t.Errorf("%s: the action ends at column %d, past 80: %q", f, col, line)
				}
				mark = fmt.Sprintf("action: %d", col)
			}
			fmt.Fprintf(&b, "\n[%s] (%s)\n%s\n", f, mark, line)
		}
	}
	testenv.Golden(t, filepath.Join(root, "plugin", "testdata", "launcher-lines.golden"), b.String(), *updateLines, "the launcher's lines")
}
