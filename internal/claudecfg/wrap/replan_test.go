package wrap

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/mcp-heal/mcp-heal/internal/cfgfile"
	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
	"github.com/mcp-heal/mcp-heal/internal/claudecfg/cfgtest"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// replanHome is a HOME whose ~/.claude.json has user servers a, b and c
// and a key "n" that the other program in these tests changes.
func replanHome(t *testing.T) (claudecfg.Options, string) {
	t.Helper()
	cfgtest.StateHome(t)
	home, proj := testenv.TempDir(t), testenv.TempDir(t)
	path := filepath.Join(home, ".claude.json")
	cfg := `{
  "n": 0,
  "mcpServers": {
    "a": {"type": "stdio", "command": "/bin/a", "args": []},
    "b": {"type": "stdio", "command": "/bin/b", "args": []},
    "c": {"type": "stdio", "command": "/bin/c", "args": ["v1"]}
  }
}
`
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return claudecfg.Options{Home: home, ProjectDir: proj}, path
}

// otherWrite rewrites path the way Claude Code does (read, change, write a
// temporary file, rename it over), applying edit to the contents.
func otherWrite(t *testing.T, path string, edit func([]byte) []byte) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data = edit(data)
	tmp := path + ".other-tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	return data
}

func set(t *testing.T, key string, v any) func([]byte) []byte {
	return func(b []byte) []byte {
		out, err := sjson.SetBytes(b, key, v)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
}

func rowOf(p *Plan, name string) Row {
	for _, r := range p.Rows {
		if r.Name == name {
			return r
		}
	}
	return Row{}
}

// TestPlanCommitReplans: another program writes ~/.claude.json between the
// plan and its commit (before Commit reads it, or between Commit's check
// and its swap, through the exchange seam): it changes its own key, removes
// server b, changes c's args and adds d. Commit plans again and writes
// once: the other program's changes are all kept, a and c (its new
// version) are wrapped, b is not brought back, d is not wrapped (the plan
// did not name it), and the rows say what happened.
func TestPlanCommitReplans(t *testing.T) {
	for _, when := range []string{"before the commit", "during the swap"} {
		t.Run(when, func(t *testing.T) {
			o, path := replanHome(t)
			plan, err := NewPlan(o, Request{Scope: "all", Shim: testShim})
			if err != nil {
				t.Fatal(err)
			}
			var theirs []byte
			other := func() {
				theirs = otherWrite(t, path, func(b []byte) []byte {
					b = set(t, "n", 1)(b)
					b, _ = sjson.DeleteBytes(b, "mcpServers.b")
					b = set(t, "mcpServers.c.args", []string{"v2"})(b)
					return set(t, "mcpServers.d", map[string]any{"command": "/bin/d", "args": []string{}})(b)
				})
			}
			exchanges := 0
			if when == "before the commit" {
				other()
			} else {
				cfgfile.Exchange = func(a, b string) error {
					if exchanges++; exchanges == 1 {
						other()
					}
					return swapFiles(a, b)
				}
				defer func() { cfgfile.Exchange = swapFiles }()
			}
			backups, err := plan.Commit()
			if err != nil {
				t.Fatalf("Commit: got %v, want the edit re-applied to the other program's version", err)
			}
			got, _ := os.ReadFile(path)
			if len(backups) != 1 {
				t.Fatalf("got %d backups, want 1 (one file written once)", len(backups))
			}
			if b, _ := os.ReadFile(backups[0].Backup); string(b) != string(theirs) {
				t.Errorf("backup holds\n%s\nwant the other program's version\n%s", b, theirs)
			}
			if got := cfgtest.ListDir(t, cfgfile.BackupDir()); len(got) != 1 {
				t.Errorf("backups kept: %v, want only the one of the version replaced", got)
			}
			if n := gjson.GetBytes(got, "n").Int(); n != 1 {
				t.Errorf("n = %d, want the other program's 1", n)
			}
			for name, want := range map[string]bool{"a": true, "c": true, "d": false} {
				if cmd := gjson.GetBytes(got, "mcpServers."+name+".command").String(); (cmd == testShim) != want {
					t.Errorf("%s runs %q, want wrapped=%v", name, cmd, want)
				}
			}
			if gjson.GetBytes(got, "mcpServers.b").Exists() {
				t.Errorf("b, removed by the other program, is back:\n%s", got)
			}
			if a := gjson.GetBytes(got, "mcpServers.c.mcpHeal.original.args").Raw; a != `["v2"]` {
				t.Errorf("c wraps args %s, want the other program's [\"v2\"]", a)
			}
			if r := rowOf(plan, "a"); r.Action != ActWrapped || r.Detail != "" {
				t.Errorf("row a: %+v, want wrapped with no note", r)
			}
			if r := rowOf(plan, "b"); r.Action != ActSkipped || !strings.Contains(r.Detail, "removed it") {
				t.Errorf("row b: %+v, want skipped, removed by another program", r)
			}
			if r := rowOf(plan, "c"); r.Action != ActWrapped || !strings.Contains(r.Detail, "changed it") {
				t.Errorf("row c: %+v, want wrapped, changed by another program", r)
			}
			if r := rowOf(plan, "d"); r.Name != "" {
				t.Errorf("row d: %+v, want none (the plan did not touch d)", r)
			}
			if ents, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*mcp-heal-*")); len(ents) != 0 {
				t.Errorf("temporary files left: %v", ents)
			}
		})
	}
}

// TestPlanCommitGivesUp: another program writes the file during every
// swap Commit tries. After maxUpdates tries Commit gives up with
// ErrChanged: nothing of the plan is written, the file holds the other
// program's last version, no temporary file or backup is left.
func TestPlanCommitGivesUp(t *testing.T) {
	o, path := replanHome(t)
	plan, err := NewPlan(o, Request{Names: []string{"a"}, Scope: "all", Shim: testShim})
	if err != nil {
		t.Fatal(err)
	}
	tries, n := map[string]bool{}, 0
	var last []byte
	cfgfile.Exchange = func(a, b string) error {
		if !tries[a] { // a swap (a new temporary file), not a swap back
			tries[a] = true
			n++
			last = otherWrite(t, path, set(t, "n", n))
		}
		return swapFiles(a, b)
	}
	defer func() { cfgfile.Exchange = swapFiles }()
	backups, err := plan.Commit()
	if !errors.Is(err, cfgfile.ErrChanged) || !strings.Contains(err.Error(), strconv.Itoa(cfgfile.MaxUpdates)+" tries") {
		t.Fatalf("got %v, want ErrChanged after %d tries", err, cfgfile.MaxUpdates)
	}
	if len(tries) != cfgfile.MaxUpdates || len(backups) != 0 {
		t.Errorf("got %d tries and backups %v, want %d tries and none", len(tries), backups, cfgfile.MaxUpdates)
	}
	if ents, _ := os.ReadDir(cfgfile.BackupDir()); len(ents) != 0 {
		t.Errorf("%d backups kept, want none (nothing was replaced)", len(ents))
	}
	if got, _ := os.ReadFile(path); string(got) != string(last) {
		t.Errorf("file holds\n%s\nwant the other program's last version\n%s", got, last)
	}
	if ents, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*mcp-heal-*")); len(ents) != 0 {
		t.Errorf("temporary files left: %v", ents)
	}
}

// TestWriteNewRefusesExisting: a file the plan would create, created
// meanwhile by another program, is a conflict (Commit plans again), and
// the other program's file stays.
func TestWriteNewRefusesExisting(t *testing.T) {
	path := filepath.Join(testenv.TempDir(t), ".claude.json")
	os.WriteFile(path, []byte(`{"theirs":true}`), 0o600)
	if err := writeNew(path, []byte(`{}`)); !errors.Is(err, cfgfile.ErrChanged) {
		t.Fatalf("got %v, want ErrChanged", err)
	}
	if got, _ := os.ReadFile(path); string(got) != `{"theirs":true}` {
		t.Fatalf("file holds %s", got)
	}
	if got := cfgtest.ListDir(t, filepath.Dir(path)); len(got) != 1 {
		t.Fatalf("left behind: %v", got)
	}
}

// TestPlanCommitReplansSecondFile: the plan changes ~/.claude.json and
// .mcp.json (--project-servers rewrite); another program writes .mcp.json
// after ~/.claude.json is written. Commit plans again for .mcp.json's
// server only: ~/.claude.json is not written twice, its rows still say
// "wrapped", and .mcp.json keeps the other program's key.
func TestPlanCommitReplansSecondFile(t *testing.T) {
	o, path := replanHome(t)
	mcp := filepath.Join(o.ProjectDir, ".mcp.json")
	os.WriteFile(mcp, []byte(`{"mcpServers": {"p": {"command": "/bin/p", "args": []}}}`), 0o644)
	// The user trusted the folder and approved its servers: wrap leaves
	// unapproved ones alone.
	cfg, _ := os.ReadFile(path)
	cfg, _ = sjson.SetRawBytes(cfg, "projects."+gjson.Escape(o.ProjectKeys()[0]), []byte(`{"hasTrustDialogAccepted": true, "enableAllProjectMcpServers": true}`))
	os.WriteFile(path, cfg, 0o600)
	plan, err := NewPlan(o, Request{Names: []string{"a", "p"}, Scope: "all", Shim: testShim, Project: ProjectRewrite})
	if err != nil {
		t.Fatal(err)
	}
	mcpTarget, _ := filepath.EvalSymlinks(mcp)
	wrote := false
	cfgfile.Exchange = func(a, b string) error {
		if b == mcpTarget && !wrote {
			wrote = true
			otherWrite(t, mcp, set(t, "theirs", true))
		}
		return swapFiles(a, b)
	}
	defer func() { cfgfile.Exchange = swapFiles }()
	backups, err := plan.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if !wrote || len(backups) != 2 || backups[0].File != path || backups[1].File != mcp {
		t.Fatalf("conflict staged: %v; backups %v, want one of each file", wrote, backups)
	}
	got, _ := os.ReadFile(mcp)
	if !gjson.GetBytes(got, "theirs").Bool() || gjson.GetBytes(got, "mcpServers.p.command").String() != testShim {
		t.Errorf(".mcp.json holds\n%s\nwant the other program's key and p wrapped", got)
	}
	if g, _ := os.ReadFile(path); gjson.GetBytes(g, "mcpServers.a.command").String() != testShim {
		t.Errorf("~/.claude.json: a not wrapped:\n%s", g)
	}
	for _, n := range []string{"a", "p"} {
		if r := rowOf(plan, n); r.Action != ActWrapped || r.Detail != "" {
			t.Errorf("row %s: %+v, want wrapped with no note", n, r)
		}
	}
}

// TestPlanCommitBesideLockTaker: a writer that takes Claude Code's lock, as
// Claude Code's saves do, writes the file just before every time Commit
// locks it. Commit plans again while it holds the lock, so the writer
// cannot get in between: one try, both changes kept.
func TestPlanCommitBesideLockTaker(t *testing.T) {
	o, path := replanHome(t)
	plan, err := NewPlan(o, Request{Names: []string{"a"}, Scope: "all", Shim: testShim})
	if err != nil {
		t.Fatal(err)
	}
	locks := 0
	cfgfile.TakeLock = func(target string) (func(), error) {
		locks++
		unlock, err := cfgfile.Lock(target)
		if err != nil {
			return nil, err
		}
		otherWrite(t, path, set(t, "n", locks))
		unlock()
		return cfgfile.Lock(target)
	}
	defer func() { cfgfile.TakeLock = cfgfile.Lock }()
	if _, err := plan.Commit(); err != nil {
		t.Fatalf("got %v, want the edit made under the lock after the other program's write", err)
	}
	got, _ := os.ReadFile(path)
	if locks != 1 || gjson.GetBytes(got, "n").Int() != 1 || gjson.GetBytes(got, "mcpServers.a.command").String() != testShim {
		t.Fatalf("after %d locks the file holds\n%s\nwant one lock, n=1 and a wrapped", locks, got)
	}
	if r := rowOf(plan, "a"); r.Action != ActWrapped || r.Detail != "" {
		t.Errorf("row a: %+v, want wrapped with no note (the other program did not touch a)", r)
	}
}

// TestPlanCommitReplansUnchangedRows: a row with nothing to write is
// planned again too. a is wrapped when the plan reads the file ("already
// wrapped"); another program puts a's original entry back before the
// commit. Commit wraps a again, in the same write as b, and a's row says
// what happened, never "already wrapped" for a server left unwrapped.
func TestPlanCommitReplansUnchangedRows(t *testing.T) {
	o, path := replanHome(t)
	first, err := NewPlan(o, Request{Scope: "all", Names: []string{"a"}, Shim: testShim})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := first.Commit(); err != nil {
		t.Fatal(err)
	}
	plan, err := NewPlan(o, Request{Scope: "all", Names: []string{"a", "b"}, Shim: testShim})
	if err != nil {
		t.Fatal(err)
	}
	if r := rowOf(plan, "a"); r.Action != ActAlreadyWrapped {
		t.Fatalf("row a before the commit: %+v, want already wrapped", r)
	}
	otherWrite(t, path, set(t, "mcpServers.a", map[string]any{"type": "stdio", "command": "/bin/a", "args": []string{}}))
	if _, err := plan.Commit(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	for _, name := range []string{"a", "b"} {
		if cmd := gjson.GetBytes(got, "mcpServers."+name+".command").String(); cmd != testShim {
			t.Errorf("%s runs %q, want the shim", name, cmd)
		}
	}
	if r := rowOf(plan, "a"); r.Action != ActWrapped || !strings.Contains(r.Detail, "changed it") {
		t.Errorf("row a: %+v, want wrapped, changed by another program", r)
	}
	if r := rowOf(plan, "b"); r.Action != ActWrapped || r.Detail != "" {
		t.Errorf("row b: %+v, want wrapped with no note", r)
	}
}

// swapFiles is cfgfile's atomic exchange; tests that replace
// cfgfile.Exchange call it through.
var swapFiles = cfgfile.Exchange
