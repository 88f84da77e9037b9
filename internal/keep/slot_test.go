//go:build unix

package keep_test

import (
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestOtherSlotsCoexist: a kept server is replaced only by a changed entry
// of its own slot. A session of another project starting its own server
// of the same name, or a session whose --keep-env values differ, gets a
// server of its own and leaves the detached one alone: the first project
// (the first PROFILE) re-attaches to its warm server afterwards.
func TestOtherSlotsCoexist(t *testing.T) {
	t.Parallel()
	projA, projB := t.TempDir(), t.TempDir()
	work, personal := t.TempDir(), t.TempDir()
	for name, pair := range map[string][2]session{
		// Two accounts (issue 24 item 4): the second session must not
		// attach to the server started with the first one's environment.
		"another config dir": {
			{dir: projA, env: []string{"CLAUDE_CONFIG_DIR=" + work, "SECRET=work-token"}},
			{dir: projA, env: []string{"CLAUDE_CONFIG_DIR=" + personal, "SECRET=personal-token"}},
		},
		"another project": {
			{dir: projA, env: []string{"CLAUDE_PROJECT_DIR=" + projA}},
			{dir: projB, env: []string{"CLAUDE_PROJECT_DIR=" + projB}},
		},
		"other --keep-env values": {
			{dir: projA, env: []string{"PROFILE=work"}, flags: []string{"--keep-env", "PROFILE"}},
			{dir: projA, env: []string{"PROFILE=home"}, flags: []string{"--keep-env", "PROFILE"}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			first, other := pair[0], pair[1]
			a := e.shimAt(t, first, "1m", e.bin, "example-server")
			a.handshake()
			a.tool("counter_increment", `{}`)
			kept := int(a.info().Get("pid").Int())
			a.kill()
			e.keptRecord(t)

			// The other session's handshake is answered after its
			// Dial, which is where a replaced server is stopped.
			b := e.shimAt(t, other, "1m", e.bin, "example-server")
			b.handshake()
			theirs := int(b.info().Get("pid").Int())
			if theirs == kept {
				t.Fatalf("the %s session attached to the first one's kept server", name)
			}
			b.kill()
			if !testenv.Alive(kept) {
				t.Fatalf("the %s session stopped the first one's kept server", name)
			}

			c := e.shimAt(t, first, "1m", e.bin, "example-server")
			c.reattached(kept, "2", "the first session's next shim")
			c.kill()
			// Both detached (the records are written asynchronously),
			// then one stop ends both.
			for _, pid := range []int{kept, theirs} {
				if e.record(10*time.Second, func(m map[string]any) bool {
					return m["attached"] != true && m["child_pid"] == float64(pid)
				}) == nil {
					t.Fatalf("no record of the detached kept server %d", pid)
				}
			}
			e.stop(t)
			testenv.WaitGone(t, "after mcp-heal stop", 10*time.Second, kept, theirs)
		})
	}
}

// TestOneFolderManySpellings (issue 24 item 4): one folder spelt three
// ways (a symlink to it, its real path, a trailing slash; Claude Code
// passes the folder as it was opened, as PWD) gets one kept server: each
// session re-attaches to the server the first one started.
func TestOneFolderManySpellings(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	testenv.Symlink(t, real, link)
	var kept int
	for i, spelling := range []string{link, real, real + "/"} {
		c := e.shimAt(t, session{dir: spelling, env: []string{"PWD=" + spelling}}, "1m", e.bin, "example-server")
		c.handshake()
		pid := int(c.info().Get("pid").Int())
		if i == 0 {
			kept = pid
		} else if pid != kept {
			t.Fatalf("the folder spelt %q got server %d, not the kept %d of %q", spelling, pid, kept, link)
		}
		if got := c.tool("counter_increment", `{}`); got != strconv.Itoa(i+1) {
			t.Errorf("counter in the session of %q: %q, want %d (state kept)", spelling, got, i+1)
		}
		c.kill()
		e.keptRecord(t)
	}
	e.stop(t)
	testenv.WaitGone(t, "after mcp-heal stop", 10*time.Second, kept)
}
