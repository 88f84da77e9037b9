//go:build linux

package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// The secrets of TestWrappedRemoteSecretsNotInPS's remote entries, one per
// part of a URL and per way a header is given.
const (
	pathSecret   = "sk-PathSecret0042"    // in the path, through ${ADV_KEY}
	querySecret  = "QuerySecret77x"       // a query value
	userSecret   = "PassSecret55x"        // the userinfo's password
	fragSecret   = "FragSecret66x"        // the fragment
	hdrSecret    = "HdrSecret11x"         // a header value written out
	hdrVarSecret = "HdrVarSecret22x"      // a header value through ${ADV_HDR}
	hostSecret   = "tenant-secret-host42" // a host name (the path's entry is on 127.0.0.1)
)

// TestWrappedRemoteSecretsNotInPS: after `wrap --all` on a config with
// every remote shape wrap writes (http, sse, headers, ${VAR} in the URL and
// in a header, userinfo, query, fragment), the wrapped entries, started as
// Claude Code starts them (${VAR} expanded in args and env), reach their
// server with every secret, and no process's argv (/proc/*/cmdline, what
// ps shows), no file under the state folder (records, logs) and no output
// of status, doctor or logs holds any secret or any part of the URL.
func TestWrappedRemoteSecretsNotInPS(t *testing.T) {
	// The server checks that each secret arrives: a shim that lost one
	// gets 403 and no handshake.
	streamable := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		return mcp.NewServer(&mcp.Implementation{Name: "keyed", Version: "1.0.0"}, nil)
	}, nil)
	sse := mcp.NewSSEHandler(func(*http.Request) *mcp.Server {
		return mcp.NewServer(&mcp.Implementation{Name: "legacy", Version: "1.0.0"}, nil)
	}, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ok := false
		switch {
		case strings.HasPrefix(r.URL.Path, "/mcp/"):
			ok = r.URL.Path == "/mcp/"+pathSecret+"/sse"
		case r.URL.Path == "/sse":
			ok = r.Method != http.MethodGet || r.URL.Query().Get("api_key") == querySecret
		case r.URL.Path == "/hdr/mcp":
			ok = r.Header.Get("Authorization") == "Bearer "+hdrSecret && r.Header.Get("X-Key") == hdrVarSecret
		case r.URL.Path == "/user/mcp":
			_, pass, _ := r.BasicAuth()
			ok = pass == userSecret
		}
		if !ok {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		if r.URL.Path == "/sse" {
			sse.ServeHTTP(w, r)
			return
		}
		streamable.ServeHTTP(w, r)
	}))
	defer ts.Close()
	hostPort := strings.TrimPrefix(ts.URL, "http://")

	c := newCfgEnv(t)
	c.vars["ADV_KEY"], c.vars["ADV_HDR"] = pathSecret, hdrVarSecret
	global := filepath.Join(c.dots, "claude.json")
	c.write(global, `{
  "mcpServers": {
    "pathkey": {"type": "http", "url": "`+ts.URL+`/mcp/${ADV_KEY}/sse"},
    "legacy": {"type": "sse", "url": "`+ts.URL+`/sse?api_key=`+querySecret+`"},
    "hdr": {"type": "http", "url": "`+ts.URL+`/hdr/mcp#`+fragSecret+`", "headers": {"Authorization": "Bearer `+hdrSecret+`", "X-Key": "${ADV_HDR}"}},
    "user": {"type": "http", "url": "http://alice:`+userSecret+`@`+hostPort+`/user/mcp"},
    "tenant": {"url": "https://`+hostSecret+`.example.com/mcp"}
  }
}
`, 0o600)
	orig := c.snapshot()
	bin := testenv.Binary(t)
	if code, out, errs := c.run("wrap", "--all", "--shim", bin); code != 0 {
		t.Fatalf("wrap: exit %d\n%s\n%s", code, out, errs)
	}
	var cfg struct {
		MCPServers map[string]struct {
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	wrapped, _ := os.ReadFile(global)
	if err := json.Unmarshal(wrapped, &cfg); err != nil {
		t.Fatal(err)
	}
	// The file keeps ${VAR}: Claude Code expands it when it starts the entry.
	if strings.Contains(string(wrapped), pathSecret) || strings.Contains(string(wrapped), hdrVarSecret) {
		t.Errorf("wrap expanded a ${VAR} into the config:\n%s", wrapped)
	}

	secrets := []string{pathSecret, querySecret, userSecret, fragSecret, hdrSecret, hdrVarSecret, hostSecret}
	check := func(what, out string) {
		t.Helper()
		for _, s := range append(secrets, hostPort, "/user/mcp", "/hdr/mcp") {
			if strings.Contains(out, s) {
				t.Errorf("%s holds %q:\n%s", what, s, out)
			}
		}
	}

	// Start the wrapped entries as Claude Code would: ${VAR} expanded in
	// args and env, the entry's env added to Claude Code's.
	names := []string{"pathkey", "legacy", "hdr", "user"}
	var pids []int
	for _, name := range names {
		e := cfg.MCPServers[name]
		if e.Command != bin {
			t.Fatalf("%s is not wrapped: %s", name, wrapped)
		}
		cmd := exec.Command(e.Command, expandAll(e.Args, c.vars)...)
		cmd.Env = append(os.Environ(), "HOME="+c.home, "CLAUDE_PROJECT_DIR="+c.proj)
		for k, v := range e.Env {
			cmd.Env = append(cmd.Env, k+"="+expandVars(v, c.vars))
		}
		stdin, _ := startInitialized(t, cmd)
		defer testenv.CloseAndWait(cmd, stdin, 10*time.Second)
		pids = append(pids, cmd.Process.Pid)
	}

	// ps: every process's argv.
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	seen := 0
	for _, p := range cmdlines {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // exited meanwhile
		}
		seen++
		argv := strings.ReplaceAll(string(b), "\x00", " ")
		for _, s := range secrets {
			if strings.Contains(argv, s) {
				t.Errorf("%s (what ps shows) holds %q: %s", p, s, argv)
			}
		}
		if strings.Contains(argv, hostPort) {
			t.Errorf("%s (what ps shows) holds the URL's host: %s", p, argv)
		}
	}
	for _, pid := range pids {
		if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid), "cmdline")); err != nil {
			t.Fatalf("shim %d is not running: %v", pid, err)
		}
	}
	if seen < len(pids) {
		t.Fatalf("read %d argv, fewer than the %d shims", seen, len(pids))
	}

	// Records and logs: every file under the state folder but wrap's
	// backups (copies of the config files, 0600 as they are).
	state := os.Getenv("XDG_STATE_HOME")
	nfiles := 0
	filepath.Walk(state, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.IsDir() && fi.Name() == "backups" {
			return filepath.SkipDir
		}
		if err == nil && fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			nfiles++
			check(p, string(b))
		}
		return nil
	})
	if nfiles < len(names) {
		t.Errorf("found %d files under %s, want a record per shim at least", nfiles, state)
	}

	for _, cmd := range [][]string{{"status"}, {"status", "--json"}, {"doctor", "--timeout", "5s"}, {"doctor", "--json", "--timeout", "5s"}, {"logs", "pathkey"}, {"logs", "hdr"}, {"wrap", "--all", "--dry-run"}, {"unwrap", "--all", "--dry-run"}} {
		_, out, errs := c.run(cmd...)
		check(strings.Join(cmd, " "), out+errs)
	}

	if code, out, errs := c.run("unwrap", "--all"); code != 0 {
		t.Fatalf("unwrap: exit %d\n%s\n%s", code, out, errs)
	}
	if !equalMaps(c.snapshot(), orig) {
		t.Fatalf("unwrap did not restore the config byte for byte:\n%v", c.snapshot())
	}
}

// refVar is ${VAR} or ${VAR:-default}, what Claude Code expands in an
// entry's command, args, env, url and headers.
var refVar = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}`)

func expandVars(s string, vars map[string]string) string {
	return refVar.ReplaceAllStringFunc(s, func(m string) string {
		sub := refVar.FindStringSubmatch(m)
		if v, ok := vars[sub[1]]; ok && v != "" {
			return v
		}
		if v := os.Getenv(sub[1]); v != "" {
			return v
		}
		return sub[2]
	})
}

func expandAll(ss []string, vars map[string]string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = expandVars(s, vars)
	}
	return out
}
