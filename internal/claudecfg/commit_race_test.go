package claudecfg

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// TestMain lets the test binary stand in for another program that rewrites
// the config (MCP_HEAL_TEST_WRITER=path), as the go-sdk's tests re-execute
// themselves as servers.
func TestMain(m *testing.M) {
	if path := os.Getenv("MCP_HEAL_TEST_WRITER"); path != "" {
		d, _ := time.ParseDuration(os.Getenv("MCP_HEAL_TEST_WRITER_FOR"))
		if err := writer(path, d); err != nil {
			fmt.Fprintln(os.Stderr, "writer:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type writerResult struct {
	Writes, Lost, Torn int
}

// writer rewrites path for d at 50 Hz the way editors and Claude Code do:
// read, change its own key "n", write a temporary file, rename it over the
// file. It takes no lock, so only Commit's compare-and-swap protects its
// updates. An update is lost when the next read finds an older n. (Commit
// may show its own version for the microseconds between a swap and the
// swap back, longer when the machine is loaded; the writer looks again for
// up to 200 ms before it calls an update lost.)
func writer(path string, d time.Duration) error {
	var res writerResult
	last := int64(0)
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		var data []byte
		for try := 0; ; try++ {
			var err error
			if data, err = os.ReadFile(path); err != nil {
				return err
			}
			if !gjson.ValidBytes(data) {
				res.Torn++
			}
			if n := gjson.GetBytes(data, "n").Int(); n == last || try == 100 {
				if n != last {
					res.Lost++
				}
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		last++
		next, err := sjson.SetBytes(data, "n", last)
		if err != nil {
			return err
		}
		tmp := path + ".writer-tmp"
		if err := os.WriteFile(tmp, next, 0o600); err != nil {
			return err
		}
		if err := os.Rename(tmp, path); err != nil {
			return err
		}
		res.Writes++
	}
	b, _ := json.Marshal(res)
	_, err := os.Stdout.Write(b)
	return err
}

// TestCommitConcurrentWriter: while another program rewrites the config at
// 50 Hz, wrap and unwrap commit over and over (Commit, Update and a Plan's
// Commit, which plans again on a conflict): none of the other program's
// updates is lost, no reader ever sees a torn file, and the last update
// survives.
func TestCommitConcurrentWriter(t *testing.T) {
	stateHome(t)
	d := 10 * time.Second
	if testing.Short() {
		d = 2 * time.Second
	}
	path := filepath.Join(t.TempDir(), ".claude.json")
	orig, projects := genConfig(7, 3, "  ")
	orig, _ = sjson.SetBytes(orig, "n", 0)
	if err := os.WriteFile(path, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	ps := paths(projects)

	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "MCP_HEAL_TEST_WRITER="+path, "MCP_HEAL_TEST_WRITER_FOR="+d.String())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	var torn atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if b, err := os.ReadFile(path); err == nil && !gjson.ValidBytes(b) {
				torn.Add(1)
			}
			time.Sleep(time.Millisecond)
		}
	})

	toggle := func(cur []byte) ([]byte, error) {
		if bytes.Contains(cur, []byte(testShim)) {
			return unwrapAll(t, cur, ps), nil
		}
		return wrapAll(t, cur, ps, testShim), nil
	}
	o := Options{Home: filepath.Dir(path), ProjectDir: t.TempDir()}
	commits, changed := map[int]int{}, map[int]int{}
	var werr error
loop:
	for i := 0; ; i++ {
		select {
		case werr = <-done:
			break loop
		default:
		}
		// A third of the rewrites each: read, transform, Commit; Update,
		// which reads under the lock; a Plan (the user scope), as wrap
		// and unwrap do them.
		var err error
		switch i % 3 {
		case 0:
			cur, rerr := os.ReadFile(path)
			if rerr != nil {
				t.Fatal(rerr)
			}
			next, _ := toggle(cur)
			_, err = Commit(path, cur, next)
		case 1:
			_, err = Update(path, toggle)
		default:
			cur, rerr := os.ReadFile(path)
			if rerr != nil {
				t.Fatal(rerr)
			}
			plan, perr := NewPlan(o, Request{Unwrap: bytes.Contains(cur, []byte(testShim)), Scope: ScopeUser, Shim: testShim})
			if perr != nil {
				t.Fatal(perr)
			}
			_, err = plan.Commit()
		}
		switch {
		case errors.Is(err, ErrChanged):
			changed[i%3]++
		case err != nil:
			t.Fatal(err)
		default:
			commits[i%3]++
		}
	}
	close(stop)
	wg.Wait()
	if werr != nil {
		t.Fatalf("writer: %v\n%s", werr, errb.String())
	}
	var res writerResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("writer said %q: %v", out.String(), err)
	}
	final, _ := os.ReadFile(path)
	t.Logf("Commit %d done, %d refused as changed; Update %d done, %d gave up; Plan.Commit %d done, %d gave up; writer: %d writes, %d lost, %d torn; reader: %d torn",
		commits[0], changed[0], commits[1], changed[1], commits[2], changed[2], res.Writes, res.Lost, res.Torn, torn.Load())
	if res.Lost != 0 || res.Torn != 0 || torn.Load() != 0 {
		t.Errorf("got %d lost and %d+%d torn, want none", res.Lost, res.Torn, torn.Load())
	}
	if n := gjson.GetBytes(final, "n").Int(); n != int64(res.Writes) {
		t.Errorf("final n = %d, want the writer's last update %d", n, res.Writes)
	}
	if commits[0]+commits[1]+commits[2] < 20 || res.Writes < int(d/(100*time.Millisecond)) {
		t.Errorf("got %v commits and %d writes in %s: too few to mean anything", commits, res.Writes, d)
	}
	if ents, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*mcp-heal-*")); len(ents) != 0 {
		t.Errorf("temporary files left: %v", ents)
	}
}

// TestCommitSwapsBackAConcurrentWrite drives the compare-and-swap's rare
// paths deterministically: another program's write lands between Commit's
// check and its swap (and, the second time, again between the swap and
// the swap back). Its version must end up in the file and ErrChanged be
// returned.
func TestCommitSwapsBackAConcurrentWrite(t *testing.T) {
	stateHome(t)
	for _, writes := range []int{1, 2, 3} {
		t.Run(strconv.Itoa(writes)+" concurrent writes", func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, ".claude.json")
			old := []byte(`{"n":0}`)
			os.WriteFile(path, old, 0o600)
			n := 0
			write := func() {
				n++
				tmp := filepath.Join(dir, "other-tmp")
				os.WriteFile(tmp, []byte(`{"n":`+strconv.Itoa(n)+`}`), 0o600)
				if err := os.Rename(tmp, path); err != nil {
					t.Fatal(err)
				}
			}
			exchange = func(a, b string) error {
				if n < writes {
					write()
				}
				return exchangeFiles(a, b)
			}
			defer func() { exchange = exchangeFiles }()
			if _, err := Commit(path, old, []byte(`{"n":0,"wrapped":true}`)); !errors.Is(err, ErrChanged) {
				t.Fatalf("got %v, want ErrChanged", err)
			}
			if got, _ := os.ReadFile(path); string(got) != `{"n":`+strconv.Itoa(writes)+`}` {
				t.Fatalf("file holds %s, want the last concurrent write n=%d", got, writes)
			}
			if got := listDir(t, dir); len(got) != 1 {
				t.Fatalf("left behind: %v", got)
			}
		})
	}
}

// TestCommitTakesClaudeCodeLock: Commit waits for a live holder of Claude
// Code's lock directory, and takes over one abandoned for longer than the
// stale time.
func TestCommitTakesClaudeCodeLock(t *testing.T) {
	stateHome(t)
	path := filepath.Join(t.TempDir(), ".claude.json")
	os.WriteFile(path, []byte(`{}`), 0o600)
	lock := path + ".lock"
	if err := os.Mkdir(lock, 0o700); err != nil {
		t.Fatal(err)
	}
	released := make(chan time.Time, 1)
	go func() {
		time.Sleep(300 * time.Millisecond)
		released <- time.Now()
		os.Remove(lock)
	}()
	if _, err := Commit(path, []byte(`{}`), []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-released:
	default:
		t.Fatal("Commit wrote while another program held the lock")
	}
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Fatalf("lock left behind: %v", err)
	}

	// Abandoned: its mtime is older than the stale time.
	os.Mkdir(lock, 0o700)
	old := time.Now().Add(-2 * lockStale)
	os.Chtimes(lock, old, old)
	start := time.Now()
	if _, err := Commit(path, []byte(`{"a":1}`), []byte(`{"a":2}`)); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("took %s to take over an abandoned lock", took)
	}
}

// TestUpdateStartsOver: another program's write lands between Update's read
// and its swap; Update undoes the swap and starts over from the newer
// contents, so the result holds both changes.
func TestUpdateStartsOver(t *testing.T) {
	stateHome(t)
	dir := t.TempDir()
	path := filepath.Join(dir, ".claude.json")
	os.WriteFile(path, []byte(`{"n":0}`), 0o600)
	wrote := false
	exchange = func(a, b string) error {
		if !wrote {
			wrote = true
			os.WriteFile(filepath.Join(dir, "other"), []byte(`{"n":1}`), 0o600)
			os.Rename(filepath.Join(dir, "other"), path)
		}
		return exchangeFiles(a, b)
	}
	defer func() { exchange = exchangeFiles }()
	calls := 0
	backup, err := Update(path, func(cur []byte) ([]byte, error) {
		calls++
		return sjson.SetBytes(cur, "wrapped", true)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != `{"n":1,"wrapped":true}` || calls != 2 {
		t.Fatalf("got %s after %d calls, want the concurrent write kept and the change applied on the second try", got, calls)
	}
	if b, _ := os.ReadFile(backup); string(b) != `{"n":1}` {
		t.Fatalf("backup holds %s, want the version replaced", b)
	}
	// Nothing to change: nothing written, no backup.
	if backup, err := Update(path, func(cur []byte) ([]byte, error) { return cur, nil }); err != nil || backup != "" {
		t.Fatalf("no-op Update: backup %q, %v", backup, err)
	}
}
