package probe_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
	"github.com/mcp-heal/mcp-heal/internal/probe"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

func TestStdio(t *testing.T) {
	bin := testenv.Binary(t)
	tests := []struct {
		name    string
		target  probe.Target
		timeout time.Duration
		ok      bool
		kind    string
		summary string // substring of the summary (or of the era when ok)
		hint    string // substring of the hint
	}{
		{"good server", probe.Target{Command: bin, Args: []string{"example-server"}}, 0, true, "", "handshake", ""},
		{"stateless-era server", probe.Target{Command: bin, Args: []string{"example-server", "--era", "stateless"}}, 0, true, "", "stateless", ""},
		{"command not found", probe.Target{Command: "mcp-heal-no-such-command"}, 0, false, probe.NotFound, "command not found: mcp-heal-no-such-command", "install mcp-heal-no-such-command"},
		{"exits 3 with stderr", server("exit3"), 0, false, probe.Exited, "exited with code 3 before answering initialize; its stderr said: «fatal: cannot open database»", "run the command by hand"},
		{"missing env var", server("no-token"), 0, false, probe.MissingEnv, "exited with code 1", "GITHUB_TOKEN is not set"},
		{"config uses an unset variable", server("exit1", "TOKEN", "${MCP_HEAL_TEST_UNSET_VAR}"), 0, false, probe.MissingEnv, "exited with code 1", "${MCP_HEAL_TEST_UNSET_VAR}"},
		{"junk on stdout", server("junk"), 5 * time.Second, false, probe.NonJSON, `non-JSON to stdout: «Server listening on stdio»`, "stderr"},
		{"junk then works", probe.Target{Command: bin, Args: []string{"example-server", "--junk-stdout"}}, 0, true, "", "handshake", ""},
		{"hangs", server("hang"), 500 * time.Millisecond, false, probe.Timeout, "no answer to initialize within 500ms", "hung"},
		{"killed by a signal", probe.Target{Command: "sh", Args: []string{"-c", "kill -9 $$"}}, 0, false, probe.Exited, "killed by signal killed", ""},
		{"not executable", probe.Target{Command: notExecutable(t)}, 0, false, probe.NotExecutable, "not executable", "chmod +x"},
		{"not a program", probe.Target{Command: notProgram(t)}, 0, false, probe.NotExecutable, "not a program", "#! line"},
		// Issue 32: doctor said "install /abs/path or use its absolute
		// path" of a command that was absolute already.
		{"absolute path not found", probe.Target{Command: filepath.Join(testenv.TempDir(t), "gone-server")}, 0, false, probe.NotFound, "command not found: ", "install the server there: no file at "},
		{"interpreter not found", probe.Target{Command: noInterpreter(t)}, 0, false, probe.NotFound, "its interpreter (the #! line) was not found", "install the interpreter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if why := unixOnly[tt.name]; why != "" && runtime.GOOS == "windows" {
				t.Skip(why)
			}
			start := time.Now()
			r := probe.Run(context.Background(), tt.target, tt.timeout)
			if tt.timeout > 0 && time.Since(start) > tt.timeout+3*time.Second {
				t.Errorf("probe took %s, want about %s", time.Since(start), tt.timeout)
			}
			if r.OK != tt.ok {
				t.Fatalf("OK: got %v (%+v), want %v", r.OK, r.Problem, tt.ok)
			}
			if tt.ok {
				if r.Era != tt.summary || len(r.Tools) == 0 || !slices.Contains(r.Tools, "echo") {
					t.Fatalf("got era %q tools %v, want era %q with echo", r.Era, r.Tools, tt.summary)
				}
				if tt.name == "junk then works" && len(r.Warnings) == 0 {
					t.Fatalf("got no warning about non-JSON stdout")
				}
				return
			}
			p := r.Problem
			if strings.ContainsRune(tt.target.Command, os.PathSeparator) && strings.Contains(p.Hint, "give its full path") {
				t.Fatalf("hint %q for a command given by its path", p.Hint)
			}
			if p.Kind != tt.kind || !strings.Contains(p.Summary, tt.summary) || !strings.Contains(p.Hint, tt.hint) {
				t.Fatalf("got %s / %q / %q, want %s / ...%q... / ...%q...", p.Kind, p.Summary, p.Hint, tt.kind, tt.summary, tt.hint)
			}
			if tt.kind == probe.Exited && strings.Contains(tt.summary, "code 3") && (p.ExitCode == nil || *p.ExitCode != 3 || len(p.Stderr) != 2) {
				t.Fatalf("got exit code %v, stderr %q; want 3 and two lines", p.ExitCode, p.Stderr)
			}
		})
	}
}

// TestStderrRedacted: a probe's stderr tail reaches the model (hooks) and
// terminals, so secrets in it are removed.
func TestStderrRedacted(t *testing.T) {
	r := probe.Run(context.Background(), server("secret"), 0)
	if r.OK || len(r.Problem.Stderr) != 1 || strings.Contains(r.Problem.Stderr[0], "sk-live") || strings.Contains(r.Problem.Summary, "sk-live") {
		t.Fatalf("secret not redacted: %+v", r.Problem)
	}
}

// unixOnly: the TestStdio cases that cannot exist on Windows, and why.
var unixOnly = map[string]string{
	"killed by a signal":    "Windows has no signals: a process ends with an exit code",
	"not executable":        "Windows has no execute bit (and runs no #! script)",
	"not a program":         "Windows has no execute bit: a file runs by its extension",
	"interpreter not found": "Windows runs no #! script",
}

func notExecutable(t *testing.T) string {
	p := filepath.Join(testenv.TempDir(t), "server.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\nexit 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func notProgram(t *testing.T) string {
	p := filepath.Join(testenv.TempDir(t), "server.txt")
	if err := os.WriteFile(p, []byte("not a program\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// noInterpreter is a script whose #! interpreter is not there.
func noInterpreter(t *testing.T) string {
	p := filepath.Join(testenv.TempDir(t), "server.sh")
	if err := os.WriteFile(p, []byte("#!/nonexistent/mcp-heal-interp\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// streamable is a minimal Streamable HTTP server: initialize answered as
// JSON with a session id, tools/list as an SSE stream, notifications 202.
func streamable(t *testing.T, status int) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if status != 0 {
			http.Error(w, http.StatusText(status), status)
			return
		}
		if r.Method == http.MethodDelete {
			return
		}
		msg := readMsg(r)
		switch msg.Method {
		case "initialize":
			w.Header().Set("Mcp-Session-Id", "s1")
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"fake-http","version":"1"}}}`, msg.ID)
		case "tools/list":
			if r.Header.Get("Mcp-Session-Id") != "s1" {
				http.Error(w, "no session", http.StatusBadRequest)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n")
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"tools\":[{\"name\":\"fetch\"},{\"name\":\"echo\"}]}}\n\n", msg.ID)
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestHTTP(t *testing.T) {
	good := streamable(t, 0)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String() + "/mcp"
	ln.Close()
	tests := []struct {
		name       string
		target     probe.Target
		ok         bool
		kind, text string
	}{
		{"good", probe.Target{Transport: "http", URL: good.URL + "/mcp"}, true, "", ""},
		{"port refused", probe.Target{Transport: "http", URL: refused}, false, probe.Refused, "connection refused: nothing listens on the URL's host and port"},
		{"401", probe.Target{Transport: "http", URL: streamable(t, 401).URL}, false, probe.Unauthorized, "401"},
		{"403", probe.Target{Transport: "http", URL: streamable(t, 403).URL}, false, probe.Forbidden, "403"},
		{"404", probe.Target{Transport: "http", URL: streamable(t, 404).URL + "/wrong"}, false, probe.HTTPStatus, "no MCP endpoint at the URL's path"},
		{"500", probe.Target{Transport: "http", URL: streamable(t, 500).URL}, false, probe.HTTPStatus, "the server answered HTTP 500 Internal Server Error"},
		{"401 with unset header variable", probe.Target{Transport: "http", URL: streamable(t, 401).URL, Headers: map[string]string{"Authorization": "Bearer ${MCP_HEAL_TEST_UNSET_TOKEN}"}}, false, probe.MissingEnv, "401"},
		{"not a URL", probe.Target{Transport: "http", URL: "ftp://x"}, false, probe.BadConfig, "not an http(s) URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := probe.Run(context.Background(), tt.target, 5*time.Second)
			if r.OK != tt.ok {
				t.Fatalf("OK: got %v (%+v), want %v", r.OK, r.Problem, tt.ok)
			}
			if tt.ok {
				if r.ServerName != "fake-http" || strings.Join(r.Tools, ",") != "echo,fetch" {
					t.Fatalf("got server %q tools %v, want fake-http with echo,fetch", r.ServerName, r.Tools)
				}
				return
			}
			if r.Problem.Kind != tt.kind || !strings.Contains(r.Problem.Summary, tt.text) || r.Problem.Hint == "" {
				t.Fatalf("got %s / %q / %q, want %s / ...%q...", r.Problem.Kind, r.Problem.Summary, r.Problem.Hint, tt.kind, tt.text)
			}
			// One account, said once, and never the URL (it may hold a key).
			if strings.Count(r.Problem.Summary, "answered") > 1 || strings.Contains(r.Problem.Summary, "127.0.0.1") {
				t.Fatalf("summary %q says the answer twice or shows the URL", r.Problem.Summary)
			}
		})
	}
}

// TestSSE probes a legacy HTTP+SSE server (2024-11-05): GET the stream,
// read the endpoint event, POST there, read the answers on the stream.
func TestSSE(t *testing.T) {
	msgs := make(chan string, 8)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /sse", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: endpoint\ndata: /message?sessionId=abc\n\n")
		w.(http.Flusher).Flush()
		for {
			select {
			case <-r.Context().Done():
				return
			case m := <-msgs:
				fmt.Fprintf(w, "event: message\ndata: %s\n\n", m)
				w.(http.Flusher).Flush()
			}
		}
	})
	mux.HandleFunc("POST /message", func(w http.ResponseWriter, r *http.Request) {
		msg := readMsg(r)
		switch msg.Method {
		case "initialize":
			msgs <- fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2024-11-05","capabilities":{"tools":{}},"serverInfo":{"name":"legacy"}}}`, msg.ID)
		case "tools/list":
			msgs <- fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"ping"}]}}`, msg.ID)
		}
		w.WriteHeader(http.StatusAccepted)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	r := probe.Run(context.Background(), probe.Target{Transport: "sse", URL: srv.URL + "/sse"}, 5*time.Second)
	if !r.OK || r.ServerName != "legacy" || strings.Join(r.Tools, ",") != "ping" {
		t.Fatalf("got %+v (%+v), want legacy with tool ping", r, r.Problem)
	}
}

// The probe speaks through the bridge, so what the bridge guarantees holds
// for doctor and the hooks too: configured headers never follow a redirect
// to another origin (the probe used to follow every redirect with them),
// and a certificate that does not verify is named as such.
func TestHTTPThroughBridge(t *testing.T) {
	var leaked atomic.Bool
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			leaked.Store(true)
		}
		http.Error(w, "nothing here", http.StatusNotFound)
	}))
	defer other.Close()
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
	}))
	defer redirect.Close()
	r := probe.Run(context.Background(), probe.Target{Transport: "http", URL: redirect.URL + "/mcp", Headers: map[string]string{"Authorization": "Bearer sekrit-token-123"}}, 5*time.Second)
	if r.OK || leaked.Load() {
		t.Fatalf("redirect to another origin: ok %v, Authorization reached it: %v (%+v)", r.OK, leaked.Load(), r.Problem)
	}
	if strings.Contains(r.Problem.Summary, "sekrit") {
		t.Fatalf("the token is in the summary: %q", r.Problem.Summary)
	}

	tlsSrv := httptest.NewTLSServer(http.NotFoundHandler())
	defer tlsSrv.Close()
	r = probe.Run(context.Background(), probe.Target{Transport: "http", URL: tlsSrv.URL + "/mcp"}, 5*time.Second)
	if r.OK || r.Problem.Kind != probe.Network || !strings.Contains(r.Problem.Summary, "TLS certificate rejected") {
		t.Fatalf("self-signed certificate: got %+v", r.Problem)
	}
}

// TestUnapprovedNeverRun: a project server the user has not approved is
// refused by the probe itself, whoever picked it: its command never runs.
func TestUnapprovedNeverRun(t *testing.T) {
	mark := filepath.Join(testenv.TempDir(t), "ran")
	for _, approval := range []string{claudecfg.Pending, claudecfg.Rejected} {
		s := claudecfg.Server{Name: "github", Scope: claudecfg.ScopeProject, Transport: "stdio", Command: "sh", Args: []string{"-c", "echo ran > " + mark}, Approval: approval}
		r := probe.Run(context.Background(), probe.FromServer(s, testenv.TempDir(t)), 5*time.Second)
		if r.OK || r.Problem == nil || r.Problem.Kind != probe.NotApproved || !strings.Contains(r.Problem.Summary, "not approved: not run") {
			t.Errorf("%s: %+v %+v", approval, r, r.Problem)
		}
	}
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("the probe ran a project server the user had not approved")
	}
}

// rpcMsg is what the fake servers read of a request's JSON-RPC message.
type rpcMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

// readMsg reads r's body as a JSON-RPC message (zero if it is not one).
func readMsg(r *http.Request) rpcMsg {
	var msg rpcMsg
	b, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(b, &msg)
	return msg
}

// TestMain lets the test binary stand in for a broken stdio server
// ($PROBE_TEST_SERVER names how it breaks), so the probe's tests need no
// shell and run on Windows too.
func TestMain(m *testing.M) {
	switch os.Getenv("PROBE_TEST_SERVER") {
	case "":
		os.Exit(m.Run())
	case "exit3":
		fmt.Fprintln(os.Stderr, "starting")
		fmt.Fprintln(os.Stderr, "fatal: cannot open database")
		os.Exit(3)
	case "no-token":
		fmt.Fprintln(os.Stderr, "Error: GITHUB_TOKEN is not set")
		os.Exit(1)
	case "secret":
		fmt.Fprintln(os.Stderr, "auth failed for api_key=sk-live1234567890abcdef")
		os.Exit(1)
	case "exit1":
		os.Exit(1)
	case "junk":
		fmt.Println("Server listening on stdio")
		time.Sleep(30 * time.Second)
	case "hang":
		time.Sleep(30 * time.Second)
	}
	os.Exit(0)
}

// server is a probe target running this test binary as a server that
// breaks the named way (see TestMain).
func server(how string, env ...string) probe.Target {
	e := map[string]string{"PROBE_TEST_SERVER": how}
	for i := 0; i+1 < len(env); i += 2 {
		e[env[i]] = env[i+1]
	}
	return probe.Target{Command: os.Args[0], Env: e}
}
