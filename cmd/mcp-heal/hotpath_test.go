//go:build unix

package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// hotCalls is how many tools/call the busy run carries: a package is on
// the hot path when the shim ran at least that many more of its
// statements than in the run with the handshake only (at least one per
// call). One-off work that runs in one run and not the other (the state
// record written once more as the shim stops: a few hundred statements of
// state, paths and redact) stays far below it.
const hotCalls = 2000

// maxHotPackages bounds the packages a tools/call passes through: 7
// (the shim, the framing, the validator, the process, the clock,
// liveness, the one owner of the hang rules, told of every message the
// server sends: issue 23, 4 statements a call, and rawio, the pipes'
// reads and writes with raw system calls, which spare the runtime's
// monitor thread a wake-up per message: issue 25) for a server that is
// not kept, and internal/keep besides for a kept one (the kept
// guardian's line marks moved from internal/guardian into proc's writer:
// issue 19).
const maxHotPackages = 7

// TestToolsCallHotPath measures which packages carry a tools/call and its
// answer through a running shim, after the handshake: a coverage build of
// mcp-heal (count mode) runs `shim -- mcp-heal example-server` twice, once
// with the handshake only and once with the handshake and hotCalls calls,
// and the packages whose statement counts in the shim process grew by
// hotCalls or more are the ones on the path; then the same with --keep.
// docs/architecture.md has the figures.
func TestToolsCallHotPath(t *testing.T) {
	testenv.NeedsFull(t, "a coverage build of mcp-heal")
	bin := filepath.Join(t.TempDir(), "mcp-heal")
	build := exec.Command("go", "build", "-cover", "-covermode=count", "-coverpkg=./...", "-o", bin, "./cmd/mcp-heal")
	build.Dir = testenv.ModuleRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("coverage build: %v\n%s", err, out)
	}
	idle := coveredRun(t, bin, 0)
	busy := coveredRun(t, bin, hotCalls)
	hot := hotPackages(idle, busy, hotCalls)
	var lines []string
	for _, p := range hot {
		lines = append(lines, fmt.Sprintf("%s +%d", p, busy[p]-idle[p]))
	}
	t.Logf("packages on the hot path of a tools/call (%d), statements run for %d calls:\n%s", len(hot), hotCalls, strings.Join(lines, "\n"))
	for p, c := range busy {
		if d := c - idle[p]; d != 0 && !slices.Contains(hot, p) {
			t.Logf("below the threshold: %s %+d", p, d)
		}
	}
	if !slices.Contains(hot, "internal/shim") || !slices.Contains(hot, "internal/jsonrpc") {
		t.Fatalf("the measurement is broken: the shim and the framing must be on the path: %v", hot)
	}
	if len(hot) > maxHotPackages {
		t.Errorf("%d packages on the hot path of a tools/call, want at most %d: %v", len(hot), maxHotPackages, hot)
	}

	// A kept server's calls also pass through its translation
	// (keep.conn), and nothing else.
	kept := hotPackages(coveredRun(t, bin, 0, "--keep", "1m"), coveredRun(t, bin, hotCalls, "--keep", "1m"), hotCalls)
	t.Logf("with --keep (%d): %v", len(kept), kept)
	if extra := slices.DeleteFunc(slices.Clone(kept), func(p string) bool { return slices.Contains(hot, p) }); !slices.Equal(extra, []string{"internal/keep"}) {
		t.Errorf("with --keep, the hot path adds %v, want [internal/keep]", extra)
	}
}

// hotPackages lists the packages (relative to the module) whose count grew
// by at least n from idle to busy.
func hotPackages(idle, busy map[string]int64, n int64) []string {
	var hot []string
	for p, c := range busy {
		if c-idle[p] >= n {
			hot = append(hot, p)
		}
	}
	slices.Sort(hot)
	return hot
}

// coveredRun runs the coverage build as a shim in front of its own example
// server, does the handshake and calls tools/call echo `calls` times one
// after the other, closes its stdin and returns, per package, how many
// statements the shim process ran (the server and the guardian, the same
// binary, write counters of their own, left out by pid).
func coveredRun(t *testing.T, bin string, calls int, flags ...string) map[string]int64 {
	t.Helper()
	cov := t.TempDir()
	rt, err := os.MkdirTemp("", "hp") // short: a socket path must stay under 104 bytes
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(rt)
	env := append(os.Environ(), "GOCOVERDIR="+cov, "XDG_STATE_HOME="+t.TempDir(), "XDG_RUNTIME_DIR="+rt, "MCP_HEAL_DEBUG=")
	if len(flags) > 0 {
		// A kept server outlives the shim: stop it (its own counters and
		// the stop's are other pids').
		defer func() {
			stop := exec.Command(bin, "stop", "--all")
			stop.Env = env
			if out, err := stop.CombinedOutput(); err != nil {
				t.Errorf("mcp-heal stop --all: %v\n%s", err, out)
			}
		}()
	}
	cmd := exec.Command(bin, append(append([]string{"shim", "--name", "hot"}, flags...), "--", bin, "example-server")...)
	cmd.Env = env
	in, out := testenv.StartPiped(t, cmd)
	defer cmd.Process.Kill()
	r := bufio.NewReader(out)
	answer := func(id int) string {
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("reading the answer to %d: %v", id, err)
			}
			if gjson.Get(line, "id").Int() == int64(id) {
				return line
			}
		}
	}
	fmt.Fprintln(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"hotpath","version":"1"}}}`)
	answer(1)
	fmt.Fprintln(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i := range calls {
		id := i + 2
		fmt.Fprintf(in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"call %d"}}}`+"\n", id, id)
		if got := answer(id); !strings.Contains(got, fmt.Sprintf("call %d", id)) {
			t.Fatalf("tools/call %d: %s", id, got)
		}
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("shim: %v", err)
	}
	return shimCounts(t, cov, cmd.Process.Pid)
}

// shimCounts reads the counters the process pid wrote to dir, per package
// relative to the module: the sum over its blocks of statements times
// executions.
func shimCounts(t *testing.T, dir string, pid int) map[string]int64 {
	t.Helper()
	mine := t.TempDir()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range entries {
		// covmeta.<hash>, covcounters.<hash>.<pid>.<nanotime>
		name := e.Name()
		parts := strings.Split(name, ".")
		switch {
		case parts[0] == "covmeta":
		case parts[0] == "covcounters" && len(parts) == 4 && parts[2] == strconv.Itoa(pid):
			found = true
		default:
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mine, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if !found {
		t.Fatalf("no coverage counters of the shim (pid %d) in %s", pid, dir)
	}
	txt := filepath.Join(t.TempDir(), "cover.txt")
	if out, err := exec.Command("go", "tool", "covdata", "textfmt", "-i", mine, "-o", txt).CombinedOutput(); err != nil {
		t.Fatalf("go tool covdata: %v\n%s", err, out)
	}
	f, err := os.Open(txt)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return parseCounts(t, f)
}

// parseCounts sums a textfmt profile (`file:start,end statements count`)
// per package.
func parseCounts(t *testing.T, r io.Reader) map[string]int64 {
	t.Helper()
	const module = "github.com/mcp-heal/mcp-heal/"
	counts := map[string]int64{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "mode:") {
			continue
		}
		f := strings.Fields(line)
		colon := strings.LastIndexByte(line, ':')
		if len(f) != 3 || colon < 0 {
			t.Fatalf("coverage profile line %q", line)
		}
		stmts, err1 := strconv.ParseInt(f[1], 10, 64)
		n, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("coverage profile line %q", line)
		}
		counts[strings.TrimPrefix(path.Dir(line[:colon]), module)] += stmts * n
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return counts
}
