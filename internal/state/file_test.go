package state

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestMain lets the test binary stand in for a process (child) or a hook
// that appends one incident (MCP_HEAL_TEST_APPEND=tool): it waits for the go file so that
// all start together.
func TestMain(m *testing.M) {
	// Stand-ins for processes on every OS (no sleep or true on Windows):
	// one that lives until killed, one that exits at once.
	switch os.Getenv("MCP_HEAL_TEST_CHILD") {
	case "live":
		time.Sleep(time.Minute)
		os.Exit(0)
	case "exit":
		os.Exit(0)
	}
	if tool := os.Getenv("MCP_HEAL_TEST_APPEND"); tool != "" {
		for go_ := os.Getenv("MCP_HEAL_TEST_GO"); ; time.Sleep(time.Millisecond) {
			if _, err := os.Stat(go_); err == nil {
				break
			}
		}
		if err := AppendIncident(Incident{Server: "s", Tool: tool, Class: "x", Error: strings.Repeat("e", 2000)}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestConcurrentIncidentsNearCap: 16 hooks append at once while the log is
// just under its size cap, so several of them trim it: every one of the 16
// incidents must survive.
func TestConcurrentIncidentsNearCap(t *testing.T) {
	rounds := 3
	if testing.Short() {
		rounds = 1
	}
	for round := range rounds {
		t.Run("round "+strconv.Itoa(round), func(t *testing.T) {
			dir := useTempState(t)
			if err := EnsureDir(Dir()); err != nil {
				t.Fatal(err)
			}
			filler := []byte(`{"server":"old","class":"x","error":"` + strings.Repeat("f", 900) + `"}` + "\n")
			var b []byte
			for len(b)+len(filler) < MaxIncidentBytes-3000 {
				b = append(b, filler...)
			}
			if err := os.WriteFile(IncidentsPath(), b, 0o600); err != nil {
				t.Fatal(err)
			}
			goFile := filepath.Join(testenv.TempDir(t), "go")
			var waits []func() error
			for i := range 16 {
				cmd := startSelf(t, "XDG_STATE_HOME="+dir, "MCP_HEAL_TEST_APPEND=tool-"+strconv.Itoa(i), "MCP_HEAL_TEST_GO="+goFile)
				waits = append(waits, cmd.Wait)
			}
			time.Sleep(200 * time.Millisecond) // let them all reach the barrier
			os.WriteFile(goFile, nil, 0o600)
			for _, wait := range waits {
				if err := wait(); err != nil {
					t.Fatalf("appender: %v", err)
				}
			}
			all, err := ReadIncidents(2*MaxIncidentBytes, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, in := range all {
				if in.Server == "s" {
					seen[in.Tool] = true
				}
			}
			if len(seen) != 16 {
				t.Fatalf("kept %d of 16 concurrent incidents: %v", len(seen), seen)
			}
			if st, _ := os.Stat(IncidentsPath()); st.Size() > MaxIncidentBytes+16*3000 {
				t.Errorf("incident log %d bytes: not trimmed", st.Size())
			}
		})
	}
}

// TestSymlinksRefused: a symbolic link planted in the state dir in place of
// a log, the incident log or a marker is refused, and its target is neither
// written nor chmodded.
func TestSymlinksRefused(t *testing.T) {
	useTempState(t)
	if err := EnsureDir(LogsDir()); err != nil {
		t.Fatal(err)
	}
	if err := EnsureDir(AttentionDir()); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(testenv.TempDir(t), "precious")
	if err := os.WriteFile(target, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		path string
		do   func() error
	}{
		{"lifecycle log", LogPath("srv"), func() error { _, err := OpenLog("srv"); return err }},
		{"traffic log", TrafficLogPath("srv"), func() error { _, err := OpenTrafficLog("srv"); return err }},
		{"incident log", IncidentsPath(), func() error { return AppendIncident(Incident{Server: "s"}) }},
		{"attention marker", filepath.Join(AttentionDir(), ServerAttention("srv")), func() error { return SetAttention(ServerAttention("srv"), true) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			testenv.Symlink(t, target, tt.path)
			defer os.Remove(tt.path)
			err := tt.do()
			if tt.name != "attention marker" && !errors.Is(err, ErrSymlink) {
				t.Errorf("got %v, want ErrSymlink", err)
			}
			b, _ := os.ReadFile(target)
			st, _ := os.Stat(target)
			if string(b) != "precious\n" || modes(t) && st.Mode().Perm() != 0o644 {
				t.Errorf("the link's target was changed: %q, mode %v", b, st.Mode().Perm())
			}
		})
	}
	// A state subdirectory that is a link is refused too (chmod would
	// follow it).
	os.RemoveAll(LogsDir())
	elsewhere := testenv.TempDir(t)
	os.Chmod(elsewhere, 0o755)
	testenv.Symlink(t, elsewhere, LogsDir())
	if _, err := OpenLog("srv"); !errors.Is(err, ErrSymlink) {
		t.Errorf("symlinked logs dir: got %v, want ErrSymlink", err)
	}
	if st, _ := os.Stat(elsewhere); modes(t) && st.Mode().Perm() != 0o755 {
		t.Errorf("the linked dir was chmodded to %v", st.Mode().Perm())
	}
}

// TestLogRotation: a log past its size becomes log.1, log.1 becomes log.2;
// at most keep old files stay; two writers sharing the log (two sessions of
// one server) lose nothing when one of them rotates.
func TestLogRotation(t *testing.T) {
	useTempState(t)
	path := filepath.Join(LogsDir(), "r.log")
	a, err := OpenLogFile(path, 1000, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := OpenLogFile(path, 1000, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	line := func(w string, i int) string { return fmt.Sprintf("%s %03d %s\n", w, i, strings.Repeat("x", 40)) }
	for i := range 30 {
		if _, err := a.Write([]byte(line("a", i))); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Write([]byte(line("b", i))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(path + ".3"); !os.IsNotExist(err) {
		t.Errorf("got %s.3, want at most 2 rotated files", path)
	}
	var lines []string
	for _, p := range []string{path + ".2", path + ".1", path} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if modes(t) && st.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v", p, st.Mode().Perm())
		}
		f, _ := os.Open(p)
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		f.Close()
	}
	// 60 lines of 51 bytes in at most 3 files of about 1000 bytes: the
	// newest ones are all there.
	if len(lines) < 30 {
		t.Fatalf("kept %d lines", len(lines))
	}
	for _, w := range []string{"a 029", "b 029", "a 025", "b 025"} {
		if !strings.Contains(strings.Join(lines, "\n"), w) {
			t.Errorf("lost the recent line %q", w)
		}
	}
}

// TestLifecycleLogRedacted: whatever a lifecycle event quotes (an exit
// reason, a server's stderr) is written through the one redaction rule.
func TestLifecycleLogRedacted(t *testing.T) {
	useTempState(t)
	l, err := OpenLog("srv")
	if err != nil {
		t.Fatal(err)
	}
	line := `{"event":"exit","stderr":"fatal: bad api_key=abc12345xyz for https://h/mcp?k=v9v9v9v9"}` + "\n"
	if n, err := l.Write([]byte(line)); err != nil || n != len(line) {
		t.Fatalf("Write = %d, %v", n, err)
	}
	l.Close()
	b, _ := os.ReadFile(LogPath("srv"))
	if strings.Contains(string(b), "abc12345xyz") || strings.Contains(string(b), "v9v9v9v9") || !strings.Contains(string(b), `"event":"exit"`) {
		t.Errorf("lifecycle log: %s", b)
	}
}
