//go:build unix

package keep_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

const (
	toolsChanged     = "notifications/tools/list_changed"
	promptsChanged   = "notifications/prompts/list_changed"
	resourcesChanged = "notifications/resources/list_changed"
)

// TestListChangedWhileDetached: the kept server's catalog changes while no
// shim is attached (the example server re-reads its --catalog-file; the
// change comes from outside the session, not from a client), or while the
// next shim is attached but its client has not initialized yet. The
// client that re-attaches hears notifications/*/list_changed for exactly
// the lists that changed, once, after its initialize is answered and it
// said notifications/initialized, and its lists show the change. With
// nothing changed, it hears none.
func TestListChangedWhileDetached(t *testing.T) {
	t.Parallel()
	const changes = "tool added_while_detached\nprompt prompt_while_detached\n"
	for _, tc := range []struct {
		name, catalog string
		// probe: the client first sends server/discover to a
		// handshake-only server, -32601, then initialize (Claude Code
		// 2.1.328).
		probe bool
		// attaching: the change comes once the new shim is attached,
		// before its client's initialize.
		attaching bool
		want      []string
	}{
		{"tools and prompts changed", changes, false, false, []string{promptsChanged, toolsChanged}},
		{"changed, client probes server/discover first", changes, true, false, []string{promptsChanged, toolsChanged}},
		{"changed while the client attaches", changes, false, true, []string{promptsChanged, toolsChanged}},
		{"nothing changed", "", false, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			catalog := filepath.Join(t.TempDir(), "catalog")
			if err := os.WriteFile(catalog, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			args := []string{"--catalog-file", catalog}
			if tc.probe {
				args = append(args, "--era", "handshake")
			}
			a := e.shim(t, "1m", args...)
			a.handshake()
			if names := listNames(a, "tools/list", "tools"); slices.Contains(names, "added_while_detached") {
				t.Fatalf("tools/list before the change: %v", names)
			}
			pid := a.info().Get("pid").Int()
			// Claude Code ends its stdio servers with SIGTERM.
			a.cmd.Process.Signal(syscall.SIGTERM)
			a.cmd.Wait()
			e.keptRecord(t)

			change := func() {
				if tc.catalog != "" {
					if err := os.WriteFile(catalog, []byte(tc.catalog), 0o600); err != nil {
						t.Fatal(err)
					}
				}
				// The server re-reads the file every 50 ms: give it 10
				// rounds to announce the change.
				time.Sleep(500 * time.Millisecond)
			}
			if !tc.attaching {
				change()
			}
			b := e.shim(t, "1m", args...)
			if tc.attaching {
				if got := e.attachedPID(t, b.cmd.Process.Pid); got != int(pid) {
					t.Fatalf("the new shim runs server pid %d, want the kept %d", got, pid)
				}
				change()
			}
			var notes []string
			if tc.probe {
				r, n := b.call("server/discover", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`)
				if r.Get("error.code").Int() != -32601 {
					t.Fatalf("server/discover to a handshake-only server: %s", r.Raw)
				}
				notes = n
			}
			r, n := b.call("initialize", initParams)
			notes = append(notes, n...)
			if !r.Get("result").Exists() {
				t.Fatalf("initialize: %s", r.Raw)
			}
			// Nothing before notifications/initialized: until then the
			// client has not entered the operation phase (a TypeScript SDK
			// client registers its handlers after connect() returns).
			notes = append(notes, b.idle(300*time.Millisecond)...)
			if got := changedIn(notes); len(got) > 0 {
				t.Errorf("list_changed before notifications/initialized: %v", got)
			}
			b.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			tools, notes := b.call("tools/list", `{}`)
			notes = append(notes, b.idle(300*time.Millisecond)...)
			got := changedIn(notes)
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("after re-attach the client heard %v, want %v", got, tc.want)
			}
			hasTool := strings.Contains(tools.Get("result.tools.#.name").Raw, `"added_while_detached"`)
			if hasTool != (tc.catalog != "") {
				t.Errorf("tools/list after re-attach: %s", tools.Get("result.tools.#.name").Raw)
			}
			if got := listNames(b, "prompts/list", "prompts"); slices.Contains(got, "prompt_while_detached") != (tc.catalog != "") {
				t.Errorf("prompts/list after re-attach: %v", got)
			}
			if got := b.info().Get("pid").Int(); got != pid {
				t.Fatalf("re-attached to pid %d, want the kept %d", got, pid)
			}
			e.stop(t)
		})
	}
}

// idle returns what the shim writes within d.
func (c *client) idle(d time.Duration) []string {
	var lines []string
	end := time.After(d)
	for {
		select {
		case l, ok := <-c.lines:
			if !ok {
				return lines
			}
			lines = append(lines, l)
		case <-end:
			return lines
		}
	}
}

// changedIn lists the list_changed notifications among lines.
func changedIn(lines []string) []string {
	var got []string
	for _, l := range lines {
		if m := gjson.Get(l, "method").String(); strings.HasSuffix(m, "/list_changed") {
			got = append(got, m)
		}
	}
	return got
}

// listNames calls method and returns the names in result.<key>.
func listNames(c *client, method, key string) []string {
	c.t.Helper()
	r, _ := c.call(method, `{}`)
	var names []string
	for _, n := range r.Get("result." + key + ".#.name").Array() {
		names = append(names, n.String())
	}
	return names
}

// TestAttachWhileServerAnnounces: a kept server that announces list
// changes without pause while nobody is attached (here `yes` repeating
// one) still lets the next shim attach, and can still be stopped. The
// guardian's reader of the detached server's output must never wait for
// what attach holds while attach waits for that reader to stop.
func TestAttachWhileServerAnnounces(t *testing.T) {
	t.Parallel()
	yes, err := exec.LookPath("yes")
	if err != nil {
		t.Fatalf("this test needs yes(1): %v", err)
	}
	e := newEnv(t)
	server := []string{yes, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`}
	a := e.shimOf(t, "1m", server...)
	if l := <-a.lines; !strings.Contains(l, toolsChanged) {
		t.Fatalf("first line from the kept server: %s", l)
	}
	a.kill()
	pid := int(e.keptRecord(t)["child_pid"].(float64))
	for i := 0; i < 3; i++ {
		b := e.shimOf(t, "1m", server...)
		if got := e.attachedPID(t, b.cmd.Process.Pid); got != pid {
			t.Fatalf("attach %d: the shim runs server pid %d, want the kept %d", i+1, got, pid)
		}
		b.kill()
	}
	done := make(chan struct{})
	go func() { e.stop(t); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("mcp-heal stop did not return in 15 s")
	}
	testenv.WaitGone(t, "after stop", 10*time.Second, pid)
}

// attachedPID waits for the record of the shim shimPID to say it is
// attached to a kept server, and returns the server's pid; 0 when it did
// not within 8 s (an attach gives up after 10 s).
func (e *env) attachedPID(t *testing.T, shimPID int) int {
	t.Helper()
	m := e.record(8*time.Second, func(m map[string]any) bool {
		return m["shim_pid"] == float64(shimPID) && m["kept"] == true && m["attached"] == true && m["child_pid"] != nil
	})
	if m == nil {
		return 0
	}
	return int(m["child_pid"].(float64))
}
