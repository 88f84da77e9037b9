//go:build linux

package interop

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// The third-party suite: servers nobody here wrote, each run directly and
// behind `mcp-heal shim` (stdio) or `mcp-heal shim --url` (HTTP, SSE),
// driven by the official TypeScript SDK client (testdata/client.cjs). The
// run writes the server x scenario table into docs/third-party.md.

// The table's columns, in order.
const (
	colSame       = "same answers"
	colDirectKill = "direct client, server killed"
	colKillIdle   = "kill between calls"
	colKillRO     = "kill during a read-only call"
	colKillMut    = "kill during a mutating call"
	colRestart    = "restart through --url"
	colKeep       = "--keep across shim kills"
	colBigFile    = "16 MiB file"
	thirdpartyMD  = "third-party.md"
)

var tpColumns = []string{colSame, colDirectKill, colKillIdle, colKillRO, colKillMut, colRestart, colKeep, colBigFile}

// tpServer is one row: a server and the calls the scenarios make.
type tpServer struct {
	name string
	// stdio returns a fresh server's command line and environment (a
	// session of its own: fresh state); remote a fresh HTTP server.
	stdio     func(t *testing.T) ([]string, map[string]string)
	remote    func(t *testing.T) *remote
	transport string // remote: "http" or "sse"

	script     []map[string]any // compared direct vs through the shim
	readOnly   map[string]any   // safe to re-send: killed in flight
	mutating   map[string]any   // not safe to re-send: killed in flight
	noMutating string           // why there is no mutating call
	volatile   []*regexp.Regexp // what differs from run to run
	// extra runs the server's own scenarios (the keeper, the big file).
	extra func(t *testing.T, x *tpRun)
}

func call(name string, args map[string]any) map[string]any {
	return map[string]any{"op": "call", "name": name, "args": args}
}

func request(method string) map[string]any {
	return map[string]any{"op": "request", "method": method}
}

var listTools = map[string]any{"op": "listTools"}

// opName names an op for the table.
func opName(op map[string]any) string {
	switch op["op"] {
	case "call":
		return fmt.Sprint(op["name"])
	case "request":
		return fmt.Sprint(op["method"])
	case "listTools":
		return "tools/list"
	}
	return fmt.Sprint(op["op"])
}

// tpResults is the table being filled: row -> column -> cell.
type tpResults struct {
	mu    sync.Mutex
	cells map[string]map[string]string
}

func (r *tpResults) set(row, col, cell string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cells[row] == nil {
		r.cells[row] = map[string]string{}
	}
	r.cells[row][col] = cell
}

// tpRun is one server's run: its sessions and its row.
type tpRun struct {
	t       *testing.T
	srv     *tpServer
	res     *tpResults
	clients []*tsClient
}

// scenario runs f as a subtest and records its cell: "✓ " and what f
// returned, or "✗" when it failed (the log says why).
func (x *tpRun) scenario(col string, f func(t *testing.T) string) {
	var detail string
	ok := x.t.Run(strings.ReplaceAll(col, " ", "_"), func(t *testing.T) {
		// The sessions belong to the server's test; their failures
		// are this scenario's.
		for _, c := range x.clients {
			c.t = t
		}
		defer func() {
			for _, c := range x.clients {
				c.t = x.t
			}
		}()
		detail = f(t)
	})
	if ok {
		x.res.set(x.srv.name, col, "✓ "+detail)
	} else {
		x.res.set(x.srv.name, col, "✗ failed (see the test log)")
	}
}

// tpSession is a client connected to the server directly or through a
// shim.
type tpSession struct {
	c      *tsClient
	pid    int     // the process the client spawned (stdio): server or shim
	xdg    string  // the shim's XDG_STATE_HOME
	remote *remote // the HTTP server, when remote
}

// direct connects a client straight to a fresh server.
func (x *tpRun) direct() *tpSession {
	t := x.t
	s := &tpSession{}
	if x.srv.remote != nil {
		s.remote = x.srv.remote(t)
		s.c = startTSRemoteClient(t, s.remote.url(), x.srv.transport)
	} else {
		cmd, env := x.srv.stdio(t)
		s.c = startTSClient(t, cmd, env)
	}
	x.clients = append(x.clients, s.c)
	s.pid = s.c.connect()
	return s
}

// shim connects a client to a fresh server through `mcp-heal shim`.
func (x *tpRun) shim() *tpSession {
	t := x.t
	s := &tpSession{xdg: t.TempDir()}
	env := map[string]string{"XDG_STATE_HOME": s.xdg}
	var cmd []string
	if x.srv.remote != nil {
		s.remote = x.srv.remote(t)
		cmd = []string{testenv.Binary(t), "shim", "--name", x.srv.name, "--url", s.remote.url(), "--transport", x.srv.transport}
	} else {
		var senv map[string]string
		cmd, senv = x.srv.stdio(t)
		cmd = shimmed(t, x.srv.name, cmd...)
		for k, v := range senv {
			env[k] = v
		}
	}
	s.c = startTSClient(t, cmd, env)
	x.clients = append(x.clients, s.c)
	s.pid = s.c.connect()
	return s
}

// do runs one op of a script.
func (s *tpSession) do(op map[string]any) reply {
	cp := map[string]any{}
	for k, v := range op {
		cp[k] = v
	}
	return s.c.do(cp)
}

// serverPID is the pid of the stdio server behind the shim, other than not.
func (s *tpSession) serverPID(t *testing.T, not int) int {
	return shimChild(t, s.xdg, s.pid, not)
}

// killDuring stops the server, sends op, waits until the request has
// reached the server, kills it (a remote server is started again on its
// port) and returns the reply.
func (s *tpSession) killDuring(t *testing.T, op map[string]any) reply {
	t.Helper()
	cp := map[string]any{"timeoutMs": 90000}
	for k, v := range op {
		cp[k] = v
	}
	if s.remote != nil {
		s.remote.signal(syscall.SIGSTOP)
		ch := s.c.start(cp)
		waitTCPPending(t, s.remote.port)
		s.remote.restart(syscall.SIGKILL)
		return s.c.wait(ch, 100*time.Second)
	}
	child := s.serverPID(t, 0)
	if err := syscall.Kill(child, syscall.SIGSTOP); err != nil {
		t.Fatalf("SIGSTOP %d: %v", child, err)
	}
	ch := s.c.start(cp)
	if waitStdinPending(t, child) {
		kill9(t, child)
	} else {
		t.Logf("server %d was gone before the test killed it: the shim killed it, stopped, with the call in flight", child)
	}
	r := s.c.wait(ch, 100*time.Second)
	s.serverPID(t, child)
	return r
}

// TestThirdParty runs every third-party server directly and through the
// shim: the same answers, kills between and during calls, restarts of
// the remote ones, the keeper and the big file; then it writes the table
// into docs/third-party.md.
func TestThirdParty(t *testing.T) {
	fullSuiteOnly(t)
	servers := thirdPartyServers(t)
	res := &tpResults{cells: map[string]map[string]string{}}
	started := time.Now()
	sem := make(chan struct{}, 3)
	// The longest rows first: Playwright (a browser per session, the
	// keeper), then the remote ones (a server started again per kill).
	order := append([]*tpServer(nil), servers...)
	sort.SliceStable(order, func(i, j int) bool { return tpWeight(order[i]) > tpWeight(order[j]) })
	t.Run("servers", func(t *testing.T) {
		for _, srv := range order {
			t.Run(srv.name, func(t *testing.T) {
				t.Parallel()
				sem <- struct{}{}
				defer func() { <-sem }()
				runThirdParty(t, srv, res)
			})
		}
	})
	elapsed := time.Since(started).Round(time.Second)
	table := tpTable(servers, res)
	t.Logf("third-party servers (%v):\n%s", elapsed, table)
	res.mu.Lock()
	ran := len(res.cells)
	res.mu.Unlock()
	if ran < len(servers) {
		t.Logf("docs/%s not written: %d of %d servers ran", thirdpartyMD, ran, len(servers))
		return
	}
	doc := filepath.Join(testenv.ModuleRoot(t), "docs", thirdpartyMD)
	body := fmt.Sprintf("\nMeasured %s by `go test -race -count=1 -run TestThirdParty ./internal/interop` (%v, %d cores, load average %s as it ended).\n\n%s",
		time.Now().UTC().Format("2006-01-02"), elapsed, numCPU(), loadAvg(), table)
	if err := replaceSection(doc, tpBegin, tpEnd, body); err != nil {
		t.Errorf("write the table into docs/%s: %v", thirdpartyMD, err)
	}
}

// tpWeight ranks a row by how long it runs.
func tpWeight(s *tpServer) int {
	switch {
	case strings.HasPrefix(s.name, "@playwright/mcp"):
		return 2
	case s.remote != nil:
		return 1
	}
	return 0
}

// docs/third-party.md's generated table stands between these.
const (
	tpBegin = "<!-- BEGIN third-party -->\n"
	tpEnd   = "<!-- END third-party -->\n"
)

// runThirdParty runs one server's scenarios.
func runThirdParty(t *testing.T, srv *tpServer, res *tpResults) {
	x := &tpRun{t: t, srv: srv, res: res}
	direct := x.direct()
	shim := x.shim()

	x.scenario(colSame, func(t *testing.T) string {
		for _, op := range srv.script {
			d, s := direct.do(op), shim.do(op)
			if !d.OK {
				t.Errorf("%s directly: %s", opName(op), d)
			}
			if a, b := normalize(answer(d), srv.volatile), normalize(answer(s), srv.volatile); a != b {
				t.Errorf("%s: directly and through the shim the answers differ:\ndirect: %s\nshim:   %s", opName(op), short(a, 2000), short(b, 2000))
			}
		}
		return fmt.Sprintf("%d calls", len(srv.script))
	})

	x.scenario(colDirectKill, func(t *testing.T) string {
		op := map[string]any{"timeoutMs": 15000}
		for k, v := range srv.script[len(srv.script)-1] {
			op[k] = v
		}
		if direct.remote != nil {
			direct.remote.restart(syscall.SIGKILL)
		} else {
			kill9(t, direct.pid)
			direct.c.waitEvent("closed", 10*time.Second)
		}
		r := direct.c.wait(direct.c.start(op), 30*time.Second)
		if r.OK {
			return "the next call succeeds"
		}
		return "the next call: " + short(answer(r), 60)
	})

	x.scenario(colKillIdle, func(t *testing.T) string {
		op := srv.script[len(srv.script)-1]
		for i := 0; i < 2; i++ {
			if shim.remote != nil {
				shim.remote.restart(syscall.SIGKILL)
			} else {
				child := shim.serverPID(t, 0)
				kill9(t, child)
				// Wait for the shim to see the death, so the call
				// below meets a restart rather than a queue.
				shim.serverPID(t, child)
			}
			if r := shim.do(op); !r.OK {
				t.Fatalf("%s after kill -9: %s", opName(op), r)
			}
		}
		return "2 kills, " + opName(op) + " succeeds"
	})

	x.scenario(colKillRO, func(t *testing.T) string {
		r := shim.killDuring(t, srv.readOnly)
		if !r.OK {
			t.Fatalf("read-only %s killed in flight: %s, want it re-sent and answered", opName(srv.readOnly), r)
		}
		return "re-sent: " + opName(srv.readOnly)
	})

	if srv.mutating != nil {
		x.scenario(colKillMut, func(t *testing.T) string {
			start := time.Now()
			r := shim.killDuring(t, srv.mutating)
			if r.OK || r.Error == nil {
				t.Fatalf("mutating %s killed in flight: %s, want an error saying it was not re-sent", opName(srv.mutating), r)
			}
			if !notResent(r.Error.Message) {
				t.Errorf("mutating %s killed in flight: %q does not say the call may have taken effect", opName(srv.mutating), r.Error.Message)
			}
			t.Logf("mutating %s killed in flight: %v later: %s", opName(srv.mutating), time.Since(start).Round(time.Millisecond), r.Error.Message)
			if r := shim.do(srv.script[len(srv.script)-1]); !r.OK {
				t.Errorf("the call after: %s", r)
			}
			return "not re-sent, error: " + opName(srv.mutating)
		})
	} else {
		res.set(srv.name, colKillMut, "— "+srv.noMutating)
	}

	if shim.remote != nil {
		x.scenario(colRestart, func(t *testing.T) string {
			shim.remote.restart(syscall.SIGTERM)
			op := srv.script[len(srv.script)-1]
			if r := shim.do(op); !r.OK {
				t.Fatalf("%s after the server restarted: %s", opName(op), r)
			}
			return "SIGTERM, started again: " + opName(op) + " succeeds"
		})
	}
	if srv.extra != nil {
		srv.extra(t, x)
	}
}

// tpTable renders the results as a markdown table.
func tpTable(servers []*tpServer, res *tpResults) string {
	res.mu.Lock()
	defer res.mu.Unlock()
	var b strings.Builder
	b.WriteString("| server |")
	for _, c := range tpColumns {
		b.WriteString(" " + c + " |")
	}
	b.WriteString("\n|---|")
	for range tpColumns {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, s := range servers {
		b.WriteString("| " + s.name + " |")
		for _, c := range tpColumns {
			cell := res.cells[s.name][c]
			if cell == "" {
				cell = "—"
			}
			b.WriteString(" " + strings.ReplaceAll(cell, "|", `\|`) + " |")
		}
		b.WriteString("\n")
	}
	return b.String()
}

func numCPU() int {
	b, _ := os.ReadFile("/proc/cpuinfo")
	return strings.Count(string(b), "\nprocessor") + 1
}

func loadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}

// chromium returns Debian's chromium, which .ci/run installs.
func chromium(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium is required for @playwright/mcp (Debian: apt-get install chromium; .ci/run installs it): %v", err)
	}
	return p
}

// thirdPartyServers installs the servers and describes each row.
func thirdPartyServers(t *testing.T) []*tpServer {
	t.Helper()
	prefix := testenv.NPM(t, npmThirdPartyPkgs...)
	bin := func(name string) string { return filepath.Join(prefix, "node_modules", ".bin", name) }
	node := testenv.Node(t)
	everything := tsEverything(t)
	memory := testenv.NPMBin(t, "mcp-server-memory", npmClientPkgs...)
	mcpGo := testenv.GoInstall(t, testenv.MCPGoEverything)
	browser := chromium(t)

	everythingScript := []map[string]any{listTools, request("resources/list"), request("prompts/list"),
		call("get-sum", map[string]any{"a": 2, "b": 3}), call("get-tiny-image", nil), call("echo", map[string]any{"message": "third-party"})}
	everythingRemote := func(mode, path string) func(t *testing.T) *remote {
		return func(t *testing.T) *remote {
			return newRemote(t, "server-everything "+mode, path, func(port int) *exec.Cmd {
				cmd := exec.Command(node, everything, mode)
				cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
				return cmd
			})
		}
	}
	everythingRow := func(name string) *tpServer {
		return &tpServer{name: name, script: everythingScript,
			readOnly: call("echo", map[string]any{"message": "re-sent"}),
			mutating: call("toggle-simulated-logging", nil)}
	}
	stdioEverything := everythingRow("server-everything (stdio)")
	stdioEverything.stdio = func(t *testing.T) ([]string, map[string]string) { return []string{everything}, nil }
	httpEverything := everythingRow("server-everything (Streamable HTTP)")
	httpEverything.remote, httpEverything.transport = everythingRemote("streamableHttp", "/mcp"), "http"
	sseEverything := everythingRow("server-everything (SSE)")
	sseEverything.remote, sseEverything.transport = everythingRemote("sse", "/sse"), "sse"

	memoryRow := &tpServer{name: "server-memory",
		stdio: func(t *testing.T) ([]string, map[string]string) {
			return []string{memory}, map[string]string{"MEMORY_FILE_PATH": filepath.Join(t.TempDir(), "memory.jsonl")}
		},
		script: []map[string]any{listTools,
			call("create_entities", map[string]any{"entities": []map[string]any{{"name": "mcp-heal", "entityType": "project", "observations": []string{"third-party"}}}}),
			call("search_nodes", map[string]any{"query": "mcp"}), call("read_graph", nil)},
		readOnly: call("read_graph", nil),
		mutating: call("add_observations", map[string]any{"observations": []map[string]any{{"entityName": "mcp-heal", "contents": []string{"killed in flight"}}}}),
	}

	fsRow := filesystemRow(t, bin("mcp-server-filesystem"))

	thinking := &tpServer{name: "server-sequential-thinking",
		stdio: func(t *testing.T) ([]string, map[string]string) {
			return []string{bin("mcp-server-sequential-thinking")}, map[string]string{"DISABLE_THOUGHT_LOGGING": "true"}
		},
		script: []map[string]any{listTools,
			call("sequentialthinking", map[string]any{"thought": "first", "nextThoughtNeeded": true, "thoughtNumber": 1, "totalThoughts": 2}),
			call("sequentialthinking", map[string]any{"thought": "second", "nextThoughtNeeded": false, "thoughtNumber": 2, "totalThoughts": 2})},
		readOnly:   call("sequentialthinking", map[string]any{"thought": "again", "nextThoughtNeeded": false, "thoughtNumber": 3, "totalThoughts": 3}),
		noMutating: "its one tool is marked read-only",
	}

	pwRow := playwrightRow(t, bin("playwright-mcp"), browser)

	fastmcp := &tpServer{name: "FastMCP (Streamable HTTP)", transport: "http",
		remote: func(t *testing.T) *remote {
			script := filepath.Join(testenv.ModuleRoot(t), "internal", "interop", "testdata", "fastmcp-server.cjs")
			return newRemote(t, "fastmcp", "/mcp", func(port int) *exec.Cmd {
				cmd := exec.Command(node, script)
				cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port), "NODE_PATH="+filepath.Join(prefix, "node_modules"))
				return cmd
			})
		},
		script:   []map[string]any{listTools, call("add", map[string]any{"a": 2, "b": 3}), call("increment", nil)},
		readOnly: call("add", map[string]any{"a": 1, "b": 1}),
		mutating: call("increment", nil),
	}

	goRow := &tpServer{name: "mcp-go everything (stdio)",
		stdio: func(t *testing.T) ([]string, map[string]string) { return []string{mcpGo}, nil },
		script: []map[string]any{listTools, request("resources/list"), request("prompts/list"),
			call("add", map[string]any{"a": 2, "b": 3}), call("echo", map[string]any{"message": "third-party"})},
		// Its tools carry no annotations: tools/list is what is safe to
		// re-send, and every tool call is not.
		readOnly: listTools,
		mutating: call("add", map[string]any{"a": 1, "b": 1}),
	}
	return []*tpServer{stdioEverything, httpEverything, sseEverything, memoryRow, fsRow, thinking, pwRow, fastmcp, goRow}
}
