package state

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/procinfo"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// startSelf starts the test binary as one of TestMain's stand-ins, with
// env added to the test's own; its stderr is the test's.
func startSelf(t *testing.T, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// child runs the test binary as a process that exits at once ("exit") or
// lives until killed ("live"), and returns it started.
func child(t *testing.T, kind string) *exec.Cmd {
	t.Helper()
	return startSelf(t, "MCP_HEAL_TEST_CHILD="+kind)
}

// modes says whether file modes mean anything here: Windows has none (Go
// reports 0666 or 0444 from the read-only attribute; the profile
// directory's ACL guards the state dir), so the mode checks are unix-only.
func modes(t *testing.T) bool {
	if runtime.GOOS == "windows" {
		t.Log("file modes not checked: Windows has none")
		return false
	}
	return true
}

func useTempState(t *testing.T) string {
	t.Helper()
	dir := testenv.TempDir(t)
	testenv.UseStateDir(t, dir)
	return dir
}

func TestWriteReadListModes(t *testing.T) {
	useTempState(t)
	// A remote's error in the exit's detail may echo a URL's token.
	ex := &Exit{Cause: CauseRemote, Detail: "session lost: https://h/mcp?token=sekrit123456 said 404", Reason: "session lost: https://h/mcp?token=sekrit123456 said 404"}
	r := &Record{Server: "tiny", Session: "s1", ShimPID: os.Getpid(), ClaudePID: os.Getppid(), Mode: ModeStdio, State: Running, Started: time.Now(), LastExit: ex}
	if err := Write(r); err != nil {
		t.Fatal(err)
	}
	got, err := Read(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if got.Server != "tiny" || got.Schema != Schema || got.Updated.IsZero() {
		t.Errorf("got %+v", got)
	}
	if got.LastExit == nil || got.LastExit.Cause != CauseRemote || strings.Contains(got.LastExit.Detail+got.LastExit.Reason, "sekrit") {
		t.Errorf("last exit %+v: want the cause kept and the token redacted", got.LastExit)
	}
	st, err := os.Stat(recordPath(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	if modes(t) && st.Mode().Perm() != 0o600 {
		t.Errorf("record mode %v, want 0600", st.Mode().Perm())
	}
	for _, d := range []string{Dir(), ShimsDir()} {
		st, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if modes(t) && st.Mode().Perm() != 0o700 {
			t.Errorf("%s mode %v, want 0700", d, st.Mode().Perm())
		}
	}
	all, err := List()
	if err != nil || len(all) != 1 {
		t.Fatalf("List = %v, %v; want 1 record", all, err)
	}
	if err := Remove(os.Getpid()); err != nil {
		t.Fatal(err)
	}
	if err := Remove(os.Getpid()); err != nil {
		t.Errorf("second Remove: %v", err)
	}
}

// TestStaleRecordsDropped writes a record for a process that has exited:
// List must leave it out and delete it.
func TestStaleRecordsDropped(t *testing.T) {
	useTempState(t)
	cmd := child(t, "exit")
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	dead := cmd.Process.Pid
	if err := Write(&Record{Server: "gone", ShimPID: dead}); err != nil {
		t.Fatal(err)
	}
	all, err := List()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 0 {
		t.Fatalf("got %d records, want 0 (stale)", len(all))
	}
	if _, err := os.Stat(recordPath(dead)); !os.IsNotExist(err) {
		t.Errorf("stale record not removed: %v", err)
	}
}

func TestFind(t *testing.T) {
	useTempState(t)
	// Three live processes stand in for three shims.
	var pids []int
	for i := 0; i < 3; i++ {
		cmd := child(t, "live")
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		pids = append(pids, cmd.Process.Pid)
	}
	recs := []*Record{
		{Server: "a", Session: "s1", ClaudePID: 100, ShimPID: pids[0]},
		{Server: "a", Session: "s2", ClaudePID: 200, ShimPID: pids[1]},
		{Server: "a", ClaudePID: 300, ShimPID: pids[2]},
	}
	for _, r := range recs {
		if err := Write(r); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		server, session string
		claudePID       int
		want            int
	}{
		{"a", "s1", 0, 2}, // s1, plus the record without a session matched by nothing else: pid 0 matches all
		{"a", "s2", 200, 1},
		{"a", "s3", 100, 1}, // /clear: a new id under Claude Code 100 keeps s1's shim
		{"a", "s3", 0, 1},   // an unknown id, no pid: only the record without a session
		{"a", "s2", 100, 2}, // by id and by pid
		{"a", "", 300, 1},
		{"a", "", 0, 3},
		{"b", "", 0, 0},
	}
	for _, tt := range tests {
		got, err := Find(tt.server, tt.session, tt.claudePID)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != tt.want {
			t.Errorf("Find(%q,%q,%d) = %d records, want %d", tt.server, tt.session, tt.claudePID, len(got), tt.want)
		}
	}
}

func TestIncidents(t *testing.T) {
	useTempState(t)
	for i := 0; i < 5; i++ {
		srv := "a"
		if i%2 == 1 {
			srv = "b"
		}
		if err := AppendIncident(Incident{Server: srv, Event: "PostToolUseFailure", Class: "connection-closed"}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := ReadIncidents(MaxIncidentBytes, time.Time{})
	if err != nil || len(all) != 5 {
		t.Fatalf("got %d, %v; want 5", len(all), err)
	}
	if in := LatestIncident(all, "a", ""); in == nil || in.Server != "a" {
		t.Errorf("got %+v", in)
	}
	st, _ := os.Stat(IncidentsPath())
	if modes(t) && st.Mode().Perm() != 0o600 {
		t.Errorf("incident log mode %v", st.Mode().Perm())
	}
}

func TestIncidentLogTrimmed(t *testing.T) {
	useTempState(t)
	long := string(make([]byte, 4000))
	for i := 0; i < 400; i++ {
		if err := AppendIncident(Incident{Server: "a", Error: long}); err != nil {
			t.Fatal(err)
		}
	}
	st, err := os.Stat(IncidentsPath())
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() > MaxIncidentBytes+64<<10 {
		t.Errorf("incident log %d bytes, want trimmed near %d", st.Size(), MaxIncidentBytes)
	}
	all, err := ReadIncidents(2*MaxIncidentBytes, time.Time{})
	if err != nil || len(all) == 0 {
		t.Fatalf("after trim: %d, %v", len(all), err)
	}
}

func TestSafeName(t *testing.T) {
	for in, want := range map[string]string{"tiny": "tiny", "plugin:x:y": "plugin_x_y", "../etc": ".._etc", "..": "_", "": "_", "a b/c": "a_b_c"} {
		if got := SafeName(in); got != want {
			t.Errorf("SafeName(%q) = %q, want %q", in, got, want)
		}
		if filepath.Base(SafeName(in)) != SafeName(in) {
			t.Errorf("SafeName(%q) has a separator", in)
		}
	}
}

// TestAttentionMarkers: a shim record in the failed state puts a marker in
// the attention directory (the launcher's PreToolUse fast path reads its
// emptiness); leaving the failed state, Remove, and a stale record take it
// away.
func TestAttentionMarkers(t *testing.T) {
	useTempState(t)
	marker := filepath.Join(AttentionDir(), ShimAttention(os.Getpid()))
	r := &Record{Server: "a", ShimPID: os.Getpid(), State: Failed}
	if err := Write(r); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(marker)
	if err != nil {
		t.Fatalf("failed record: no marker: %v", err)
	}
	if modes(t) && st.Mode().Perm() != 0o600 {
		t.Errorf("marker mode %v, want 0600", st.Mode().Perm())
	}
	r.State = Running
	if err := Write(r); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("running record: marker still there (%v)", err)
	}
	r.State = Failed
	Write(r)
	if err := Remove(os.Getpid()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("after Remove: marker still there (%v)", err)
	}
	// A failed shim that died without cleaning up.
	cmd := child(t, "exit")
	cmd.Wait()
	dead := cmd.Process.Pid
	Write(&Record{Server: "gone", ShimPID: dead, State: Failed})
	List()
	if _, err := os.Stat(filepath.Join(AttentionDir(), ShimAttention(dead))); !os.IsNotExist(err) {
		t.Fatalf("stale failed shim: marker still there (%v)", err)
	}
	if err := SetAttention(ServerAttention("plugin:x:y"), true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(AttentionDir(), "server-plugin_x_y")); err != nil {
		t.Fatal(err)
	}
}

// TestListPrunesReusedPid: a record whose pid now names another process
// (the shim was SIGKILLed and the pid reused) is stale: List deletes it.
// A record written by the live shim itself carries its identity and stays.
func TestListPrunesReusedPid(t *testing.T) {
	useTempState(t)
	stranger := child(t, "live")
	t.Cleanup(func() { stranger.Process.Kill(); stranger.Wait() })
	self, _ := os.Executable()
	if err := Write(&Record{Server: "gone", ShimPID: stranger.Process.Pid, ShimStart: "12345", ShimExe: self, Mode: ModeStdio, State: Running}); err != nil {
		t.Fatal(err)
	}
	if err := Write(&Record{Server: "me", ShimPID: os.Getpid(), Mode: ModeStdio, State: Running}); err != nil {
		t.Fatal(err)
	}
	all, err := List()
	if err != nil || len(all) != 1 || all[0].Server != "me" {
		t.Fatalf("List = %+v, %v; want only the live shim's record", all, err)
	}
	if err := VerifyShim(all[0]); err != nil {
		t.Errorf("own record does not verify: %v", err)
	}
	if _, err := os.Stat(recordPath(stranger.Process.Pid)); !os.IsNotExist(err) {
		t.Errorf("stale record: got %v, want it deleted", err)
	}
	signalled := false
	err = SignalShim(&Record{ShimPID: stranger.Process.Pid, ShimStart: "12345", ShimExe: self}, 1, func(int, syscall.Signal) error { signalled = true; return nil })
	if err == nil || signalled {
		t.Errorf("SignalShim to a reused pid: got %v, signalled %v; want an error and no signal", err, signalled)
	}
}

// TestStaleAttention: old server markers and call marks go, shim markers
// stay (their records keep them), a temporary file a killed hook left goes
// after a minute, and so does the open/ directory of earlier versions.
func TestStaleAttention(t *testing.T) {
	useTempState(t)
	old := time.Now().Add(-2 * time.Hour)
	if err := MarkServer("gone", true); err != nil {
		t.Fatal(err)
	}
	if err := MarkServer("fresh", true); err != nil {
		t.Fatal(err)
	}
	if err := SetAttention(ShimAttention(42), true); err != nil {
		t.Fatal(err)
	}
	if err := MarkCalled("s1", "gone", old); err != nil {
		t.Fatal(err)
	}
	if at, ok := CalledAt("s1", "gone"); !ok || !at.Equal(old.UTC()) {
		t.Fatalf("CalledAt: %v %v, want the time written", at, ok)
	}
	tmp := filepath.Join(AttentionDir(), ".server-x.99.tmp")
	os.WriteFile(tmp, nil, 0o600)
	os.MkdirAll(filepath.Join(Dir(), "open"), 0o700)
	for _, p := range []string{filepath.Join(AttentionDir(), "server-gone"), filepath.Join(AttentionDir(), ShimAttention(42)), tmp, filepath.Join(CalledDir(), calledKey("s1", "gone"))} {
		os.Chtimes(p, old, old)
	}
	if err := StaleAttention(time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{
		filepath.Join(AttentionDir(), "server-gone"):     false,
		filepath.Join(AttentionDir(), "server-fresh"):    true,
		filepath.Join(AttentionDir(), ShimAttention(42)): true,
		tmp: false,
		filepath.Join(CalledDir(), calledKey("s1", "gone")): false,
		filepath.Join(Dir(), "open"):                        false,
	} {
		if _, err := os.Lstat(p); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", p, err == nil, want)
		}
	}
}

// TestZombieShimIsNotLive: a shim that has exited and not been reaped (a
// zombie, while its parent has not waited) is gone. state had its own
// liveness rule, kill(pid, 0), which a zombie passes: its record counted
// as a live shim, where procinfo.Alive, the one rule now, says it ended.
func TestZombieShimIsNotLive(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no zombies on Windows: an exited process is told apart by its exit code (procinfo)")
	}
	useTempState(t)
	cmd := child(t, "live")
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Wait() })
	pid := cmd.Process.Pid
	// Not waited for: it stays a zombie until the cleanup reaps it.
	testenv.WaitFor(t, 5*time.Second, "the killed child to be a zombie", func() bool {
		i, err := procinfo.Get(pid)
		return err == nil && i.Zombie
	})
	r := &Record{Server: "z", ShimPID: pid}
	if err := Write(r); err != nil {
		t.Fatal(err)
	}
	if Live(r) {
		t.Errorf("Live(record of zombie %d) = true, want false", pid)
	}
	if all, err := List(); err != nil || len(all) != 0 {
		t.Errorf("List: got %d records (%v), want 0: a zombie shim is gone", len(all), err)
	}
}

// TestQuiet: a record says "not answering" only while the shim runs the
// server; a stale NotAnswering on a record in another state says nothing.
func TestQuiet(t *testing.T) {
	q := &NotAnswering{Since: time.Unix(1, 0), Method: "tools/call", Tool: "t"}
	for _, tt := range []struct {
		r    *Record
		want *NotAnswering
	}{
		{nil, nil},
		{&Record{State: Running}, nil},
		{&Record{State: Running, NotAnswering: q}, q},
		{&Record{State: Restarting, NotAnswering: q}, nil},
		{&Record{State: Backoff, NotAnswering: q}, nil},
		{&Record{State: Failed, NotAnswering: q}, nil},
	} {
		if got := tt.r.Quiet(); got != tt.want {
			t.Errorf("%+v.Quiet() = %v, want %v", tt.r, got, tt.want)
		}
	}
}
