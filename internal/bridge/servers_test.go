//go:build unix

package bridge

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// The test binary doubles as an MCP server (go-sdk mcp/cmd_test.go
// pattern): with BRIDGE_TEST_SERVER=multi it serves three namespaces on one
// port with the official Go SDK, the way gateways host several servers.
func TestMain(m *testing.M) {
	switch os.Getenv("BRIDGE_TEST_SERVER") {
	case "multi":
		serveMulti(os.Getenv("PORT"))
		return
	case "era":
		serveEra(os.Getenv("PORT"), os.Getenv("ERA_DIR"))
		return
	}
	os.Exit(m.Run())
}

type echoIn struct {
	Text string `json:"text"`
}

func newSDKServer(name string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "echo",
		Description: "echoes text",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + ":" + in.Text}}}, nil, nil
	})
	return s
}

// testSecret is the bearer token /auth/mcp requires; tests check it never
// shows up in logs, state records or errors.
const testSecret = "sekrit-token-4711"

func serveMulti(port string) {
	mux := http.NewServeMux()
	for _, ns := range []string{"a", "b", "c"} {
		srv := newSDKServer(ns)
		mux.Handle("/"+ns+"/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	}
	// /r/mcp: resumable streams (an event store) and a tool that closes its
	// response stream mid-call and answers after the client reconnects
	// with Last-Event-ID (SEP-1699).
	rs := newSDKServer("r")
	mcp.AddTool(rs, &mcp.Tool{Name: "reconnect", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			if req.Extra != nil && req.Extra.CloseSSEStream != nil {
				req.Extra.CloseSSEStream(mcp.CloseSSEStreamArgs{RetryAfter: 20 * time.Millisecond})
			}
			time.Sleep(150 * time.Millisecond)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "resumed:" + in.Text}}}, nil, nil
		})
	mux.Handle("/r/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return rs },
		&mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil)}))
	// /auth/mcp: 401 without the bearer token.
	as := newSDKServer("auth")
	ah := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return as }, nil)
	mux.Handle("/auth/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+testSecret {
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, "unauthorized: bad token "+r.Header.Get("Authorization"), http.StatusUnauthorized)
			return
		}
		ah.ServeHTTP(w, r)
	}))
	err := http.ListenAndServe("127.0.0.1:"+port, mux)
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

// server is a real MCP server process on a fixed port that tests stop,
// start and restart mid-session.
type server struct {
	t    testing.TB
	kind string
	port int
	URL  string
	argv []string
	env  []string
	// Dir is the statelessEra server's directory: its request log and
	// the file that holds its slow tools (era_test.go).
	Dir string

	mu  sync.Mutex
	cmd *exec.Cmd
}

// Server kinds.
const (
	everythingHTTP = "server-everything streamableHttp"  // 400 on a stale session
	everythingSSE  = "server-everything sse"             // legacy HTTP+SSE
	goSDKStateful  = "go-sdk everything-server stateful" // 404 on a stale session
	goSDKStateless = "go-sdk everything-server stateless"
	multiNS        = "go-sdk three namespaces"
	statelessEra   = "go-sdk stateless era, logged" // era_test.go
)

func newServer(t testing.TB, kind string) *server {
	t.Helper()
	s := &server{t: t, kind: kind, port: testenv.FreePort(t)}
	p := strconv.Itoa(s.port)
	base := "http://127.0.0.1:" + p
	switch kind {
	case everythingHTTP, everythingSSE:
		bin := testenv.NPMBin(t, "mcp-server-everything", testenv.ServerEverything)
		mode := "streamableHttp"
		s.URL = base + "/mcp"
		if kind == everythingSSE {
			mode = "sse"
			s.URL = base + "/sse"
		}
		s.argv = []string{bin, mode}
		s.env = []string{"PORT=" + p}
	case goSDKStateful, goSDKStateless:
		bin := testenv.GoInstall(t, testenv.GoSDKEverything)
		s.argv = []string{bin, "-http=127.0.0.1:" + p, "-stateless=" + strconv.FormatBool(kind == goSDKStateless)}
		s.URL = base + "/mcp"
	case multiNS:
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		s.argv = []string{exe}
		s.env = []string{"BRIDGE_TEST_SERVER=multi", "PORT=" + p}
		s.URL = base // + /a/mcp etc.
	case statelessEra:
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		s.Dir = t.TempDir()
		s.argv = []string{exe}
		s.env = []string{"BRIDGE_TEST_SERVER=era", "PORT=" + p, "ERA_DIR=" + s.Dir}
		s.URL = base + "/mcp"
	default:
		t.Fatalf("unknown server kind %q", kind)
	}
	s.Start()
	t.Cleanup(s.Stop)
	return s
}

// Start runs the server and waits until its port accepts connections.
func (s *server) Start() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		s.t.Fatalf("%s already running", s.kind)
	}
	cmd := exec.Command(s.argv[0], s.argv[1:]...)
	cmd.Env = append(os.Environ(), s.env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if testing.Verbose() {
		cmd.Stderr = os.Stderr
	}
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("start %s: %v", s.kind, err)
	}
	s.cmd = cmd
	if err := testenv.WaitListening("127.0.0.1:"+strconv.Itoa(s.port), 30*time.Second, nil); err != nil {
		s.t.Fatalf("%s: %v", s.kind, err)
	}
}

// Stop kills the server's process group and waits.
func (s *server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	s.cmd.Wait()
	s.cmd = nil
	// The port must be free before a restart binds it again.
	for i := 0; i < 100; i++ {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(s.port), 100*time.Millisecond)
		if err != nil {
			return
		}
		c.Close()
		time.Sleep(10 * time.Millisecond)
	}
}

// Restart stops and starts the server: every session it had is gone.
func (s *server) Restart() {
	s.t.Helper()
	s.Stop()
	s.Start()
}
