//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
	"github.com/mcp-heal/mcp-heal/internal/testenv/fakeshim"
)

// TestStatuslineSetup: /mcp-heal statusline (the launcher sets
// MCP_HEAL_CONTEXT) prints the settings lines; --install adds them to
// ~/.claude/settings.json, says so the second time, and leaves a
// statusLine of the user's own as it is, printing a command that shows
// both (exit 1).
func TestStatuslineSetup(t *testing.T) {
	bin := testenv.Binary(t)
	home := testenv.TempDir(t)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_STATE_HOME=" + filepath.Join(home, "state"), "XDG_DATA_HOME=" + filepath.Join(home, "data")}
	run := func(args ...string) (int, string, string) {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(env, "MCP_HEAL_CONTEXT=claude-code")
		cmd.Stdin = strings.NewReader("")
		return testenv.RunCode(t, cmd)
	}
	settings := filepath.Join(home, ".claude", "settings.json")
	// What /mcp-heal statusline runs: the plugin's launcher, whose
	// "command" sets MCP_HEAL_CONTEXT; stdin is not the payload's pipe.
	launcher := exec.Command(filepath.Join(testenv.ModuleRoot(t), "plugin", "mcp-heal"), "command", "statusline")
	launcher.Env = append(env, "MCP_HEAL_BIN="+bin)
	launcher.Stdin = strings.NewReader("")
	if out, err := launcher.CombinedOutput(); err != nil || !strings.Contains(string(out), `"statusLine": {`) || !strings.HasPrefix(string(out), "Run /mcp-heal statusline --install") {
		t.Fatalf("/mcp-heal statusline through the launcher: %v\n%s", err, out)
	}
	code, out, errs := run("statusline")
	if code != 0 || !strings.Contains(out, `"command": "`+bin+` statusline"`) || !strings.HasPrefix(out, "Run /mcp-heal statusline --install to show") {
		t.Fatalf("statusline from /mcp-heal: exit %d\n%s%s", code, out, errs)
	}
	if _, err := os.Stat(settings); err == nil {
		t.Fatal("printing the lines wrote the settings file")
	}
	code, out, errs = run("statusline", "--install")
	b, _ := os.ReadFile(settings)
	if code != 0 || !strings.Contains(out, "Added the statusLine to "+settings) || gjson.GetBytes(b, "statusLine.command").String() != bin+" statusline" {
		t.Fatalf("--install: exit %d\n%s%s\nfile: %s", code, out, errs, b)
	}
	if code, out, _ = run("statusline", "--install"); code != 0 || !strings.Contains(out, "already runs mcp-heal's status line") {
		t.Errorf("--install again: exit %d\n%s", code, out)
	}
	if code, out, _ = run("statusline"); code != 0 || !strings.Contains(out, "Claude Code's status line shows this session's MCP health: it runs\n  "+bin+" statusline") {
		t.Errorf("statusline once installed: exit %d\n%s", code, out)
	}

	mine := `{"statusLine":{"type":"command","command":"~/ps1.sh"},"model":"opus"}`
	os.WriteFile(settings, []byte(mine), 0o600)
	code, out, _ = run("statusline", "--install")
	if b, _ := os.ReadFile(settings); string(b) != mine {
		t.Fatalf("the user's statusLine was changed: %s", b)
	}
	i := strings.Index(out, "set its \"command\" to this JSON string:\n")
	if code != 1 || i < 0 || !strings.Contains(out, "mcp-heal does not replace") {
		t.Fatalf("--install over the user's own: exit %d\n%s", code, out)
	}
	var combined string
	rest := out[i+len("set its \"command\" to this JSON string:\n"):]
	if err := json.Unmarshal([]byte(strings.TrimSpace(rest[:strings.IndexByte(rest, '\n')])), &combined); err != nil ||
		!strings.Contains(combined, "~/ps1.sh") || !strings.HasSuffix(combined, bin+" statusline") {
		t.Errorf("the combined command: %v %q", err, combined)
	}
	if code, out, _ := run("statusline", "extra"); code != 2 {
		t.Errorf("an argument: exit %d %s", code, out)
	}
}

// TestStatuslineHostileNames: the status line, run by the real binary for
// sessions whose one server has a hostile name (hostileNames), shows it
// only through the one rule, in each form of the line: in a crash loop
// (the name after the command), restarting, restarted.
func TestStatuslineHostileNames(t *testing.T) {
	bin := testenv.Binary(t)
	stateDir := testenv.UseStateDir(t, testenv.TempDir(t))
	now := time.Now()
	forms := []func(r *state.Record){
		func(r *state.Record) { r.State = state.Failed },
		func(r *state.Record) { r.State = state.Backoff },
		func(r *state.Record) { r.Restarts, r.ChildStarted = 1, now.Add(-time.Minute) },
	}
	for i, h := range hostileNames {
		for j, f := range forms {
			pid, _ := fakeshim.Start(t)
			r := state.Record{Server: h, Session: fmt.Sprintf("h%d-%d", i, j), ShimPID: pid, Mode: state.ModeStdio, State: state.Running, Started: now}
			f(&r)
			fakeshim.WriteRecord(t, r)
			cmd := exec.Command(bin, "statusline")
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "XDG_STATE_HOME=" + stateDir}
			cmd.Stdin = strings.NewReader(`{"session_id":"` + r.Session + `"}`)
			out, err := cmd.Output()
			if err != nil || !strings.HasPrefix(string(out), "\x1b[") || strings.Count(string(out), "\n") != 1 {
				t.Errorf("name %d, form %d: %v %q", i+1, j, err, out)
			}
			line := strings.TrimSuffix(string(out), "\n")
			// The line's own colour, then what checkNames reads.
			line = line[strings.IndexByte(line, 'm')+1 : strings.LastIndex(line, "\x1b[0m")]
			checkNames(t, "statusline", line)
		}
	}
}
