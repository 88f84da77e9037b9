package hook_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// world is a throwaway HOME with its own XDG dirs and project, in which the
// real mcp-heal binary runs as Claude Code would run it.
type world struct {
	home, project, state string
	extra                []string // more environment
}

func newWorld(t *testing.T) *world {
	t.Helper()
	home := testenv.TempDir(t)
	w := &world{home: home, project: filepath.Join(home, "project"), state: filepath.Join(home, "state")}
	if err := os.MkdirAll(w.project, 0o755); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *world) env() []string {
	return append([]string{
		"HOME=" + w.home,
		"PATH=" + os.Getenv("PATH"),
		"XDG_STATE_HOME=" + w.state,
		"XDG_DATA_HOME=" + filepath.Join(w.home, "data"),
		"XDG_CONFIG_HOME=" + filepath.Join(w.home, "config"),
		"XDG_CACHE_HOME=" + filepath.Join(w.home, "cache"),
		"CLAUDE_PROJECT_DIR=" + w.project,
	}, w.extra...)
}

// hook runs `mcp-heal hook <event>` with payload on stdin and returns
// stdout; it fails the test on a non-zero exit or anything on stderr.
func (w *world) hook(t *testing.T, event string, payload []byte) []byte {
	t.Helper()
	code, stdout, stderr := testenv.RunBinary(t, w.env(), w.project, string(payload), "hook", event)
	if code != 0 {
		t.Fatalf("mcp-heal hook %s: exit %d\nstderr: %s", event, code, stderr)
	}
	if stderr != "" {
		t.Fatalf("mcp-heal hook %s wrote to stderr: %s", event, stderr)
	}
	return []byte(stdout)
}

// incidents returns the incident log with times removed.
func (w *world) incidents(t *testing.T) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(w.state, "mcp-heal", "incidents.jsonl"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("incident line %q: %v", line, err)
		}
		if _, ok := m["time"]; !ok {
			t.Fatalf("incident without time: %s", line)
		}
		delete(m, "time")
		out = append(out, m)
	}
	return out
}

func payloads(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(testenv.HookPayloadDir(t), "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no hook payloads in testdata/claude-code-2.1.328/hooks: %v", err)
	}
	return files
}

// TestGolden runs every real hook payload Claude Code 2.1.328 sent
// through the real binary, as the event it was recorded for, with no MCP
// config and no shims: the reply and the incidents it records must match
// testdata/golden/<payload>.golden (go test -update rewrites them).
func TestGolden(t *testing.T) {
	for _, file := range payloads(t) {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		t.Run(name, func(t *testing.T) {
			payload, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			event, _, _ := strings.Cut(name, ".")
			w := newWorld(t)
			out := w.hook(t, event, payload)
			if len(out) > 0 && !json.Valid(out) {
				t.Fatalf("reply is not JSON: %q", out)
			}
			var got bytes.Buffer
			got.WriteString("# stdout\n")
			if len(out) > 0 {
				var v any
				_ = json.Unmarshal(out, &v)
				b, _ := json.MarshalIndent(v, "", "  ")
				got.Write(b)
				got.WriteByte('\n')
			}
			got.WriteString("# incidents\n")
			for _, in := range w.incidents(t) {
				b, _ := json.Marshal(in)
				got.Write(b)
				got.WriteByte('\n')
			}
			golden := filepath.Join("testdata", "golden", name+".golden")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("mcp-heal hook %s < %s:\ngot:\n%s\nwant:\n%s", event, filepath.Base(file), got.String(), want)
			}
		})
	}
}
