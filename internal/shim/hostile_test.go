//go:build unix

package shim

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/example"
	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// fakeHostile (FAKE_MCP=hostile) is a server that answers the handshake and
// then does, for each tools/call, what the tool's name says, with
// arguments.mb megabytes:
//
//	stderr   that much stderr without a newline, then answers "ok"
//	endless  a response to the call that long, on one line
//	junk     that many MB of non-JSON lines on stdout, then answers "ok"
//	srvflood arguments.n roots/list requests, then answers how many error
//	         replies it got back for them once arguments.wait ms passed
//	sleep    answers "slept" after arguments.ms
//	echo     answers "ok"
func fakeHostile() {
	var mu sync.Mutex
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	send := func(b []byte) {
		mu.Lock()
		defer mu.Unlock()
		w.Write(b)
		w.WriteByte('\n')
		w.Flush()
	}
	text := func(s string) string { return `{"content":[{"type":"text","text":"` + s + `"}]}` }
	var refused sync.WaitGroup
	var nRefused int
	for line, m := range stdinMessages() {
		id := bytes.Clone(m.ID)
		switch {
		case m.Kind == jsonrpc.KindResponse:
			if gjson.GetBytes(line, "error").Exists() {
				mu.Lock()
				nRefused++
				mu.Unlock()
			}
			continue
		case m.Kind != jsonrpc.KindRequest:
			continue
		case m.Method == "initialize":
			send(jsonrpc.ResultReply(id, []byte(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"hostile","version":"1"}}`)))
			continue
		case m.Method != "tools/call":
			send(jsonrpc.ErrorReply(id, jsonrpc.CodeMethodNotFound, "Method not found", nil))
			continue
		}
		mb := int(gjson.GetBytes(line, "params.arguments.mb").Int())
		chunk := bytes.Repeat([]byte("x"), 1<<20)
		switch gjson.GetBytes(line, "params.name").String() {
		case "stderr":
			for range mb {
				os.Stderr.Write(chunk)
			}
			os.Stderr.Write([]byte("\n"))
			send(jsonrpc.ResultReply(id, []byte(text("ok"))))
		case "endless":
			mu.Lock()
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, id)
			for range mb {
				w.Write(chunk)
			}
			w.WriteString("\"}]}}\n")
			w.Flush()
			mu.Unlock()
		case "junk":
			mu.Lock()
			junk := bytes.Repeat([]byte("junk junk junk junk junk junk junk junk junk junk\n"), 20000)
			for range mb {
				w.Write(junk)
			}
			w.Flush()
			mu.Unlock()
			send(jsonrpc.ResultReply(id, []byte(text("ok"))))
		case "srvflood":
			n := int(gjson.GetBytes(line, "params.arguments.n").Int())
			for i := range n {
				send(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":"s%d","method":"roots/list"}`, i))
			}
			wait := time.Duration(gjson.GetBytes(line, "params.arguments.wait").Int()) * time.Millisecond
			refused.Go(func() {
				time.Sleep(wait)
				mu.Lock()
				k := nRefused
				mu.Unlock()
				send(jsonrpc.ResultReply(id, []byte(text(strconv.Itoa(k)))))
			})
		case "sleep":
			ms := gjson.GetBytes(line, "params.arguments.ms").Int()
			go func() {
				time.Sleep(time.Duration(ms) * time.Millisecond)
				send(jsonrpc.ResultReply(id, []byte(text("slept"))))
			}()
		default:
			send(jsonrpc.ResultReply(id, []byte(text("ok"))))
		}
	}
}

// hostileShim is the real binary in front of fakeHostile.
type hostileShim struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  <-chan []byte
	stderr *lockedBuffer
	next   int
}

func startHostile(t *testing.T, flags ...string) *hostileShim {
	t.Helper()
	bin := testenv.Binary(t)
	args := append(append([]string{"shim", "--name", "hostile"}, flags...), "--", os.Args[0])
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "FAKE_MCP=hostile", "XDG_STATE_HOME="+t.TempDir())
	in, out, stderr := startLogged(t, cmd)
	h := &hostileShim{t: t, cmd: cmd, stdin: in, lines: lineChan(out, 100), stderr: stderr}
	if r := h.call("initialize", initParams); !r.Get("result").Exists() {
		t.Fatalf("initialize: %s", r.Raw)
	}
	h.stdin.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
	return h
}

// call sends a request and returns its response; other messages are
// skipped.
func (h *hostileShim) call(method, params string) gjson.Result {
	h.t.Helper()
	h.next++
	id := strconv.Itoa(h.next)
	h.stdin.Write(append(jsonrpc.NewRequest([]byte(id), method, []byte(params)), '\n'))
	timeout := time.After(60 * time.Second)
	for {
		select {
		case l, ok := <-h.lines:
			if !ok {
				h.t.Fatalf("shim closed stdout before answering %s", method)
			}
			// A line that is no JSON is skipped, as a client skips it: a
			// long answer cut at the ceiling was passed on as it came.
			if r := gjson.ParseBytes(l); r.Get("id").Raw == id && !r.Get("method").Exists() && gjson.ValidBytes(l) {
				return r
			}
		case <-timeout:
			h.t.Fatalf("no answer to %s within 60s", method)
		}
	}
}

func (h *hostileShim) tool(name, args string) gjson.Result {
	h.t.Helper()
	return h.call("tools/call", `{"name":"`+name+`","arguments":`+args+`}`)
}

// peakRSS is the shim process's peak resident set (VmHWM) in MiB.
func (h *hostileShim) peakRSS() int {
	h.t.Helper()
	kb, err := testenv.StatusKB(h.cmd.Process.Pid, "VmHWM")
	if err != nil {
		h.t.Fatal(err)
	}
	return kb >> 10
}

// maxRSS is the target of issue 9: whatever the server writes, the shim
// stays under 64 MB (apart from one legitimate message in flight).
const maxRSS = 64

// TestHostileServerMemory drives the real shim binary against a server
// that writes what no well-behaved server does, and checks that the
// shim's peak RSS stays under 64 MB and that it keeps serving.
func TestHostileServerMemory(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the peak RSS is read from /proc (Linux only)")
	}
	testenv.NeedsFull(t, "a few seconds to write hundreds of MB through the shim")
	// A ceiling of 16 MiB: what bounds an endless line is the ceiling
	// (the shim cannot know a line is not a legitimate message before it
	// passes it), so the default of 256 MiB would dwarf the target.
	h := startHostile(t, "--max-message", "16MiB")
	t.Run("stderr without newline", func(t *testing.T) {
		if r := h.tool("stderr", `{"mb":300}`); r.Get("result.content.0.text").String() != "ok" {
			t.Fatalf("got %s", r.Raw)
		}
		if got := h.peakRSS(); got >= maxRSS {
			t.Errorf("peak RSS %d MiB after 300 MB of stderr without a newline, want < %d", got, maxRSS)
		}
		// What reaches the client's stderr is one line, cut.
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(h.stderr.String(), "more bytes of this line dropped") && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if s := h.stderr.String(); len(s) > 1<<20 || !strings.Contains(s, "more bytes of this line dropped") {
			t.Errorf("stderr passed through: %d bytes; want the line cut", len(s))
		}
	})
	t.Run("endless response line", func(t *testing.T) {
		r := h.tool("endless", `{"mb":300}`)
		if r.Get("error.code").Int() != jsonrpc.CodeInternalError || r.Get("error.data.reason").String() != "message-too-large" ||
			!strings.Contains(r.Get("error.message").String(), "message ceiling") ||
			!strings.HasPrefix(r.Get("error.message").String(), `MCP server "hostile": the server process sent an answer over mcp-heal's message ceiling (`) ||
			!strings.Contains(r.Get("error.message").String(), "; this call ran, but its answer was dropped; ") {
			t.Fatalf("got %.300s, want a message-too-large error", r.Raw)
		}
		if got := h.peakRSS(); got >= maxRSS {
			t.Errorf("peak RSS %d MiB after a 300 MB response line, want < %d", got, maxRSS)
		}
	})
	t.Run("large response within the ceiling", func(t *testing.T) {
		r := h.tool("endless", `{"mb":4}`)
		if got := len(r.Get("result.content.0.text").String()); got != 4<<20 {
			t.Fatalf("got a text of %d bytes (%.200s), want the whole 4 MiB", got, r.Raw)
		}
	})
	t.Run("junk lines", func(t *testing.T) {
		if r := h.tool("junk", `{"mb":10}`); r.Get("result.content.0.text").String() != "ok" {
			t.Fatalf("got %s", r.Raw)
		}
		if n := strings.Count(h.stderr.String(), "not JSON-RPC"); n > warnBurst {
			t.Errorf("%d junk warnings logged for a million junk lines, want at most %d a minute", n, warnBurst)
		}
	})
	if r := h.tool("echo", `{}`); r.Get("result.content.0.text").String() != "ok" {
		t.Fatalf("the shim stopped serving: %s", r.Raw)
	}
	t.Logf("peak RSS of the shim: %d MiB", h.peakRSS())
}

// A server that sends thousands of requests the client leaves unanswered
// must not grow the shim's table of them without bound: past the limit the
// shim answers the server itself.
func TestServerRequestFlood(t *testing.T) {
	h := startHostile(t)
	const n = maxSrvReqs + 500
	r := h.tool("srvflood", fmt.Sprintf(`{"n":%d,"wait":3000}`, n))
	refused, _ := strconv.Atoi(r.Get("result.content.0.text").String())
	if refused == 0 || refused > n-maxSrvReqs {
		t.Errorf("the server got %d refusals of %d requests the client left unanswered, want 1 to %d", refused, n, n-maxSrvReqs)
	}
	if !strings.Contains(h.stderr.String(), "too many unanswered") {
		t.Errorf("no log line about the refused requests")
	}
}

// A client that reuses the id of a request still in flight gets -32600
// for the second one, and the first still gets its own answer (before,
// the second replaced the first in the table and one answer was lost).
func TestDuplicateRequestID(t *testing.T) {
	h := startHostile(t)
	h.stdin.Write([]byte(`{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":500}}}` + "\n"))
	h.stdin.Write([]byte(`{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"echo","arguments":{}}}` + "\n"))
	var got []gjson.Result
	timeout := time.After(3 * time.Second)
	for done := false; !done; {
		select {
		case l := <-h.lines:
			if r := gjson.ParseBytes(l); r.Get("id").Raw == "99" {
				got = append(got, r)
			}
		case <-timeout:
			done = true
		}
	}
	if len(got) != 2 {
		t.Fatalf("got %d answers to the two requests with id 99, want 2: %v", len(got), got)
	}
	if got[0].Get("error.code").Int() != jsonrpc.CodeInvalidRequest || !strings.Contains(got[0].Get("error.message").String(), "in flight") {
		t.Errorf("first answer: got %s, want -32600 for the duplicate", got[0].Raw)
	}
	if got[1].Get("result.content.0.text").String() != "slept" {
		t.Errorf("second answer: got %s, want the first request's result", got[1].Raw)
	}
}

// TestHostileClientMemory: a line from the client gets the ceiling a
// line from the server gets. Before, nothing bounded it: a 64 MiB request
// took the shim to 203 MiB, and a line without end grew it for as long as
// it lasted.
func TestHostileClientMemory(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the peak RSS is read from /proc (Linux only)")
	}
	testenv.NeedsFull(t, "a few seconds to write hundreds of MB through the shim")
	h := startHostile(t) // the default ceiling, 16 MiB - 64 KiB
	t.Run("64 MiB request", func(t *testing.T) {
		r := h.call("tools/call", `{"name":"echo","arguments":{"text":"`+strings.Repeat("a", 64<<20)+`"}}`)
		if r.Get("error.code").Int() != jsonrpc.CodeInvalidRequest || r.Get("error.data.reason").String() != "message-too-large" {
			t.Fatalf("got %.300s, want a message-too-large error", r.Raw)
		}
		if got := h.peakRSS(); got >= maxRSS {
			t.Errorf("peak RSS %d MiB after a 64 MiB request, want < %d", got, maxRSS)
		}
	})
	t.Run("endless line", func(t *testing.T) {
		chunk := bytes.Repeat([]byte("b"), 1<<20)
		h.stdin.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/x","params":{"p":"`))
		for range 300 {
			if _, err := h.stdin.Write(chunk); err != nil {
				t.Fatal(err)
			}
		}
		if got := h.peakRSS(); got >= maxRSS {
			t.Errorf("peak RSS %d MiB while the client wrote 300 MB without a line end, want < %d", got, maxRSS)
		}
		h.stdin.Write([]byte("\"}}\n"))
	})
	if r := h.tool("echo", `{}`); r.Get("result.content.0.text").String() != "ok" {
		t.Fatalf("the shim stopped serving: %s", r.Raw)
	}
	t.Logf("peak RSS of the shim: %d MiB", h.peakRSS())
}

// lineSession is a client of a server process (the example server itself,
// or the real mcp-heal binary in front of it) that keeps every line it
// reads byte for byte, as Claude Code's SDK client gets them before it
// decodes them.
type lineSession struct {
	t   *testing.T
	in  io.WriteCloser
	out chan []byte
	id  int
}

func startLines(t *testing.T, argv []string, env ...string) *lineSession {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	in, out, _ := startLogged(t, cmd)
	s := &lineSession{t: t, in: in, out: make(chan []byte, 16)}
	go func() {
		defer close(s.out)
		br := bufio.NewReader(out)
		for {
			l, err := br.ReadBytes('\n')
			if err != nil {
				return
			}
			s.out <- bytes.TrimSuffix(l, []byte("\n"))
		}
	}()
	s.call("initialize", initParams)
	io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	return s
}

// call returns the raw line answering a request, or fails after 10 s (the
// example server answers these at once).
func (s *lineSession) call(method, params string) []byte {
	s.t.Helper()
	s.id++
	fmt.Fprintf(s.in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", s.id, method, params)
	timeout := time.After(10 * time.Second)
	for {
		select {
		case l, ok := <-s.out:
			if !ok {
				s.t.Fatalf("%s: stdout closed before the answer", method)
			}
			if r := gjson.ParseBytes(l); r.Get("id").Raw == fmt.Sprint(s.id) && !r.Get("method").Exists() {
				return l
			}
		case <-timeout:
			s.t.Fatalf("%s: no answer within 10s", method)
		}
	}
}

// TestAnswerBadText: an answer holding invalid UTF-8 and lone surrogates
// reaches the client through the shim byte for byte as it does directly
// (Claude Code's client decodes it with U+FFFD and takes it), and a line
// cut short that names a call in flight answers that call with an error
// instead of leaving it waiting for ever. Real processes: the example
// server, and the mcp-heal binary in front of it. On the old code the
// shim dropped the first answer as "not valid UTF-8" and the call waited.
func TestAnswerBadText(t *testing.T) {
	bin := testenv.Binary(t)
	env := serverEnv(example.Options{Era: example.EraHandshake, Faults: example.Faults{TestTools: true}})
	direct := startLines(t, []string{os.Args[0]}, env)
	shim := startLines(t, []string{bin, "shim", "--name", "badtext", "--", os.Args[0]}, env, "XDG_STATE_HOME="+t.TempDir())

	call := `{"name":"badtext","arguments":{}}`
	want, got := direct.call("tools/call", call), shim.call("tools/call", call)
	if !bytes.Contains(want, []byte(example.BadText)) {
		t.Fatalf("the direct answer does not carry the bad text: %q", want)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("through the shim:\n%q\ndirectly:\n%q", got, want)
	}

	r := gjson.ParseBytes(shim.call("tools/call", `{"name":"cutshort","arguments":{}}`))
	if r.Get("error.code").Int() != -32603 || r.Get("error.data.reason").String() != "unreadable-answer" {
		t.Fatalf("a call answered with a line cut short: %s", r.Raw)
	}
	t.Logf("cut short: %s", r.Get("error.message"))
	// And the session goes on.
	if got := shim.call("tools/call", call); !bytes.Equal(got, bytes.Replace(want, []byte(`"id":2`), []byte(`"id":4`), 1)) {
		t.Fatalf("after the cut-short answer: %q", got)
	}
}
