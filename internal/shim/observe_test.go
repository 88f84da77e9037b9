//go:build unix

package shim

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// Rule 8: the state record, the lifecycle log and the traffic log.
func TestObservability(t *testing.T) {
	life := lifecycleLog(t)
	traffic, err := state.OpenTrafficLog("fake")
	if err != nil {
		t.Fatal(err)
	}
	defer traffic.Close()
	h := newHarness(t, hopt{opts: func(o *Options) {
		o.Record, o.Lifecycle, o.Traffic = true, life, traffic
		o.Session, o.ClaudePID = "sess-1", os.Getppid()
	}})
	h.handshake()
	pid := h.waitUp(0)
	r := waitOwnRecord(t, "the state record", func(r *state.Record) bool { return r.State == state.Running && r.Era != "" })
	if r.Server != "fake" || r.Session != "sess-1" || r.ChildPID != pid || r.Mode != state.ModeStdio ||
		r.Era != EraHandshake || r.ProtocolVersion != "2025-11-25" || !strings.Contains(r.Target, os.Args[0]) || r.ShimPID != os.Getpid() {
		t.Errorf("record: %+v", r)
	}
	if st, err := os.Stat(state.ShimsDir() + "/" + itoa(os.Getpid()) + ".json"); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("record file mode: %v %v", st.Mode(), err)
	}

	h.tool("echo", `{"text":"x","api_key":"sk-abcdefghijklmnop"}`)
	// A tool result whose text is JSON: the secret is in escaped JSON.
	h.tool("echo", `{"text":"{\"client_secret\":\"plainvalue4711x\"}"}`)
	h.killChild()
	pid2 := h.waitUp(pid)
	r = waitOwnRecord(t, "the state record", func(r *state.Record) bool { return r.Restarts == 1 && r.State == state.Running && r.ChildPID == pid2 })
	if r.LastExit == nil || r.LastExit.Signal != "killed" || r.LastExit.UptimeMS <= 0 {
		t.Errorf("last exit: %+v", r.LastExit)
	}

	h.in.Close()
	<-h.runDone
	h.runDone <- nil
	if _, err := state.Read(os.Getpid()); !os.IsNotExist(err) {
		t.Errorf("record not removed on clean exit: %v", err)
	}

	b, _ := os.ReadFile(state.LogPath("fake"))
	var events []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("lifecycle line %q: %v", l, err)
		}
		events = append(events, m)
	}
	count := map[string]int{}
	for _, e := range events {
		count[e["event"].(string)]++
		if e["event"] == "exit" && e["signal"] == "killed" {
			if e["uptime_ms"].(float64) <= 0 || int(e["pid"].(float64)) != pid {
				t.Errorf("exit event: %v", e)
			}
		}
	}
	if count["shim-start"] != 1 || count["spawn"] != 2 || count["exit"] != 2 || count["shim-exit"] != 1 || count["client-eof"] != 1 {
		t.Errorf("lifecycle events: %v", count)
	}

	tb, _ := os.ReadFile(state.TrafficLogPath("fake"))
	if strings.Contains(string(tb), "sk-abcdefghijklmnop") || strings.Contains(string(tb), "plainvalue4711x") || !strings.Contains(string(tb), "[REDACTED]") {
		t.Errorf("traffic log not redacted:\n%s", tb)
	}
	if !strings.Contains(string(tb), `"dir":"c2s"`) || !strings.Contains(string(tb), `"dir":"s2c"`) {
		t.Errorf("traffic log lacks a direction:\n%.500s", tb)
	}
}

func itoa(n int) string { return string(itoaID(int64(n))) }

// lifecycleLog points the state directory at a new one of the test's and
// opens the lifecycle log of the server "fake" there, closed when t ends.
func lifecycleLog(t *testing.T) *state.LogFile {
	t.Helper()
	testenv.UseStateDir(t, t.TempDir())
	life, err := state.OpenLog("fake")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { life.Close() })
	return life
}
