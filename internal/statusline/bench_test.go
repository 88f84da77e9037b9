//go:build unix

package statusline_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
	"github.com/mcp-heal/mcp-heal/internal/testenv/fakeshim"
)

// Target is the most the status line may take, median wall time of the
// whole process (fork to exit): Claude Code runs it after every update of
// its screen.
const Target = 10 * time.Millisecond

// BenchmarkStatuslineVsTrue measures `mcp-heal statusline` as Claude Code
// pays for it, a whole process from fork to exit, against /bin/true and
// `mcp-heal version` (the binary's bare start-up), interleaved in one run.
// The session has 8 servers, each a live process standing in for its
// shim with the identity a shim records (so that every record is read,
// checked alive and verified): six running, one restarted a minute ago,
// one in a crash loop, and a shim of another session beside them.
//
//	go test -run XXX -bench StatuslineVsTrue -benchtime 200x ./internal/statusline
func BenchmarkStatuslineVsTrue(b *testing.B) {
	bin := testenv.Binary(b)
	dir := testenv.UseStateDir(b, testenv.TempDir(b))
	now := time.Now()
	for _, name := range []string{"github", "memory", "filesystem", "playwright", "fetch", "git", "sqlite", "slack", "elsewhere"} {
		pid, _ := fakeshim.Start(b)
		r := state.Record{Server: name, Session: "bench", ShimPID: pid, Mode: state.ModeStdio, State: state.Running,
			Target: "npx -y @modelcontextprotocol/server-" + name, ChildPID: pid, Started: now.Add(-time.Hour), ChildStarted: now.Add(-time.Hour)}
		switch name {
		case "memory":
			r.Restarts, r.ChildStarted = 1, now.Add(-time.Minute)
			code := -1
			r.LastExit = &state.Exit{Signal: "killed", SignalNum: 9, Code: &code, At: now.Add(-time.Minute), Cause: state.CauseSignal}
		case "slack":
			r.State, r.Failure, r.Restarts = state.Failed, "shim-failed", 5
			r.StderrTail = []string{"Error: SLACK_TOKEN is not set"}
		case "elsewhere":
			r.Session = "another"
		}
		fakeshim.WriteRecord(b, r)
	}
	payload := []byte(`{"session_id":"bench","transcript_path":"/x/t.jsonl","cwd":"/x","model":{"id":"claude-opus-4","display_name":"Opus"},"workspace":{"current_dir":"/x","project_dir":"/x"},"version":"2.1.332","cost":{"total_cost_usd":0.1}}`)
	env := append(os.Environ(), "XDG_STATE_HOME="+dir)
	run := func(name string, args ...string) (time.Duration, time.Duration, string) {
		cmd := exec.Command(name, args...)
		cmd.Env, cmd.Stdin = env, bytes.NewReader(payload)
		var out bytes.Buffer
		cmd.Stdout = &out
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("%s %v: %v", name, args, err)
		}
		return time.Since(start), cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), out.String()
	}
	if _, _, line := run(bin, "statusline"); !strings.HasPrefix(line, "\x1b[31mMCP 7/8 · run /mcp-heal doctor slack: crash loop · +1 more") {
		b.Fatalf("the line: %q", line)
	}
	n := 0
	for b.Loop() {
		n++
	}
	n = max(n, 100)
	var wall, cpu [3][]time.Duration
	sides := [][]string{{bin, "statusline"}, {bin, "version"}, {"/bin/true"}}
	for i := 0; i < n; i++ {
		for j, s := range sides {
			w, c, _ := run(s[0], s[1:]...)
			wall[j], cpu[j] = append(wall[j], w), append(cpu[j], c)
		}
	}
	la, _ := os.ReadFile("/proc/loadavg")
	med := func(j int) (time.Duration, time.Duration) { return testenv.Median(wall[j]), testenv.Median(cpu[j]) }
	sw, sc := med(0)
	vw, vc := med(1)
	tw, tc := med(2)
	fmt.Printf("median wall (cpu) over %d runs each, interleaved, load %s: statusline %s (%s); mcp-heal version %s (%s); /bin/true %s (%s); statusline/true %.2fx wall, %.2fx cpu; statusline/version %.2fx wall\n",
		n, strings.Join(strings.Fields(string(la))[:3], " "), r(sw), r(sc), r(vw), r(vc), r(tw), r(tc),
		float64(sw)/float64(tw), float64(sc)/float64(tc), float64(sw)/float64(vw))
	b.ReportMetric(ms(sw), "statusline-median-ms")
	b.ReportMetric(ms(tw), "true-median-ms")
	b.ReportMetric(float64(sw)/float64(tw), "ratio-to-true")
	b.ReportMetric(ms(sc-vc), "cpu-over-startup-ms")
	if sw > Target {
		b.Errorf("statusline: median wall %s, target <= %s", r(sw), Target)
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func r(d time.Duration) time.Duration { return d.Round(10 * time.Microsecond) }
