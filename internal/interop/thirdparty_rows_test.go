//go:build linux

package interop

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
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
		x.scenario(colBigFile, func(t *testing.T) string { return bigFile(t, x, server, []string{dir, big}) })
	}
	return row
}

// bigFile reads a 16 MiB file of 100-byte lines directly and through the
// shim, three times each in turn, and compares the answers and the best
// times. The
// answer (the text twice: content and structuredContent) is 34 MB: the
// shim runs with --max-message 64MiB. The call is timed with raw lines,
// no client's parsing in the way: the TypeScript SDK's stdio reader
// refuses a message over 10 MiB by default, and with a larger limit
// rescans its buffer for a newline on every chunk (215 s for this answer
// alone on the 2-core machine).
func bigFile(t *testing.T, x *tpRun, server string, args []string) string {
	path := filepath.Join(args[len(args)-1], "big.txt")
	line := append(bytes.Repeat([]byte("x"), 99), '\n')
	if err := os.WriteFile(path, bytes.Repeat(line, bigFileSize/len(line)), 0o600); err != nil {
		t.Fatal(err)
	}
	direct := openRaw(t, "server-filesystem (big file)", nil, append([]string{server}, args...)...)
	shimArgs := append([]string{testenv.Binary(t), "shim", "--name", "server-filesystem", "--max-message", "64MiB", "--", server}, args...)
	shim := openRaw(t, "shim (big file)", []string{"XDG_STATE_HOME=" + t.TempDir()}, shimArgs...)
	req := fmt.Sprintf(`{"jsonrpc":"2.0","id":%%d,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":%q}}}`, path)
	var dBest, sBest time.Duration
	for i := 0; i < 3; i++ {
		d, dt := direct.roundTrip(t, fmt.Sprintf(req, 10+i), 60*time.Second)
		s, st := shim.roundTrip(t, fmt.Sprintf(req, 10+i), 150*time.Second)
		if len(d) < 2*bigFileSize || !bytes.Contains(d, []byte(`"result"`)) {
			t.Fatalf("the big file's answer directly: %d bytes: %s", len(d), short(string(d), 300))
		}
		if !bytes.Equal(d, s) {
			t.Fatalf("the big file's answer through the shim (%d bytes) is not the direct one (%d bytes): %s", len(s), len(d), short(string(s), 300))
		}
		if i == 0 || dt < dBest {
			dBest = dt
		}
		if i == 0 || st < sBest {
			sBest = st
		}
		t.Logf("16 MiB file (a %d-byte answer), round %d: direct %v, through the shim %v", len(d), i+1, dt, st)
	}
	ratio := float64(sBest) / float64(max(dBest, time.Millisecond))
	// A generous bound: the target is 1.2x, but on 2 shared cores the
	// shim's process competes with the server for CPU (1.3x to 3x
	// measured); the quadratic scan this catches gave no answer in 150 s.
	if ratio > 5 {
		t.Errorf("16 MiB file: through the shim %v, directly %v: %.1fx, want at most 5x", sBest, dBest, ratio)
	}
	return fmt.Sprintf("identical; direct %v, shim %v (%.2f×)", dBest.Round(time.Millisecond), sBest.Round(time.Millisecond), ratio)
}

// rawSession exchanges raw JSON-RPC lines with a stdio process.
type rawSession struct {
	p *stdioProc
	r *bufio.Reader
}

// openRaw starts argv and opens an MCP session with it by hand.
func openRaw(t *testing.T, name string, env []string, argv ...string) *rawSession {
	t.Helper()
	s := &rawSession{p: startStdio(t, name, env, argv...)}
	s.r = bufio.NewReaderSize(s.p.out, 1<<20)
	s.roundTrip(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcp-heal-thirdparty","version":"1"}}}`, 30*time.Second)
	if _, err := io.WriteString(s.p.in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	return s
}

// roundTrip writes one request and returns the next response line (the
// server's notifications skipped) and the time it took, failing after d.
func (s *rawSession) roundTrip(t *testing.T, req string, d time.Duration) ([]byte, time.Duration) {
	t.Helper()
	type got struct {
		line []byte
		err  error
	}
	ch := make(chan got, 1)
	start := time.Now()
	if _, err := io.WriteString(s.p.in, req+"\n"); err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			line, err := s.r.ReadBytes('\n')
			if err != nil || !bytes.Contains(line[:min(len(line), 200)], []byte(`"method"`)) {
				ch <- got{line, err}
				return
			}
		}
	}()
	select {
	case g := <-ch:
		if g.err != nil {
			t.Fatalf("read the answer: %v (%d bytes)", g.err, len(g.line))
		}
		return g.line, time.Since(start)
	case <-time.After(d):
		s.p.cmd.Process.Kill()
		t.Fatalf("no answer within %v", d)
	}
	return nil, 0
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
		// The snapshot goes to a file named by the time.
		volatile: []*regexp.Regexp{regexp.MustCompile(`page-\d{4}-\d\d-\d\dT[\d-]+Z`)},
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
