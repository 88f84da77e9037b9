//go:build linux

package interop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// npmThirdPartyPkgs are the third-party servers installed from npm
// (server-everything and server-memory come with npmClientPkgs).
var npmThirdPartyPkgs = []string{testenv.ServerFilesystem, testenv.ServerSequentialThinking, testenv.PlaywrightMCP, testenv.FastMCP}

// bigFileSize is the file server-filesystem reads whole: 100-byte lines,
// so its text holds an escaped newline every 100 bytes.
const bigFileSize = 16 << 20

// filesystemRow is server-filesystem over two allowed folders, one for the
// calls and one for the big file.
func filesystemRow(t *testing.T, server string) *tpServer {
	dir, big := t.TempDir(), t.TempDir()
	note := filepath.Join(dir, "note.txt")
	row := &tpServer{name: "server-filesystem",
		stdio: func(t *testing.T) ([]string, map[string]string) { return []string{server, dir, big}, nil },
		script: []map[string]any{listTools, call("list_allowed_directories", nil),
			call("write_file", map[string]any{"path": note, "content": "hello\nthird party\n"}),
			call("read_text_file", map[string]any{"path": note}), call("list_directory", map[string]any{"path": dir})},
		readOnly: call("read_text_file", map[string]any{"path": note}),
		mutating: call("edit_file", map[string]any{"path": note, "edits": []map[string]any{{"oldText": "hello", "newText": "hello"}}}),
	}
	row.extra = func(t *testing.T, x *tpRun) {
		x.scenario(colBigFile, func(t *testing.T) string { return bigFile(t, x, big) })
	}
	return row
}

// bigFile reads a 16 MiB file of 100-byte lines directly and through the
// shim, twice each in turn, and compares the answers and the times.
func bigFile(t *testing.T, x *tpRun, dir string) string {
	path := filepath.Join(dir, "big.txt")
	line := bytes.Repeat([]byte("x"), 99)
	line = append(line, '\n')
	data := bytes.Repeat(line, bigFileSize/len(line))
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	direct, shim := x.direct(), x.shim()
	op := map[string]any{"op": "call", "name": "read_text_file", "args": map[string]any{"path": path}, "timeoutMs": 300000}
	read := func(s *tpSession, what string) (string, time.Duration) {
		cp := map[string]any{}
		for k, v := range op {
			cp[k] = v
		}
		r := s.c.wait(s.c.start(cp), 310*time.Second)
		if !r.OK || isError(r) {
			t.Fatalf("read the big file %s: %s", what, short(answer(r), 300))
		}
		return string(r.Result), time.Duration(r.MS) * time.Millisecond
	}
	var dBest, sBest time.Duration
	var want string
	for i := 0; i < 2; i++ {
		d, dt := read(direct, "directly")
		s, st := read(shim, "through the shim")
		if len(d) < bigFileSize || d != s {
			t.Fatalf("the big file's answer through the shim (%d bytes) is not the direct one (%d bytes)", len(s), len(d))
		}
		if want != "" && d != want {
			t.Fatalf("two direct reads of the big file differ")
		}
		want = d
		if i == 0 || dt < dBest {
			dBest = dt
		}
		if i == 0 || st < sBest {
			sBest = st
		}
		t.Logf("16 MiB file, round %d: direct %v, through the shim %v", i+1, dt, st)
	}
	ratio := float64(sBest) / float64(max(dBest, time.Millisecond))
	// A generous bound: the target is 1.2x; a quadratic scan is 10x+.
	if ratio > 3 {
		t.Errorf("16 MiB file: through the shim %v, directly %v: %.1fx, want at most 3x", sBest, dBest, ratio)
	}
	return fmt.Sprintf("identical; direct %v, shim %v (%.2f×)", dBest.Round(time.Millisecond), sBest.Round(time.Millisecond), ratio)
}

// pageHTML is the page the Playwright rows open, served on loopback.
const pageHTML = `<!doctype html><html><head><title>mcp-heal third-party</title></head>
<body><h1>Third-party suite</h1><label>query <input id="q" aria-label="query"></label></body></html>`

// playwrightRow is @playwright/mcp driving Debian's chromium, headless,
// with a fresh profile, never downloading a browser.
func playwrightRow(t *testing.T, server, browser string) *tpServer {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, pageHTML)
	}))
	t.Cleanup(page.Close)
	cfg := filepath.Join(t.TempDir(), "playwright.json")
	conf := map[string]any{
		"browser": map[string]any{
			"browserName": "chromium",
			"isolated":    true,
			"launchOptions": map[string]any{
				"executablePath":  browser,
				"headless":        true,
				"chromiumSandbox": false,
				"args": []string{"--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
					"--disable-component-update", "--disable-sync"},
			},
		},
		"outputDir": t.TempDir(),
	}
	b, _ := json.Marshal(conf)
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := []string{server, "--config", cfg}
	env := map[string]string{"PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1"}
	navigate := call("browser_navigate", map[string]any{"url": page.URL + "/"})
	row := &tpServer{name: "@playwright/mcp + chromium",
		stdio:    func(t *testing.T) ([]string, map[string]string) { return cmd, env },
		script:   []map[string]any{listTools, navigate, call("browser_snapshot", nil), call("browser_tabs", map[string]any{"action": "list"})},
		readOnly: call("browser_snapshot", nil),
		mutating: navigate,
	}
	row.extra = func(t *testing.T, x *tpRun) {
		x.scenario(colKeep, func(t *testing.T) string { return keptBrowser(t, cmd, env, page.URL+"/") })
	}
	return row
}

var textboxRef = regexp.MustCompile(`textbox "query"[^\n]*\[ref=(\w+)\]`)

// keptBrowser runs Playwright behind `mcp-heal shim --keep`, opens the page,
// types into its field and opens a second tab; then it kills the shim with
// SIGTERM and with SIGKILL, and after each a new shim re-attaches to the
// same browser: both tabs are there and the field holds what was typed.
func keptBrowser(t *testing.T, server []string, serverEnv map[string]string, url string) string {
	const name, typed = "playwright-kept", "kept across kills"
	env := map[string]string{"XDG_STATE_HOME": t.TempDir(), "XDG_RUNTIME_DIR": t.TempDir()}
	for k, v := range serverEnv {
		env[k] = v
	}
	bin := testenv.Binary(t)
	cmdline := append([]string{bin, "shim", "--name", name, "--keep", "2m", "--"}, server...)
	t.Cleanup(func() {
		stop := exec.Command(bin, "stop", name)
		for k, v := range env {
			stop.Env = append(stop.Env, k+"="+v)
		}
		stop.Env = append(os.Environ(), stop.Env...)
		if out, err := stop.CombinedOutput(); err != nil {
			t.Logf("mcp-heal stop %s: %v\n%s", name, err, out)
		}
	})
	okText := func(c *tsClient, what string, r reply) string {
		t.Helper()
		if !r.OK || isError(r) {
			t.Fatalf("%s: %s", what, short(answer(r), 500))
		}
		var res struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		json.Unmarshal(r.Result, &res)
		var b strings.Builder
		for _, c := range res.Content {
			b.WriteString(c.Text)
		}
		return b.String()
	}
	c := startTSClient(t, cmdline, env)
	shim := c.connect()
	okText(c, "navigate", c.call("browser_navigate", map[string]any{"url": url}))
	snap := okText(c, "snapshot", c.call("browser_snapshot", nil))
	m := textboxRef.FindStringSubmatch(snap)
	if m == nil {
		t.Fatalf("no query textbox in the snapshot:\n%s", snap)
	}
	okText(c, "type", c.call("browser_type", map[string]any{"target": m[1], "element": "query textbox", "text": typed}))
	okText(c, "new tab", c.call("browser_tabs", map[string]any{"action": "new", "url": url + "?tab=2"}))

	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		if err := syscall.Kill(shim, sig); err != nil {
			t.Fatalf("signal the shim %d: %v", shim, err)
		}
		c.waitEvent("closed", 15*time.Second)
		c = startTSClient(t, cmdline, env)
		shim = c.connect()
		tabs := okText(c, "list tabs", c.call("browser_tabs", map[string]any{"action": "list"}))
		if !strings.Contains(tabs, "?tab=2") || strings.Count(tabs, url) < 2 {
			t.Fatalf("after %v of the shim, the re-attached browser's tabs:\n%s\nwant the page and the second tab", sig, tabs)
		}
		okText(c, "select the first tab", c.call("browser_tabs", map[string]any{"action": "select", "index": 0}))
		value := okText(c, "read the field", c.call("browser_evaluate", map[string]any{"function": "() => document.querySelector('#q').value"}))
		if !strings.Contains(value, typed) {
			t.Fatalf("after %v of the shim, the field holds:\n%s\nwant %q", sig, value, typed)
		}
	}
	return "SIGTERM, SIGKILL: both tabs and the typed field kept"
}
