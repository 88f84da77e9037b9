//go:build unix

package shim

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
)

// The fake MCP server is this test binary re-executed with FAKE_MCP set
// (the go-sdk mcp/cmd_test.go pattern). Its behaviour is set by FAKE_*
// variables:
//
//	FAKE_MCP=server|wrapper|grandchild
//	FAKE_ERA       handshake (default: server/discover -> -32601), stateless, both
//	FAKE_EVENTS    file to append "event arg" lines to (initialize, initialized,
//	               setLevel, subscribe, call <tool> <id>, start <pid>)
//	FAKE_COUNTER   file counting starts; with FAKE_FAIL_STARTS=N the first N
//	               starts exit 3 after writing to stderr
//	FAKE_FAIL_FILE while this file exists, starts exit 3
//	FAKE_LISTCHANGED declare tools.listChanged
//	FAKE_TOOLS_AFTER from start N+1 on, list one more tool
//	FAKE_JUNK      write a non-JSON line to stdout before every response
//	FAKE_VERSION   protocol version to answer initialize with (from start
//	               FAKE_VERSION_AFTER+1 on, when that is set)
//	FAKE_STUBBORN  ignore stdin EOF and SIGTERM (stop-ladder tests)
//	FAKE_MUTE_INIT_AFTER from start N+1 on, never answer initialize
//	FAKE_PIDFILE   wrapper: write the grandchild's pid here
//	FAKE_SERIAL    run tool calls one at a time on the reading goroutine,
//	               like a fully single-threaded server (pings wait too)
//	FAKE_GATE      file the "gate" tool waits for before it answers
func TestMain(m *testing.M) {
	switch os.Getenv("FAKE_MCP") {
	case "server":
		fakeServer()
		os.Exit(0)
	case "wrapper":
		fakeWrapper()
		os.Exit(0)
	case "flood":
		fakeFlood()
		os.Exit(0)
	case "sink":
		fakeSink()
		os.Exit(0)
	case "hostile":
		fakeHostile()
		os.Exit(0)
	case "bigfile":
		fakeBigFile()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func fakeEvent(format string, a ...any) {
	path := os.Getenv("FAKE_EVENTS")
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	fmt.Fprintf(f, format+"\n", a...)
	f.Close()
}

func fakeStarts() int {
	path := os.Getenv("FAKE_COUNTER")
	if path == "" {
		return 1
	}
	b, _ := os.ReadFile(path)
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	n++
	os.WriteFile(path, []byte(strconv.Itoa(n)), 0o600)
	return n
}

// fakeWrapper is an npx-style wrapper: it runs the real server as a child
// sharing its stdio, and waits.
func fakeWrapper() {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "FAKE_MCP=server")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "wrapper:", err)
		os.Exit(1)
	}
	if p := os.Getenv("FAKE_PIDFILE"); p != "" {
		os.WriteFile(p, []byte(strconv.Itoa(cmd.Process.Pid)), 0o600)
	}
	signal.Ignore(syscall.SIGTERM) // like a wrapper that does not forward signals
	cmd.Wait()
}

var fakeTools = `[
 {"name":"echo","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},
 {"name":"add","inputSchema":{"type":"object"},"annotations":{"idempotentHint":true}},
 {"name":"write","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true}},
 {"name":"slow","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},
 {"name":"slowwrite","inputSchema":{"type":"object"}},
 {"name":"crash","inputSchema":{"type":"object"}},
 {"name":"crashread","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},
 {"name":"hang","inputSchema":{"type":"object"}},
 {"name":"big","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},
 {"name":"ask","inputSchema":{"type":"object"}},
 {"name":"pid","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},
 {"name":"hang2","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},
 {"name":"gate","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},
 {"name":"closeout","inputSchema":{"type":"object"}}
]`

func fakeServer() {
	n := fakeStarts()
	pid := os.Getpid()
	fakeEvent("start %d", pid)
	fmt.Fprintf(os.Stderr, "fake server %d starting (start %d)\n", pid, n)
	_, failFile := os.Stat(os.Getenv("FAKE_FAIL_FILE") + "")
	limit, _ := strconv.Atoi(os.Getenv("FAKE_FAIL_STARTS"))
	if n <= limit || (os.Getenv("FAKE_FAIL_FILE") != "" && failFile == nil) {
		fmt.Fprintf(os.Stderr, "fatal: cannot open database (api_key=hunter2secret)\n")
		os.Exit(3)
	}
	if os.Getenv("FAKE_STUBBORN") != "" {
		signal.Ignore(syscall.SIGTERM)
	}
	era := os.Getenv("FAKE_ERA")
	junk := os.Getenv("FAKE_JUNK") != ""
	w := jsonrpc.NewWriter(os.Stdout)
	send := func(b []byte) {
		if junk {
			w.WriteLine([]byte("junk: this is not JSON"))
		}
		w.WriteLine(b)
	}
	reply := func(id []byte, result string) { send(jsonrpc.ResultReply(id, []byte(result))) }
	var mu sync.Mutex
	waiting := map[string]chan []byte{}
	nextID := 0
	ask := func(method string) []byte {
		mu.Lock()
		id := strconv.Itoa(nextID)
		nextID++
		ch := make(chan []byte, 1)
		waiting[id] = ch
		mu.Unlock()
		send(jsonrpc.NewRequest([]byte(id), method, []byte("{}")))
		return <-ch
	}
	text := func(s string) string {
		b, _ := json.Marshal(s)
		return `{"content":[{"type":"text","text":` + string(b) + `}]}`
	}
	call := func(id []byte, line []byte) {
		name := gjson.GetBytes(line, "params.name").String()
		args := gjson.GetBytes(line, "params.arguments")
		fakeEvent("call %s %s", name, args.Get("key").String())
		switch name {
		case "echo":
			reply(id, text(args.Get("text").String()))
		case "structured": // as a tool with an outputSchema answers
			reply(id, `{"content":[{"type":"text","text":"{\"x\":1}"}],"structuredContent":{"x":1}}`)
		case "add":
			reply(id, text(strconv.FormatInt(args.Get("a").Int()+args.Get("b").Int(), 10)))
		case "write":
			reply(id, text("written "+args.Get("key").String()))
		case "slow", "slowwrite":
			time.Sleep(time.Duration(args.Get("ms").Int()) * time.Millisecond)
			reply(id, text("slept"))
		case "crash", "crashread":
			fmt.Fprintln(os.Stderr, "panic: crash tool called")
			os.Exit(7)
		case "big":
			reply(id, text(strings.Repeat("x", int(args.Get("bytes").Int()))))
		case "ask":
			r := ask("roots/list")
			fakeEvent("asked error=%t", gjson.GetBytes(r, "error").Exists())
			reply(id, text(gjson.GetBytes(r, "result.roots.0.uri").String()))
		case "pid":
			reply(id, text(strconv.Itoa(pid)))
		case "gate":
			for {
				if _, err := os.Stat(os.Getenv("FAKE_GATE")); err == nil {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
			reply(id, text("through"))
		case "closeout":
			// Answer, then close stdout and live on: nothing it does can
			// reach the client any more.
			reply(id, text("closing"))
			os.Stdout.Close()
			fakeEvent("closed stdout %d", pid)
		case "hang2":
			// A long read that never ends (but the server stays responsive).
		default:
			send(jsonrpc.ErrorReply(id, jsonrpc.CodeInvalidParams, "unknown tool "+name, nil))
		}
	}
	r := jsonrpc.NewReader(os.Stdin)
	for {
		line, err := r.Next()
		if err == io.EOF || err != nil {
			if os.Getenv("FAKE_STUBBORN") != "" {
				time.Sleep(time.Hour)
			}
			return
		}
		m, err := jsonrpc.Peek(line)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fake: bad line:", err)
			os.Exit(9) // like a Go SDK server
		}
		id := append([]byte(nil), m.ID...)
		line = append([]byte(nil), line...)
		switch m.Kind {
		case jsonrpc.KindResponse:
			mu.Lock()
			ch := waiting[string(id)]
			delete(waiting, string(id))
			mu.Unlock()
			if ch != nil {
				ch <- line
			}
			continue
		case jsonrpc.KindNotification:
			if m.Method == "notifications/initialized" {
				fakeEvent("initialized")
			}
			continue
		}
		switch m.Method {
		case "server/discover":
			fakeEvent("discover")
			if era == "crashdiscover" {
				os.Exit(4)
			}
			if era == "stateless" || era == "both" {
				reply(id, `{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}`)
			} else {
				send(jsonrpc.ErrorReply(id, jsonrpc.CodeMethodNotFound, "Method not found", nil))
			}
		case "initialize":
			if era == "stateless" {
				send(jsonrpc.ErrorReply(id, jsonrpc.CodeMethodNotFound, "Method not found", nil))
				continue
			}
			if after, _ := strconv.Atoi(os.Getenv("FAKE_MUTE_INIT_AFTER")); after > 0 && n > after {
				fakeEvent("initialize %d muted", pid)
				continue
			}
			v := os.Getenv("FAKE_VERSION")
			if after, _ := strconv.Atoi(os.Getenv("FAKE_VERSION_AFTER")); after > 0 && n <= after {
				v = ""
			}
			if v == "" {
				v = gjson.GetBytes(line, "params.protocolVersion").String()
			}
			fakeEvent("initialize %d", pid)
			tools := `{}`
			if os.Getenv("FAKE_LISTCHANGED") != "" {
				tools = `{"listChanged":true}`
			}
			reply(id, `{"protocolVersion":"`+v+`","capabilities":{"tools":`+tools+`,"logging":{},"resources":{"subscribe":true}},"serverInfo":{"name":"fake","version":"1"}}`)
		case "ping":
			fakeEvent("ping")
			if era == "stateless" {
				send(jsonrpc.ErrorReply(id, jsonrpc.CodeMethodNotFound, "Method not found", nil))
				continue
			}
			reply(id, `{}`)
		case "subscriptions/listen":
			fakeEvent("listen") // a stream: open until the client goes
		case "logging/setLevel":
			fakeEvent("setLevel %s", gjson.GetBytes(line, "params.level").String())
			reply(id, `{}`)
		case "resources/subscribe":
			fakeEvent("subscribe %s", gjson.GetBytes(line, "params.uri").String())
			reply(id, `{}`)
		case "resources/list":
			if gjson.GetBytes(line, "params.cursor").Exists() {
				go func() { time.Sleep(400 * time.Millisecond); reply(id, `{"resources":[]}`) }()
				continue
			}
			reply(id, `{"resources":[],"nextCursor":"page2"}`)
		case "tools/list":
			fakeEvent("tools/list")
			list := strings.ReplaceAll(fakeTools, "\n", "")
			if after, _ := strconv.Atoi(os.Getenv("FAKE_TOOLS_AFTER")); after > 0 && n > after {
				list = strings.Replace(list, `[`, `[{"name":"newtool","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},`, 1)
			}
			reply(id, `{"tools":`+list+`}`)
		case "tools/call":
			if gjson.GetBytes(line, "params.name").String() == "hang" {
				fakeEvent("call hang")
				time.Sleep(time.Hour) // stop reading: nothing is answered any more
			}
			if os.Getenv("FAKE_SERIAL") != "" {
				call(id, line)
				continue
			}
			go call(id, line)
		default:
			send(jsonrpc.ErrorReply(id, jsonrpc.CodeMethodNotFound, "Method not found", nil))
		}
	}
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
