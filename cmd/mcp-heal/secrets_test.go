//go:build unix

package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-heal/mcp-heal/internal/procinfo"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// The secrets of TestSecretsNeverPrinted's config; none may appear in any
// output, nor in the wrapped entry's args (argv is public: ps).
const (
	urlSecret    = "URLSECRETq1w2e3r4"
	headerSecret = "HEADERSECRETz9x8"
	envSecret    = "ENVSECRETm5n6b7"
)

// TestSecretsNeverPrinted: wrap and unwrap dry runs, status, doctor and heal
// print no env value, header value or URL token, and wrap moves a URL's
// token out of the shim's argv into its env.
func TestSecretsNeverPrinted(t *testing.T) {
	c := newCfgEnv(t)
	global := filepath.Join(c.dots, "claude.json")
	c.write(global, `{
  "mcpServers": {
    "keyed": {
      "type": "http",
      "url": "http://127.0.0.1:1/mcp?token=`+urlSecret+`",
      "headers": {
        "X-Api-Key": "`+headerSecret+`"
      }
    },
    "local": {
      "command": "mcp-heal-no-such-server",
      "args": [],
      "env": {
        "SERVICE_CREDENTIALS_FILE_CONTENTS": "`+envSecret+`"
      }
    }
  }
}
`, 0o600)
	orig := c.snapshot()
	check := func(what, out string) {
		t.Helper()
		for _, s := range []string{urlSecret, headerSecret, envSecret} {
			if strings.Contains(out, s) {
				t.Errorf("%s shows %s:\n%s", what, s, out)
			}
		}
	}

	_, out, errs := c.run("wrap", "--all", "--dry-run", "--shim", "/opt/mh/mcp-heal")
	if !strings.Contains(out, "+      \"command\": \"/opt/mh/mcp-heal\",") {
		t.Fatalf("wrap --dry-run shows no diff:\n%s\n%s", out, errs)
	}
	check("wrap --dry-run", out+errs)

	code, out, errs := c.run("wrap", "--all", "--shim", "/opt/mh/mcp-heal")
	if code != 0 {
		t.Fatalf("wrap: exit %d\n%s\n%s", code, out, errs)
	}
	check("wrap", out+errs)
	wrapped, _ := os.ReadFile(global)
	args := string(wrapped)[strings.Index(string(wrapped), `"args"`):]
	args = args[:strings.Index(args, "]")]
	if strings.Contains(args, urlSecret) || !strings.Contains(args, `"--url-env"`) {
		t.Errorf("the shim's args hold the URL token or lack --url-env:\n%s", wrapped)
	}

	for _, cmd := range [][]string{{"status"}, {"doctor", "--timeout", "3s"}, {"doctor", "--json", "--timeout", "3s"}, {"heal", "--timeout", "3s"}, {"unwrap", "--all", "--dry-run"}} {
		_, out, errs := c.run(cmd...)
		check(strings.Join(cmd, " "), out+errs)
		if cmd[0] == "doctor" && (!strings.Contains(out, "[URL hidden]") || strings.Contains(out, "127.0.0.1:1")) {
			t.Errorf("%s shows the URL, or does not say it is hidden:\n%s", strings.Join(cmd, " "), out)
		}
	}

	if code, out, errs := c.run("unwrap", "--all"); code != 0 {
		t.Fatalf("unwrap: exit %d\n%s\n%s", code, out, errs)
	}
	if !equalMaps(c.snapshot(), orig) {
		t.Fatalf("unwrap did not restore the config byte for byte:\n%v", c.snapshot())
	}
}

// TestShimURLFromEnv: a real shim started as wrap writes it (--url-env)
// reaches the server with the token, and its argv (what ps shows) and its
// state record hold no token.
func TestShimURLFromEnv(t *testing.T) {
	var got atomic.Value
	srv := mcp.NewServer(&mcp.Implementation{Name: "keyed", Version: "1.0.0"}, nil)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.URL.Query().Get("token"))
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()

	stateDir := t.TempDir()
	cmd := exec.Command(testenv.Binary(t), "shim", "--name", "keyed", "--url-env", "MCP_HEAL_URL")
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+stateDir, "MCP_HEAL_URL="+ts.URL+"/mcp?token="+urlSecret)
	stdin, _ := startInitialized(t, cmd)
	defer testenv.CloseAndWait(cmd, stdin, 10*time.Second)
	if got.Load() != urlSecret {
		t.Fatalf("the server got token %q, want %q", got.Load(), urlSecret)
	}
	p, err := procinfo.Get(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if a := strings.Join(p.Args, " "); strings.Contains(a, urlSecret) || !strings.Contains(a, "--url-env MCP_HEAL_URL") {
		t.Errorf("the shim's argv: %s", a)
	}
	var recs []string
	for deadline := time.Now().Add(10 * time.Second); len(recs) == 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		recs, _ = filepath.Glob(filepath.Join(stateDir, "mcp-heal", "shims", "*.json"))
	}
	if len(recs) != 1 {
		t.Fatalf("got records %v, want one", recs)
	}
	if b, _ := os.ReadFile(recs[0]); strings.Contains(string(b), urlSecret) || !strings.Contains(string(b), `"target":"[URL hidden]"`) || !strings.Contains(string(b), `"shim_start":"`) {
		t.Errorf("the state record: %s", b)
	}
}
