//go:build unix

package interop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/procinfo"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// The fixtures the tests run and the processes in front of them, each
// started, found ready and stopped one way, here: the Go SDK's conformance
// everything-server and server-everything (on stdio: a command line; over
// Streamable HTTP: a URL once it answers), supergateway (a URL once it
// answers its own health path), and any stdio process a test talks to
// (a shim, the bridge, the node client).

// goFixture returns the Go SDK's conformance everything-server; with no
// flags it serves stdio.
func goFixture(t *testing.T) string {
	t.Helper()
	return testenv.GoInstall(t, testenv.GoSDKEverything)
}

// tsEverything returns @modelcontextprotocol/server-everything; with no
// argument it serves stdio.
func tsEverything(t *testing.T) string {
	t.Helper()
	return testenv.NPMBin(t, "mcp-server-everything", npmClientPkgs...)
}

// startGoFixtureHTTP serves the Go fixture over Streamable HTTP (stateless
// or not) and returns its URL once it answers.
func startGoFixtureHTTP(t *testing.T, stateful bool) string {
	t.Helper()
	fixture := goFixture(t)
	return startHTTPServer(t, "go-sdk fixture", func(port int) *exec.Cmd {
		return exec.Command(fixture, "-http=127.0.0.1:"+strconv.Itoa(port), "-stateless="+strconv.FormatBool(!stateful))
	})
}

// startEverythingHTTP serves server-everything over its Streamable HTTP
// transport and returns its URL once it answers. That transport is
// stateful only: it always hands out an Mcp-Session-Id, and answers a
// request without one that is not an initialize 400, "Server not
// initialized"; PORT is its one setting.
func startEverythingHTTP(t *testing.T, node string) string {
	t.Helper()
	everything := tsEverything(t)
	return startHTTPServer(t, "server-everything", func(port int) *exec.Cmd {
		cmd := exec.Command(node, everything, "streamableHttp")
		cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
		return cmd
	})
}

// startHTTPServer starts the server command made for a free port and
// returns its /mcp URL once it answers there. A port taken by another
// test's server before this one bound it makes the server exit: then it
// starts again on another port.
func startHTTPServer(t *testing.T, name string, command func(port int) *exec.Cmd) string {
	t.Helper()
	for attempt := 0; attempt < 3; attempt++ {
		port := testenv.FreePort(t)
		cmd := command(port)
		cmd.Stdout = &testWriter{t: t, prefix: name + " stdout: "}
		cmd.Stderr = &testWriter{t: t, prefix: name + " stderr: "}
		if err := cmd.Start(); err != nil {
			t.Fatalf("start %s: %v", name, err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		url := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
		client := &http.Client{Timeout: time.Second}
		deadline := time.Now().Add(60 * time.Second)
		up := false
		for !up && time.Now().Before(deadline) {
			select {
			case <-exited:
				deadline = time.Now()
				continue
			default:
			}
			if resp, err := client.Get(url); err == nil {
				resp.Body.Close()
				up = true
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		// Bound by this server, not another test's: it is still running
		// a moment after the port answered.
		if up {
			select {
			case <-exited:
				up = false
			case <-time.After(200 * time.Millisecond):
			}
		}
		if up {
			t.Cleanup(func() { cmd.Process.Kill(); <-exited })
			return url
		}
		cmd.Process.Kill()
		<-exited
	}
	t.Fatalf("%s's HTTP server did not come up", name)
	return ""
}

// startRelay starts supergateway in front of the stdio command, stateful
// (--stateful: one server command per session) or not (one per request),
// and returns its /mcp URL once it answers. Its server processes inherit
// XDG_STATE_HOME=xdg, so shims write their state records there.
func startRelay(t *testing.T, node, supergateway, stdio, xdg string, stateful bool) string {
	t.Helper()
	var flags []string
	if stateful {
		flags = append(flags, "--stateful")
	}
	// A port picked by freePort can be taken by another test's server
	// before supergateway binds it (the package's tests run in parallel);
	// then supergateway exits and a bare TCP dial would find the other
	// server. So readiness is a health path only this relay answers, and a
	// relay that exited is started again on another port.
	var lastErr string
	for attempt := 0; attempt < 3; attempt++ {
		port, errText, ok := startRelayOnce(t, node, supergateway, stdio, xdg, flags)
		if ok {
			return fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
		}
		lastErr = errText
	}
	t.Fatalf("supergateway did not come up: %s", lastErr)
	return ""
}

// startRelayOnce starts one supergateway with flags and waits until it
// answers its own health path; on failure it stops it and says why.
func startRelayOnce(t *testing.T, node, supergateway, stdio, xdg string, flags []string) (int, string, bool) {
	t.Helper()
	port := testenv.FreePort(t)
	health := fmt.Sprintf("/relay-health-%d-%d", os.Getpid(), time.Now().UnixNano())
	args := append([]string{supergateway, "--stdio", stdio, "--outputTransport", "streamableHttp"}, flags...)
	args = append(args, "--port", strconv.Itoa(port), "--logLevel", "none", "--healthEndpoint", health)
	cmd := exec.Command(node, args...)
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+xdg)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start supergateway: %v", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	stop := func() {
		// supergateway and its per-session servers; shims put their own
		// children in process groups of their own and end them when
		// their stdin closes.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		killShimChildren(filepath.Join(xdg, "mcp-heal", "shims"))
	}
	client := &http.Client{Timeout: time.Second}
	url := fmt.Sprintf("http://127.0.0.1:%d%s", port, health)
	// Node starts slowly on a loaded machine.
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			stop()
			return 0, fmt.Sprintf("exited on port %d: %s", port, stderr.String()), false
		default:
		}
		if resp, err := client.Get(url); err == nil {
			ok := resp.StatusCode == http.StatusOK
			resp.Body.Close()
			if ok {
				t.Cleanup(stop)
				return port, "", true
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	return 0, fmt.Sprintf("no answer on port %d within 60s: %s", port, stderr.String()), false
}

// killShimChildren kills the servers of shims that are gone or going, so
// no fixture outlives the test.
func killShimChildren(dir string) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		var r state.Record
		if json.Unmarshal(b, &r) == nil && r.ChildPID > 0 && procinfo.Alive(r.ChildPID) {
			syscall.Kill(r.ChildPID, syscall.SIGKILL)
		}
	}
}

// stdioProc is a process a test talks to over its stdin and stdout.
type stdioProc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out io.ReadCloser

	once   sync.Once
	onTime bool
}

// startStdio starts argv with env added to the test's environment, its
// stderr logged line by line under name, and stops it when the test ends
// (see stop).
func startStdio(t *testing.T, name string, env []string, argv ...string) *stdioProc {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = &testWriter{t: t, prefix: name + " stderr: "}
	in, out := testenv.StartPiped(t, cmd)
	p := &stdioProc{cmd: cmd, in: in, out: out}
	t.Cleanup(func() { p.stop() })
	return p
}

// pid is the process's id.
func (p *stdioProc) pid() int { return p.cmd.Process.Pid }

// stop closes the process's stdin, the way its client ends an MCP stdio
// session, and reports whether it exited on its own within 10s (otherwise
// it is killed). Safe to call more than once; a test that requires the
// exit checks the result in a cleanup of its own, which runs before the
// one startStdio registered.
func (p *stdioProc) stop() bool {
	p.once.Do(func() { p.onTime = testenv.CloseAndWait(p.cmd, p.in, 10*time.Second) })
	return p.onTime
}
