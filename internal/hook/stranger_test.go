//go:build unix

package hook_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
	"github.com/mcp-heal/mcp-heal/internal/testenv/fakeshim"
)

// staleRecord writes, as raw JSON, the record a SIGKILLed shim left behind
// whose pid now names pid, an unrelated process: either with the dead
// shim's identity (start time and executable) or, as versions before the
// identity was recorded wrote it, without one.
func staleRecord(t *testing.T, dir string, pid int, session string, withIdentity bool) string {
	t.Helper()
	r := map[string]any{"schema": 1, "server": "tiny", "session": session, "shim_pid": pid, "mode": "stdio", "state": "running",
		"started": time.Now().Add(-time.Hour), "updated": time.Now()}
	if withIdentity {
		r["shim_start"], r["shim_exe"] = "12345", testenv.Binary(t)
	}
	b, _ := json.Marshal(r)
	shims := filepath.Join(dir, "mcp-heal", "shims")
	if err := os.MkdirAll(shims, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(shims, strconv.Itoa(pid)+".json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestNoSignalToStranger: a record whose shim died without removing it
// (SIGKILL, OOM) names a pid the kernel has given to another process. The
// idle-timeout hook, which SIGHUPs the shim of a wrapped server, must leave
// that process alone, and prune the record when it knows it is stale.
func TestNoSignalToStranger(t *testing.T) {
	p := sharedPayload(t, "PostToolUseFailure.idle-timeout.json")
	for _, tt := range []struct {
		name         string
		withIdentity bool
		pruned       bool
	}{
		{"dead shim's identity", true, true},
		{"no identity recorded", false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			w.useState(t)
			stranger := testenv.StartProcess(t, "sleep", "1000")
			path := staleRecord(t, w.state, stranger.Process.Pid, p["session_id"].(string), tt.withIdentity)

			w.hook(t, "PostToolUseFailure", marshal(p))

			// start reaps the process: once killed, its pid is gone.
			time.Sleep(300 * time.Millisecond)
			if err := syscall.Kill(stranger.Process.Pid, 0); err != nil {
				t.Fatalf("the unrelated process %d was signalled: %v", stranger.Process.Pid, err)
			}
			if _, err := os.Stat(path); tt.pruned != os.IsNotExist(err) {
				t.Fatalf("record pruned: got %v, want %v", os.IsNotExist(err), tt.pruned)
			}
			if tt.pruned {
				if recs, _ := state.Find("tiny", "", 0); len(recs) != 0 {
					t.Fatalf("got records %+v, want none", recs)
				}
			}
		})
	}
}

// failingRemote runs the PostToolUseFailure hook, in a world of its own,
// for Claude Code giving up on the user's remote server name, at path on
// a server that answers every request with HTTP 500 and body(r). It
// returns the world, the hook's reply, and how many requests reached the
// server.
func failingRemote(t *testing.T, name, path string, body func(r *http.Request) string) (w *world, out []byte, asked int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		n.Add(1)
		rw.WriteHeader(http.StatusInternalServerError)
		io.WriteString(rw, body(r))
	}))
	defer srv.Close()
	w = newWorld(t)
	w.userConfig(t, `{"`+name+`":{"type":"http","url":"`+srv.URL+path+`"}}`)
	p := sharedPayload(t, "PostToolUseFailure.stdio-not-connected.json")
	p["tool_name"], p["error"] = "mcp__"+name+"__echo", `MCP server "`+name+`" is not connected`
	p["mcp_server"] = map[string]any{"name": name, "source": "user"}
	out = w.hook(t, "PostToolUseFailure", marshal(p))
	return w, out, n.Load()
}

// TestHookOutputRedacted: Claude Code gave up on a remote server whose URL
// carries its API key, and whose error body would echo the key. The hook
// does not contact it (a hook starts nothing from a config entry: no
// probe), and neither the model's context (the hook's reply) nor the
// incident log shows the key.
func TestHookOutputRedacted(t *testing.T) {
	const secret = "HOOKSECRETk3j4h5"
	w, out, asked := failingRemote(t, "keyed", "/mcp?token="+secret, func(r *http.Request) string {
		return `{"error":"unknown key","api_key":"` + r.URL.Query().Get("token") + `"}`
	})
	r := decode(t, out)
	if !strings.Contains(r.HookSpecificOutput.AdditionalContext, "/mcp reconnect keyed") || asked != 0 {
		t.Fatalf("got %s after %d requests to the server, want advice without contacting it", out, asked)
	}
	if strings.Contains(string(out), secret) {
		t.Errorf("the hook's reply shows the key:\n%s", out)
	}
	for _, in := range w.incidents(t) {
		if b, _ := json.Marshal(in); strings.Contains(string(b), secret) {
			t.Errorf("the incident log shows the key: %s", b)
		}
	}
}

// TestPreToolUseIgnoresReusedPid: the record of a shim that died while
// failed names a pid now held by an unrelated process. PreToolUse must not
// deny calls to the server on the strength of it.
func TestPreToolUseIgnoresReusedPid(t *testing.T) {
	w := newWorld(t)
	stranger := testenv.StartProcess(t, "sleep", "1000")
	path := staleRecord(t, w.state, stranger.Process.Pid, preSession, true)
	b, _ := os.ReadFile(path)
	var r map[string]any
	json.Unmarshal(b, &r)
	r["server"], r["state"] = "everything", "failed"
	b, _ = json.Marshal(r)
	os.WriteFile(path, b, 0o600)
	// The launcher's fast path would skip the binary; the marker sends the
	// call to it, as a failed shim's record does.
	os.MkdirAll(filepath.Join(w.state, "mcp-heal", "attention"), 0o700)
	os.WriteFile(filepath.Join(w.state, "mcp-heal", "attention", "shim-"+strconv.Itoa(stranger.Process.Pid)), nil, 0o600)
	if out := w.hook(t, "PreToolUse", marshal(sharedPayload(t, "PreToolUse.mcp.json"))); len(out) != 0 {
		t.Fatalf("got %s, want no output: the record's shim is gone", out)
	}
}

// TestHookOutputQuoted: a remote server whose answer carries terminal
// escapes (OSC 52 clipboard write, OSC 0 window title, clear screen) is not
// contacted by the failure hook (no probe), and nothing of its answer
// reaches the model or the user's terminal.
func TestHookOutputQuoted(t *testing.T) {
	_, out, asked := failingRemote(t, "esc", "/mcp", func(*http.Request) string {
		return "down \x1b]52;c;cm0gLXJmIH4=\x07 \x1b]0;pwned\x07 \x1b[2J"
	})
	r := decode(t, out)
	got := r.HookSpecificOutput.AdditionalContext + r.SystemMessage
	if strings.Contains(got, "HTTP 500") || asked != 0 {
		t.Fatalf("got %s after %d requests to the server, want advice without contacting it", out, asked)
	}
	if strings.ContainsAny(got, "\x1b\x07") {
		t.Errorf("the hook's reply carries raw terminal escapes: %q", got)
	}
}

// TestShimKilledReported (issue 32, item 4): the shim of "tiny" is killed
// with SIGKILL during a call (its record stays behind). Claude Code gets
// "Connection closed" and, in an interactive session, never starts the
// server again; mcp-heal said nothing of the shim. The PostToolUseFailure
// hook now tells the user, action first, and the model why and what to
// ask for.
func TestShimKilledReported(t *testing.T) {
	p := sharedPayload(t, "PostToolUseFailure.stdio-server-died-mid-call.json")
	w := newWorld(t)
	w.useState(t)
	shim := testenv.StartProcess(t, "sleep", "60")
	fakeshim.WriteRecord(t, state.Record{Server: "tiny", Session: p["session_id"].(string), ClaudePID: os.Getpid(), ShimPID: shim.Process.Pid, Mode: state.ModeStdio, State: state.Running, ChildPID: 1, Started: time.Now()})
	shim.Kill()
	r := decode(t, w.hook(t, "PostToolUseFailure", marshal(p)))
	if !strings.HasPrefix(r.SystemMessage, "mcp-heal: run /mcp reconnect tiny: its shim exited at ") || !strings.Contains(r.SystemMessage, "(killed or crashed)") {
		t.Errorf("the user's line: %q", r.SystemMessage)
	}
	if ctx := r.HookSpecificOutput.AdditionalContext; !strings.HasPrefix(ctx, "mcp-heal: ask the user to run `/mcp reconnect tiny`: MCP server \"tiny\" was lost: its shim exited at ") || !strings.Contains(ctx, "may or may not have taken effect") {
		t.Errorf("the model's context: %q", ctx)
	}
}
