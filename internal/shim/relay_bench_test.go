//go:build unix

package shim

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// The shim against a byte relay (issue 25), side by side in one run:
//
//	go test -run XXX -bench Relay -benchtime 1x ./internal/shim/
//
// Three clients of the same server: directly, through testdata/relay (a
// 40-line Go program that copies bytes both ways through a buffer, the
// least a proxy can be) and through the real mcp-heal shim. Batches are
// interleaved, their order rotated each round, so that the machine's load
// hits the three alike; the load average is printed before and after.
// BenchmarkRelayLoaded runs the latency workload beside a CPU-bound load
// (one spinning process per core).

var buildOnce struct {
	sync.Once
	relay, cserver, err string
}

// relayTools builds testdata/relay (go) and testdata/cserver (cc) once.
func relayTools(tb testing.TB) (relay, cserver string) {
	tb.Helper()
	b := &buildOnce
	b.Do(func() {
		dir, err := os.MkdirTemp("", "mcp-heal-relay-")
		if err != nil {
			b.err = err.Error()
			return
		}
		b.relay, b.cserver = filepath.Join(dir, "relay"), filepath.Join(dir, "cserver")
		for _, c := range [][]string{
			{"go", "build", "-o", b.relay, "./internal/shim/testdata/relay"},
			{"cc", "-O2", "-o", b.cserver, "internal/shim/testdata/cserver/server.c"},
		} {
			cmd := exec.Command(c[0], c[1:]...)
			cmd.Dir = testenv.ModuleRoot(tb)
			if out, err := cmd.CombinedOutput(); err != nil {
				b.err = fmt.Sprintf("%s: %v\n%s", strings.Join(c, " "), err, out)
				return
			}
		}
	})
	if b.err != "" {
		tb.Fatal(b.err)
	}
	return b.relay, b.cserver
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// relaySide is one of the three ways to reach the server.
type relaySide struct {
	name string
	c    *pipeClient
	pid  int // the process between the client and the server (0: none)
	lat  []time.Duration
	cpu  time.Duration
	n    int
	busy time.Duration // throughput: wall time of the pipelined calls
	nt   int
	// context switches of its threads during the latency rounds
	vol, inv int
}

// switches sums the voluntary and involuntary context switches of every
// thread of pid (Linux; 0 elsewhere).
func switches(pid int) (vol, inv int) {
	if pid <= 0 {
		return 0, 0
	}
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	for _, t := range tasks {
		b, _ := os.ReadFile(t)
		for _, l := range strings.Split(string(b), "\n") {
			k, v, _ := strings.Cut(l, ":")
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			switch k {
			case "voluntary_ctxt_switches":
				vol += n
			case "nonvoluntary_ctxt_switches":
				inv += n
			}
		}
	}
	return vol, inv
}

func relaySides(b *testing.B, server string) []*relaySide {
	relay, _ := relayTools(b)
	direct := startPipe(b, nil, server)
	rl := startPipe(b, nil, relay, server)
	sh, _ := benchShim(b, server)
	sides := []*relaySide{{name: "direct", c: direct}, {name: "relay", c: rl, pid: rl.cmd.Process.Pid}, {name: "shim", c: sh, pid: sh.cmd.Process.Pid}}
	if old := baseline(); old != "" {
		c := startPipe(b, append(benchEnv, "XDG_STATE_HOME="+b.TempDir()), old, "shim", "--name", "bench", "--", server)
		sides = append(sides, &relaySide{name: "baseline", c: c, pid: c.cmd.Process.Pid})
	}
	for _, s := range sides {
		s.c.handshake(b)
	}
	return sides
}

// baseline is $MCP_HEAL_BENCH_BASELINE, an older mcp-heal binary measured
// as a fourth side in the same rounds (before and after a change in one
// run), or "".
func baseline() string { return os.Getenv("MCP_HEAL_BENCH_BASELINE") }

func pct(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}

// latencyRounds makes calls one at a time, rounds x per calls a side.
func latencyRounds(b *testing.B, sides []*relaySide, rounds, per int) {
	id := 100
	for r := 0; r < rounds; r++ {
		for k := range sides {
			s := sides[(r+k)%len(sides)]
			cpu := cpuTime(s.pid)
			vol, inv := switches(s.pid)
			for i := 0; i < per; i++ {
				id++
				t := time.Now()
				s.c.roundTrip(b, echoCall(id))
				s.lat = append(s.lat, time.Since(t))
			}
			s.cpu += cpuTime(s.pid) - cpu
			v2, i2 := switches(s.pid)
			s.vol, s.inv = s.vol+v2-vol, s.inv+i2-inv
			s.n += per
		}
	}
}

func reportLatency(b *testing.B, sides []*relaySide, what string) {
	d, rl, sh := sides[0], sides[1], sides[2]
	p50 := func(s *relaySide) time.Duration { return pct(s.lat, 50) }
	p90 := func(s *relaySide) time.Duration { return pct(s.lat, 90) }
	addR, addS := p50(rl)-p50(d), p50(sh)-p50(d)
	report(b, fmt.Sprintf("| %s: p50 | %v | %v | %v | added %v / %v = **%.2f×** |", what,
		p50(d).Round(time.Microsecond), p50(rl).Round(time.Microsecond), p50(sh).Round(time.Microsecond),
		addS.Round(time.Microsecond), addR.Round(time.Microsecond), float64(addS)/float64(addR)))
	report(b, fmt.Sprintf("| %s: p90 | %v | %v | %v | **%.2f×** |", what,
		p90(d).Round(time.Microsecond), p90(rl).Round(time.Microsecond), p90(sh).Round(time.Microsecond), float64(p90(sh))/float64(p90(rl))))
	if rl.cpu > 0 {
		cr, cs := rl.cpu/time.Duration(rl.n), sh.cpu/time.Duration(sh.n)
		report(b, fmt.Sprintf("| %s: CPU per call of the process in between | — | %v | %v | %.2f× |", what, cr, cs, float64(cs)/float64(cr)))
		per := func(s *relaySide) string {
			return fmt.Sprintf("%.2f / %.2f", float64(s.vol)/float64(s.n), float64(s.inv)/float64(s.n))
		}
		report(b, fmt.Sprintf("| %s: context switches per call, voluntary / involuntary | — | %s | %s | — |", what, per(rl), per(sh)))
	}
	if len(sides) > 3 {
		o := sides[3]
		addO := p50(o) - p50(d)
		report(b, fmt.Sprintf("| %s, the baseline build: p50 added / p90 / CPU per call | — | — | %v / %v / %v | added **%.2f×**, p90 **%.2f×** the relay's |", what,
			addO.Round(time.Microsecond), p90(o).Round(time.Microsecond), o.cpu/time.Duration(max(o.n, 1)), float64(addO)/float64(addR), float64(p90(o))/float64(p90(rl))))
	}
	b.ReportMetric(float64(addS)/float64(addR), "added-p50-shim/relay")
	b.ReportMetric(float64(p90(sh))/float64(p90(rl)), "p90-shim/relay")
}

// BenchmarkRelay: latency (3000 calls a side) and throughput (16 in
// flight, 20k calls a side) of the C server that answers at once.
func BenchmarkRelay(b *testing.B) {
	_, server := relayTools(b)
	sides := relaySides(b, server)
	report(b, "load average before: "+loadavg())
	report(b, "| figure | direct | relay | shim | shim / relay |")
	report(b, "|---|---|---|---|---|")
	latencyRounds(b, sides, 10, 300)
	reportLatency(b, sides, "one call at a time")

	const window, per = 16, 5000
	id := 1_000_000
	for r := 0; r < 4; r++ {
		for k := range sides {
			s := sides[(r+k)%len(sides)]
			start := time.Now()
			sent, got := 0, 0
			for got < per {
				for sent < per && sent-got < window {
					id++
					s.c.write(echoCall(id))
					sent++
				}
				s.c.flush()
				s.c.read(b)
				got++
			}
			s.busy += time.Since(start)
			s.nt += per
		}
	}
	rate := func(s *relaySide) float64 { return float64(s.nt) / s.busy.Seconds() }
	d, rl, sh := sides[0], sides[1], sides[2]
	report(b, fmt.Sprintf("| throughput, 16 in flight (calls/s) | %.0f | %.0f (%.2f× direct) | %.0f (%.2f× direct) | **%.2f×** |",
		rate(d), rate(rl), rate(rl)/rate(d), rate(sh), rate(sh)/rate(d), rate(sh)/rate(rl)))
	if len(sides) > 3 {
		report(b, fmt.Sprintf("| throughput, the baseline build | — | — | %.0f | **%.2f×** |", rate(sides[3]), rate(sides[3])/rate(rl)))
	}
	b.ReportMetric(rate(sh)/rate(rl), "throughput-shim/relay")

	// The true memory of a wrapped server: the shim and the guardian it
	// runs the server under (its child), after the calls above.
	mem := func(pids ...int) string {
		var rss, anon int
		for _, p := range pids {
			rss, anon = rss+rssKB(p), anon+anonKB(p)
		}
		return fmt.Sprintf("%.1f MiB VmRSS, %.1f MiB private (RssAnon)", float64(rss)/1024, float64(anon)/1024)
	}
	g := childOf(sh.pid)
	report(b, fmt.Sprintf("| memory after the calls | — | relay: %s | shim: %s; guardian: %s; together: %s | — |", mem(rl.pid), mem(sh.pid), mem(g), mem(sh.pid, g)))
	report(b, "load average after: "+loadavg())
}

// childOf is the first child of pid (Linux: each thread lists the
// children it started), -1 when there is none.
func childOf(pid int) int {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, t := range tasks {
		b, _ := os.ReadFile(t)
		if f := strings.Fields(string(b)); len(f) > 0 {
			n, _ := strconv.Atoi(f[0])
			return n
		}
	}
	return -1
}

// BenchmarkRelayLoaded: the latency workload beside one CPU-bound process
// per core, once the load average is 2 or more.
func BenchmarkRelayLoaded(b *testing.B) {
	_, server := relayTools(b)
	for range runtime.NumCPU() {
		spin := exec.Command(os.Args[0], "-test.run=^$")
		spin.Env = append(os.Environ(), "FAKE_MCP=spin")
		if err := spin.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { spin.Process.Kill(); spin.Wait() })
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		l, _ := strconv.ParseFloat(strings.Fields(loadavg())[0], 64)
		if l >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	sides := relaySides(b, server)
	report(b, fmt.Sprintf("load average before: %s (%d spinning processes beside)", loadavg(), runtime.NumCPU()))
	latencyRounds(b, sides, 10, 300)
	reportLatency(b, sides, "one call at a time, under load")
	report(b, "load average after: "+loadavg())
}

// fakeSpin burns CPU until killed: the load beside BenchmarkRelayLoaded.
func fakeSpin() {
	x := 0
	for {
		x++
	}
}

// BenchmarkBigAnswerRelay: a 16 MiB answer of 100-byte lines (a file
// read), directly, through the relay and through the shim, 21 times each,
// interleaved; medians of the whole answer, of its first byte and of the
// rest (the whole less the first byte: the server's encoding of the answer
// varies by tens of ms from call to call, the passing on after it much
// less), and the CPU time of the process in between per answer.
func BenchmarkBigAnswerRelay(b *testing.B) {
	relay, _ := relayTools(b)
	env := []string{"FAKE_MCP=bigfile"}
	bin := testenv.Binary(b)
	type side struct {
		name string
		c    *rawClient
		pid  int // the process in between (0: none)
		d    []time.Duration
		f    []time.Duration // first byte
		cpu  time.Duration
	}
	sides := []side{
		{name: "direct", c: startRaw(b, env, os.Args[0])},
		{name: "relay", c: startRaw(b, env, relay, os.Args[0])},
		{name: "shim", c: startRaw(b, append(env, "XDG_STATE_HOME="+b.TempDir()), bin, "shim", "--name", "bigfile", "--max-message", "64MiB", "--", os.Args[0])},
	}
	if old := baseline(); old != "" {
		sides = append(sides, side{name: "baseline", c: startRaw(b, append(env, "XDG_STATE_HOME="+b.TempDir()), old, "shim", "--name", "bigfile", "--max-message", "64MiB", "--", os.Args[0])})
	}
	for i := range sides[1:] {
		sides[i+1].pid = sides[i+1].c.pid
	}
	params := fmt.Sprintf(`{"name":"read","arguments":{"shape":1,"bytes":%d}}`, 16<<20)
	report(b, "load average before: "+loadavg())
	for i := range sides {
		sides[i].c.call(b, "tools/call", params) // warm up
	}
	const rounds = 21
	for r := 0; r < rounds; r++ {
		for k := range sides {
			s := &sides[(r+k)%len(sides)]
			cpu := cpuTime(s.pid)
			first, all, _ := s.c.call(b, "tools/call", params)
			s.cpu += cpuTime(s.pid) - cpu
			s.d, s.f = append(s.d, all), append(s.f, first)
		}
	}
	d, rl, sh := testenv.Median(sides[0].d), testenv.Median(sides[1].d), testenv.Median(sides[2].d)
	report(b, fmt.Sprintf("| 16 MiB answer of 100-byte lines (median of %d) | %v | %v (%.2f× direct) | %v (**%.2f×** direct) | %.2f× |", rounds,
		d.Round(100*time.Microsecond), rl.Round(100*time.Microsecond), float64(rl)/float64(d), sh.Round(100*time.Microsecond), float64(sh)/float64(d), float64(sh)/float64(rl)))
	b.ReportMetric(float64(sh)/float64(d), "shim/direct")
	report(b, fmt.Sprintf("| its first byte (median of %d) | %v | %v | %v | — |", rounds, testenv.Median(sides[0].f).Round(100*time.Microsecond),
		testenv.Median(sides[1].f).Round(100*time.Microsecond), testenv.Median(sides[2].f).Round(100*time.Microsecond)))
	rest := func(i int) time.Duration {
		var d []time.Duration
		for k := range sides[i].d {
			d = append(d, sides[i].d[k]-sides[i].f[k])
		}
		return testenv.Median(d)
	}
	report(b, fmt.Sprintf("| the rest after the first byte (median of %d) | %v | %v (%.2f× direct) | %v (%.2f× direct) | %.2f× |", rounds, rest(0).Round(100*time.Microsecond),
		rest(1).Round(100*time.Microsecond), float64(rest(1))/float64(rest(0)), rest(2).Round(100*time.Microsecond), float64(rest(2))/float64(rest(0)), float64(rest(2))/float64(rest(1))))
	report(b, fmt.Sprintf("| CPU per answer of the process in between | — | %v | %v | %.2f× |", sides[1].cpu/rounds, sides[2].cpu/rounds, float64(sides[2].cpu)/float64(sides[1].cpu)))
	if len(sides) > 3 {
		o := testenv.Median(sides[3].d)
		report(b, fmt.Sprintf("| the baseline build: whole / CPU per answer | — | — | %v (**%.2f×** direct) / %v | %.2f× |", o.Round(100*time.Microsecond), float64(o)/float64(d), sides[3].cpu/rounds, float64(o)/float64(rl)))
	}
	report(b, "load average after: "+loadavg())
}

// BenchmarkBigFileRelay: the real case of a big answer, server-filesystem
// (Node, the TypeScript SDK: the id comes last) reading a 16 MiB file of
// 100-byte lines (a 34 MB answer: the text as content and again as
// structuredContent), directly, through the relay and through the shim
// (--max-message 64MiB), five times each, interleaved; medians.
func BenchmarkBigFileRelay(b *testing.B) {
	relay, _ := relayTools(b)
	server := testenv.NPMBin(b, "mcp-server-filesystem", testenv.ServerFilesystem)
	dir := b.TempDir()
	path := filepath.Join(dir, "big.txt")
	line := append([]byte(strings.Repeat("x", 99)), '\n')
	if err := os.WriteFile(path, []byte(strings.Repeat(string(line), 16<<20/len(line))), 0o600); err != nil {
		b.Fatal(err)
	}
	sides := []struct {
		c *rawClient
		d []time.Duration
	}{
		{c: startRawAny(b, nil, server, dir)},
		{c: startRawAny(b, nil, relay, server, dir)},
		{c: startRawAny(b, []string{"XDG_STATE_HOME=" + b.TempDir()}, testenv.Binary(b), "shim", "--name", "fs", "--max-message", "64MiB", "--", server, dir)},
	}
	params := fmt.Sprintf(`{"name":"read_text_file","arguments":{"path":%q}}`, path)
	report(b, "load average before: "+loadavg())
	size := 0
	for i := range sides {
		_, _, size = sides[i].c.call(b, "tools/call", params) // warm up
	}
	const rounds = 5
	for r := 0; r < rounds; r++ {
		for k := range sides {
			s := &sides[(r+k)%len(sides)]
			_, all, _ := s.c.call(b, "tools/call", params)
			s.d = append(s.d, all)
		}
	}
	d, rl, sh := testenv.Median(sides[0].d), testenv.Median(sides[1].d), testenv.Median(sides[2].d)
	report(b, fmt.Sprintf("| server-filesystem, a 16 MiB file (a %d-byte answer; median of %d) | %v | %v (%.2f× direct) | %v (**%.2f×** direct) | %.2f× |", size, rounds,
		d.Round(time.Millisecond), rl.Round(time.Millisecond), float64(rl)/float64(d), sh.Round(time.Millisecond), float64(sh)/float64(d), float64(sh)/float64(rl)))
	b.ReportMetric(float64(sh)/float64(d), "shim/direct")
	report(b, "load average after: "+loadavg())
}
