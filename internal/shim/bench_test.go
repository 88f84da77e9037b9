//go:build unix

package shim

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/example"
	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// The benchmarks measure the real mcp-heal binary against the same server
// run directly, side by side in one run, and print one table:
//
//	go test -run XXX -bench . -benchtime 1x ./internal/shim/
//
// Each workload has a fixed size (b.N is not used: -benchtime 1x).

type pipeClient struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	bw  *bufio.Writer
	r   *jsonrpc.Reader
}

func startPipe(tb testing.TB, env []string, args ...string) *pipeClient {
	tb.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = io.Discard
	in, out := testenv.StartPiped(tb, cmd)
	c := &pipeClient{cmd: cmd, in: in, bw: bufio.NewWriterSize(in, 256<<10), r: jsonrpc.NewReader(out)}
	tb.Cleanup(func() { in.Close(); cmd.Wait() })
	return c
}

func (c *pipeClient) write(line []byte) {
	c.bw.Write(line)
	c.bw.WriteByte('\n')
}

func (c *pipeClient) flush() { c.bw.Flush() }

func (c *pipeClient) read(tb testing.TB) []byte {
	l, err := c.r.Next()
	if err != nil {
		tb.Fatalf("read: %v", err)
	}
	return l
}

func (c *pipeClient) roundTrip(tb testing.TB, line []byte) []byte {
	c.write(line)
	c.flush()
	return c.read(tb)
}

func (c *pipeClient) handshake(tb testing.TB) {
	c.roundTrip(tb, jsonrpc.NewRequest([]byte("0"), "initialize", []byte(initParams)))
	c.write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	c.roundTrip(tb, jsonrpc.NewRequest([]byte("1"), "tools/list", nil))
}

var benchEnv = []string{serverEnv(example.Options{Era: example.EraHandshake}), "GORACE=atexit_sleep_ms=0"}

// benchShim starts `mcp-heal shim -- <fake server or cmd>` with its own
// state dir and returns the client and the state dir.
func benchShim(b *testing.B, cmd ...string) (*pipeClient, string) {
	return benchShimFlags(b, nil, cmd...)
}

func benchShimFlags(b *testing.B, flags []string, cmd ...string) (*pipeClient, string) {
	bin := testenv.Binary(b)
	dir := b.TempDir()
	if cmd == nil {
		cmd = []string{os.Args[0]}
	}
	args := append(append([]string{bin, "shim", "--name", "bench"}, flags...), "--")
	args = append(args, cmd...)
	return startPipe(b, append(benchEnv, "XDG_STATE_HOME="+dir), args...), dir
}

func echoCall(id int) []byte {
	return []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`)
}

var figures []string

func report(b *testing.B, row string) {
	figures = append(figures, row)
	fmt.Fprintln(os.Stderr, row)
	b.Log(row)
}

// roundTrips times 10 rounds of per round trips of call (given the next
// id, counted on in *id) on direct and then on shim, interleaved so that
// load on the machine hits both alike, and returns each side's times.
func roundTrips(b *testing.B, direct, shim *pipeClient, per int, id *int, call func(id int) []byte) (dd, ds []time.Duration) {
	for round := 0; round < 10; round++ {
		for _, side := range []struct {
			c   *pipeClient
			out *[]time.Duration
		}{{direct, &dd}, {shim, &ds}} {
			for i := 0; i < per; i++ {
				*id++
				t := time.Now()
				side.c.roundTrip(b, call(*id))
				*side.out = append(*side.out, time.Since(t))
			}
		}
	}
	return dd, ds
}

func BenchmarkRoundTrip(b *testing.B) {
	direct := startPipe(b, benchEnv, os.Args[0])
	direct.handshake(b)
	shim, _ := benchShim(b)
	shim.handshake(b)
	id := 10
	dd, ds := roundTrips(b, direct, shim, 300, &id, echoCall)
	md, ms := testenv.Median(dd), testenv.Median(ds)
	b.ReportMetric(float64(md.Microseconds()), "direct-µs")
	b.ReportMetric(float64(ms.Microseconds()), "shim-µs")
	b.ReportMetric(float64(ms)/float64(md), "ratio")
	report(b, fmt.Sprintf("| round-trip latency, tools/call echo (median of 3000) | %v | %v | %.2f× |", md.Round(time.Microsecond), ms.Round(time.Microsecond), float64(ms)/float64(md)))

	// The same with a tool that works for 1 ms, closer to a real call.
	dd, ds = roundTrips(b, direct, shim, 50, &id, func(id int) []byte {
		return []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"slow","arguments":{"ms":1}}}`)
	})
	md, ms = testenv.Median(dd), testenv.Median(ds)
	report(b, fmt.Sprintf("| round-trip latency, tools/call working 1 ms (median of 500) | %v | %v | %.2f× |", md.Round(time.Microsecond), ms.Round(time.Microsecond), float64(ms)/float64(md)))
}

// BenchmarkThroughput4K pipes 100k 4 KiB notifications through cat (it
// echoes each back, so every message crosses the shim twice) directly and
// through the shim.
func BenchmarkThroughput4K(b *testing.B) {
	const n = 100_000
	msg := []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"` + strings.Repeat("z", 4096-80) + `"}}`)
	run := func(c *pipeClient) time.Duration {
		start := time.Now()
		go func() {
			for i := 0; i < n; i++ {
				c.write(msg)
			}
			c.flush()
		}()
		for i := 0; i < n; i++ {
			if l := c.read(b); len(l) != len(msg) {
				b.Fatalf("message %d: %d bytes, want %d", i, len(l), len(msg))
			}
		}
		return time.Since(start)
	}
	direct := startPipe(b, nil, "cat")
	shim, _ := benchShim(b, "cat")
	td := run(direct)
	ts := run(shim)
	rd, rs := float64(n)/td.Seconds(), float64(n)/ts.Seconds()
	b.ReportMetric(rd, "direct-msg/s")
	b.ReportMetric(rs, "shim-msg/s")
	report(b, fmt.Sprintf("| throughput, 4 KiB messages, 100k pipelined through cat | %.0f msg/s | %.0f msg/s | %.2f× slower |", rd, rs, rd/rs))
}

// BenchmarkOneWay4K: 100k 4 KiB notifications in one direction only,
// server -> client (a flood) and client -> server (a sink), direct and
// through the shim.
func BenchmarkOneWay4K(b *testing.B) {
	const n = 100_000
	env := append(benchEnv, "FAKE_N="+strconv.Itoa(n))
	flood := func(c *pipeClient) time.Duration {
		start := time.Now()
		c.write([]byte(`{"jsonrpc":"2.0","method":"go"}`))
		c.flush()
		for i := 0; i < n; i++ {
			c.read(b)
		}
		return time.Since(start)
	}
	sink := func(c *pipeClient) time.Duration {
		start := time.Now()
		go func() {
			for i := 0; i < n; i++ {
				c.write(floodMsg)
			}
			c.flush()
		}()
		c.read(b)
		return time.Since(start)
	}
	for _, tt := range []struct {
		name string
		mode string
		run  func(*pipeClient) time.Duration
	}{{"server -> client", "flood", flood}, {"client -> server", "sink", sink}} {
		e := append(env, "FAKE_MCP="+tt.mode)
		direct := startPipe(b, e, os.Args[0])
		bin := testenv.Binary(b)
		shim := startPipe(b, append(e, "XDG_STATE_HOME="+b.TempDir()), bin, "shim", "--name", "bench", "--", os.Args[0])
		td, ts := tt.run(direct), tt.run(shim)
		rd, rs := float64(n)/td.Seconds(), float64(n)/ts.Seconds()
		report(b, fmt.Sprintf("| throughput, 4 KiB messages one way (%s), 100k | %.0f msg/s | %.0f msg/s | %.2f× slower |", tt.name, rd, rs, rd/rs))
	}
}

func BenchmarkMessage64MiB(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + strings.Repeat("q", 64<<20) + `"}}`)
	run := func(c *pipeClient) time.Duration {
		// A watchdog instead of a hang: kill the process, the read fails.
		wd := time.AfterFunc(2*time.Minute, func() { c.cmd.Process.Kill() })
		defer wd.Stop()
		var d []time.Duration
		for i := 0; i < 3; i++ {
			start := time.Now()
			go func() { c.write(msg); c.flush() }()
			if l := c.read(b); len(l) != len(msg) {
				b.Fatalf("got %d bytes, want %d", len(l), len(msg))
			}
			d = append(d, time.Since(start))
		}
		return testenv.Median(d)
	}
	direct := startPipe(b, nil, "cat")
	shim, _ := benchShimFlags(b, []string{"--max-message", "128MiB"}, "cat")
	td, ts := run(direct), run(shim)
	b.ReportMetric(float64(td.Milliseconds()), "direct-ms")
	b.ReportMetric(float64(ts.Milliseconds()), "shim-ms")
	report(b, fmt.Sprintf("| one 64 MiB message, there and back through cat (median of 3) | %v | %v | %.2f× |", td.Round(time.Millisecond), ts.Round(time.Millisecond), float64(ts)/float64(td)))
}

// BenchmarkFirstCallAfterKill: after kill -9 of the child and its cold
// start, the first call through the shim against a warm call.
//
// Twenty kills in a few seconds are a crash loop by the shim's own rules
// (quick failures back off, then "failed"); the flags lift that so the
// figure is about the call, not the crash-loop policy.
func BenchmarkFirstCallAfterKill(b *testing.B) {
	c, dir := benchShimFlags(b, []string{"--max-failures", "1000", "--backoff-max", "1ms"})
	testenv.UseStateDir(b, dir) // where the shim writes its record
	c.handshake(b)
	var warm []time.Duration
	id := 10
	for i := 0; i < 300; i++ {
		id++
		t := time.Now()
		c.roundTrip(b, echoCall(id))
		warm = append(warm, time.Since(t))
	}
	// waitChild polls the state record until a running child other than
	// old is there (the record is written asynchronously).
	waitChild := func(old int) int {
		deadline := time.Now().Add(10 * time.Second)
		for {
			r, err := state.Read(c.cmd.Process.Pid)
			if err == nil && r.ChildPID > 0 && r.ChildPID != old && r.State == state.Running {
				return r.ChildPID
			}
			if time.Now().After(deadline) {
				b.Fatal("no running child in the state record")
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	var first, recover []time.Duration
	child := waitChild(0)
	for k := 0; k < 10; k++ {
		killed := time.Now()
		syscall.Kill(child, syscall.SIGKILL)
		// Time to recover: the first call right after the kill.
		id++
		c.roundTrip(b, echoCall(id))
		recover = append(recover, time.Since(killed))
		child = waitChild(child)
		// Then a fresh kill, the cold start left to finish, and one call.
		syscall.Kill(child, syscall.SIGKILL)
		child = waitChild(child)
		time.Sleep(300 * time.Millisecond)
		id++
		t := time.Now()
		c.roundTrip(b, echoCall(id))
		first = append(first, time.Since(t))
	}
	// The same server without the shim: a fresh process's first call
	// after its handshake, against its warm calls. This is the server's own
	// cold-call cost, which the shim cannot remove.
	var dFirst, dWarm []time.Duration
	for k := 0; k < 10; k++ {
		d := startPipe(b, benchEnv, os.Args[0])
		d.handshake(b)
		time.Sleep(300 * time.Millisecond)
		t := time.Now()
		d.roundTrip(b, echoCall(1))
		dFirst = append(dFirst, time.Since(t))
		for i := 0; i < 30; i++ {
			t := time.Now()
			d.roundTrip(b, echoCall(2+i))
			dWarm = append(dWarm, time.Since(t))
		}
		d.in.Close()
		d.cmd.Wait()
	}
	b.Logf("first after respawn: %v; direct first: %v", first, dFirst)
	mw, mf, mr := testenv.Median(warm), testenv.Median(first), testenv.Median(recover)
	dw, df := testenv.Median(dWarm), testenv.Median(dFirst)
	b.ReportMetric(float64(mw.Microseconds()), "warm-µs")
	b.ReportMetric(float64(mf.Microseconds()), "first-after-kill-µs")
	report(b, fmt.Sprintf("| first call to a fresh server process vs a warm call (median of 10 / 300): first/warm | %v / %v = %.2f× (server started fresh, no shim) | %v / %v = %.2f× (after kill -9 and respawn) | %.2f× |",
		df.Round(time.Microsecond), dw.Round(time.Microsecond), float64(df)/float64(dw),
		mf.Round(time.Microsecond), mw.Round(time.Microsecond), float64(mf)/float64(mw),
		(float64(mf)/float64(mw))/(float64(df)/float64(dw))))
	report(b, fmt.Sprintf("| call made right after kill -9 (respawn + replay + call, median of 10) | — | %v | — |", mr.Round(time.Millisecond)))
}

func rssKB(pid int) int { return statusKB(pid, "VmRSS") }

// anonKB is the private (anonymous) part of the resident set: the rest of
// VmRSS is the binary's file-backed pages, shared by every shim.
func anonKB(pid int) int { return statusKB(pid, "RssAnon") }

func statusKB(pid int, field string) int {
	kb, err := testenv.StatusKB(pid, field)
	if err != nil {
		return -1
	}
	return kb
}

// BenchmarkRSS100k: the shim's resident memory before and after 100k calls
// (pipelined, 32 in flight).
func BenchmarkRSS100k(b *testing.B) {
	c, _ := benchShim(b)
	c.handshake(b)
	pid := c.cmd.Process.Pid
	calls := func(n, from int) {
		const window = 32
		sent, got := 0, 0
		for got < n {
			for sent < n && sent-got < window {
				c.write(echoCall(from + sent))
				sent++
			}
			c.flush()
			c.read(b)
			got++
		}
	}
	calls(1000, 10)
	before, beforeAnon := rssKB(pid), anonKB(pid)
	calls(50_000, 100_000)
	mid, midAnon := rssKB(pid), anonKB(pid)
	calls(50_000, 200_000)
	after, afterAnon := rssKB(pid), anonKB(pid)
	b.ReportMetric(float64(before)/1024, "rss-before-MB")
	b.ReportMetric(float64(after)/1024, "rss-after-MB")
	report(b, fmt.Sprintf("| shim RSS before / after 50k / after 100k calls | %.1f MB | %.1f MB / %.1f MB | %+.1f MB |", float64(before)/1024, float64(mid)/1024, float64(after)/1024, float64(after-before)/1024))
	report(b, fmt.Sprintf("| shim private memory (RssAnon) before / after 50k / after 100k calls | %.1f MB | %.1f MB / %.1f MB | %+.1f MB |", float64(beforeAnon)/1024, float64(midAnon)/1024, float64(afterAnon)/1024, float64(afterAnon-beforeAnon)/1024))
}

// floodMsg is the 4 KiB notification of the one-way throughput benchmarks.
var floodMsg = []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"` + strings.Repeat("z", 4096-80) + `"}}`)

// fakeFlood writes FAKE_N notifications as fast as it can once it reads
// its first line, then waits for stdin to close.
func fakeFlood() {
	n, _ := strconv.Atoi(os.Getenv("FAKE_N"))
	r := jsonrpc.NewReader(os.Stdin)
	r.Next()
	w := bufio.NewWriterSize(os.Stdout, 256<<10)
	for i := 0; i < n; i++ {
		w.Write(floodMsg)
		w.WriteByte('\n')
	}
	w.Flush()
	io.Copy(io.Discard, os.Stdin)
}

// fakeSink reads FAKE_N lines, then writes one notification.
func fakeSink() {
	n, _ := strconv.Atoi(os.Getenv("FAKE_N"))
	r := jsonrpc.NewReader(os.Stdin)
	for i := 0; i < n; i++ {
		if _, err := r.Next(); err != nil {
			return
		}
	}
	os.Stdout.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/done"}` + "\n"))
	io.Copy(io.Discard, os.Stdin)
}
