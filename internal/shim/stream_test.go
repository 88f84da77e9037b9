//go:build unix

package shim

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// fakeHalfway (FAKE_MCP=halfway) answers a tools/call with a long line
// written in two halves: arguments.kb KiB of text after the head, then,
// once the client sent notifications/rest, the tail. arguments.order is
// where the id goes: "first" ({"jsonrpc","id","result"}, as the Go and
// Python SDKs write), "last" ({"result","jsonrpc","id"}, as the
// TypeScript SDK does), or "broken" (id first and a tail that is no JSON);
// arguments.tail, when set, is the tail after the text (id first);
// arguments.cut, when set, is where the server is killed (SIGKILL): after
// that many bytes of the line (only the first time when FAKE_CUT_ONCE
// names a file, which it creates); arguments.whole writes the tail at
// once. tools/list lists read and the read-only read_safe.
// resources/subscribe to the uri "long-error" is answered with a long
// error, written whole. FAKE_METHODS, when set, is a file that gets the
// method of every message the server reads, one a line.
func fakeHalfway() {
	w := bufio.NewWriterSize(os.Stdout, 64<<10)
	var tail []byte
	for line, m := range stdinMessages() {
		if f := os.Getenv("FAKE_METHODS"); f != "" {
			if fd, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
				fmt.Fprintln(fd, m.Method)
				fd.Close()
			}
		}
		switch {
		case m.Method == "resources/subscribe" && gjson.GetBytes(line, "params.uri").String() == "long-error":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"%s"}}`+"\n", m.ID, bytes.Repeat([]byte("x"), 100<<10))
			w.Flush()
			continue
		case m.Method == "notifications/rest":
			w.Write(tail)
			w.Flush()
			continue
		case m.Kind != jsonrpc.KindRequest:
			continue
		case m.Method == "initialize":
			w.Write(jsonrpc.ResultReply(m.ID, []byte(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"halfway","version":"1"}}`)))
			w.WriteByte('\n')
			w.Flush()
			continue
		case m.Method == "tools/list":
			// read is unknown to the shim (not re-sent); read_safe is
			// read-only.
			w.Write(jsonrpc.ResultReply(m.ID, []byte(`{"tools":[{"name":"read","inputSchema":{"type":"object"}},{"name":"read_safe","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}]}`)))
			w.WriteByte('\n')
			w.Flush()
			continue
		case m.Method != "tools/call":
			w.Write(jsonrpc.ErrorReply(m.ID, jsonrpc.CodeMethodNotFound, "Method not found", nil))
			w.WriteByte('\n')
			w.Flush()
			continue
		}
		kb := int(gjson.GetBytes(line, "params.arguments.kb").Int())
		result := `{"content":[{"type":"text","text":"`
		switch order := gjson.GetBytes(line, "params.arguments.order").String(); order {
		case "last":
			w.WriteString(`{"result":` + result)
			tail = fmt.Appendf(nil, `"}]},"jsonrpc":"2.0","id":%s}`+"\n", m.ID)
		default:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s`, m.ID, result)
			tail = []byte(`"}]}}` + "\n")
			if order == "broken" {
				tail = []byte(`"}]}} and then some` + "\n")
			}
			if t := gjson.GetBytes(line, "params.arguments.tail"); t.Exists() {
				tail = []byte(t.String() + "\n")
			}
		}
		cut := int(gjson.GetBytes(line, "params.arguments.cut").Int())
		if once := os.Getenv("FAKE_CUT_ONCE"); cut > 0 && once != "" {
			// Cut the first process's answer only: the file says it was.
			if _, err := os.Stat(once); err == nil {
				cut = 0
			} else {
				os.WriteFile(once, nil, 0o600)
			}
		}
		if cut > 0 {
			// Killed mid-answer: the first cut bytes of the line, then
			// SIGKILL.
			w.Write(bytes.Repeat([]byte("x"), cut-w.Buffered()))
			w.Flush()
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
		w.Write(bytes.Repeat([]byte("x"), kb<<10))
		if gjson.GetBytes(line, "params.arguments.whole").Bool() {
			w.Write(tail) // the line at once, not at notifications/rest
			tail = nil
		}
		w.Flush()
	}
}

// rawShim is the real binary in front of a fake server, read as bytes.
type rawShim struct {
	t     *testing.T
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
	state string // its XDG_STATE_HOME
}

func startRawShim(t *testing.T, fake string, flags ...string) *rawShim {
	t.Helper()
	return startRawShimEnv(t, fake, nil, flags...)
}

// startRawShimEnv is startRawShim with more environment for the server.
func startRawShimEnv(t *testing.T, fake string, env []string, flags ...string) *rawShim {
	t.Helper()
	args := append(append([]string{"shim", "--name", fake}, flags...), "--", os.Args[0])
	cmd := exec.Command(testenv.Binary(t), args...)
	stateDir := t.TempDir()
	cmd.Env = append(append(os.Environ(), "FAKE_MCP="+fake, "XDG_STATE_HOME="+stateDir), env...)
	stdin, out, _ := startLogged(t, cmd)
	s := &rawShim{t: t, cmd: cmd, stdin: stdin, out: bufio.NewReaderSize(out, 1<<20), state: stateDir}
	s.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":` + initParams + `}`)
	if l := s.line(); !gjson.Get(l, "result").Exists() {
		t.Fatalf("initialize: %s", l)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s
}

func (s *rawShim) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.stdin, line+"\n"); err != nil {
		s.t.Fatal(err)
	}
}

// within runs f, failing the test when it has not returned in d.
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s: nothing within %v", what, d)
	}
}

// line reads one whole line (within 20 s).
func (s *rawShim) line() string {
	s.t.Helper()
	var l []byte
	var err error
	within(s.t, 20*time.Second, "a whole line", func() {
		l, err = s.out.ReadBytes('\n')
	})
	if err != nil {
		s.t.Fatalf("read: %v", err)
	}
	return string(l)
}

// checkMiBAnswer fails t unless whole is, byte for byte, the halfway
// server's answer to call id of 1 MiB (kb 1024), its id where order puts
// it.
func checkMiBAnswer(t *testing.T, whole, id, order string) {
	t.Helper()
	result := `{"content":[{"type":"text","text":"` + strings.Repeat("x", 1<<20) + `"}]}`
	want := `{"jsonrpc":"2.0","id":` + id + `,"result":` + result + "}\n"
	if order == "last" {
		want = `{"result":` + result + `,"jsonrpc":"2.0","id":` + id + "}\n"
	}
	if whole != want {
		t.Fatalf("id %s: the answer differs from the server's (%d bytes against %d): %.80q…%q", order, len(whole), len(want), whole, whole[max(0, len(whole)-40):])
	}
}

// TestLongAnswerPassedOnAsItComes: the first part of a long answer reaches
// the client while the server has not written the rest yet, as through a
// byte relay (issue 25: the shim held the whole line first, so a 16 MiB
// answer took the server's time and then as long again), whichever place
// the id has; the whole line is byte for byte the server's, and the call
// is settled: the shim never answers it again, and the next call works.
func TestLongAnswerPassedOnAsItComes(t *testing.T) {
	s := startRawShim(t, "halfway", "--traffic-log")
	for i, order := range []string{"first", "last"} {
		id := strconv.Itoa(10 + i)
		s.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"read","arguments":{"kb":1024,"order":"` + order + `"}}}`)
		head := make([]byte, 512<<10)
		within(t, 10*time.Second, "the first 512 KiB of the answer before the server wrote its end (id "+order+")", func() {
			_, _ = io.ReadFull(s.out, head)
		})
		s.send(`{"jsonrpc":"2.0","method":"notifications/rest"}`)
		whole := string(head) + s.line()
		checkMiBAnswer(t, whole, id, order)
	}
	// Settled: a short call is answered next, and nothing else is.
	s.send(`{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"read","arguments":{"kb":1,"order":"first"}}}`)
	s.send(`{"jsonrpc":"2.0","method":"notifications/rest"}`)
	if l := s.line(); gjson.Get(l, "id").Raw != "20" || !gjson.Get(l, "result").Exists() {
		t.Fatalf("next call: %.200s", l)
	}
	s.send(`{"jsonrpc":"2.0","id":21,"method":"ping"}`)
	if l := s.line(); gjson.Get(l, "id").Raw != "21" {
		t.Fatalf("after the long answers the shim sent %.300s, want only the ping's answer", l)
	}
	// The traffic log has them, as any message over its size: bytes and head.
	var logged []string
	filepath.WalkDir(s.state, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(d.Name(), "traffic") {
			b, _ := os.ReadFile(p)
			for _, l := range strings.Split(string(b), "\n") {
				if gjson.Get(l, "dir").String() == "s2c" && gjson.Get(l, "bytes").Int() > 1<<20 {
					logged = append(logged, gjson.Get(l, "truncated").String()[:12])
				}
			}
		}
		return nil
	})
	if len(logged) != 2 || logged[0] != `{"jsonrpc":"` || logged[1] != `{"result":{"` {
		t.Errorf("the traffic log's long answers: %q, want the two", logged)
	}
}

// TestLongAnswerBrokenAtItsEnd: a long line passed on as it came that
// ends as no JSON reached the client as the server wrote it (the client
// judges it as it would directly) and the call it names also gets the
// shim's error answer, so it never waits on a line it could not read.
func TestLongAnswerBrokenAtItsEnd(t *testing.T) {
	s := startRawShim(t, "halfway")
	s.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read","arguments":{"kb":256,"order":"broken"}}}`)
	head := make([]byte, 128<<10)
	within(t, 10*time.Second, "the first 128 KiB before the end", func() { _, _ = io.ReadFull(s.out, head) })
	s.send(`{"jsonrpc":"2.0","method":"notifications/rest"}`)
	if l := string(head) + s.line(); !strings.HasSuffix(l, `"}]}} and then some`+"\n") {
		t.Fatalf("the broken line was not passed on as written: …%q", l[max(0, len(l)-60):])
	}
	l := s.line()
	if gjson.Get(l, "id").Raw != "7" || gjson.Get(l, "error.data.reason").String() != "unreadable-answer" {
		t.Fatalf("want the shim's error answer to call 7, got %.300s", l)
	}
}

// TestLongAnswerOverCeilingPassedOn: a long answer passed on as it came
// that goes over the ceiling is cut there and ended, and the call gets the
// too-large error (its id came first); the shim never sends more than the
// ceiling of one line.
func TestLongAnswerOverCeilingPassedOn(t *testing.T) {
	s := startRawShim(t, "halfway", "--max-message", "512KiB")
	s.send(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"read","arguments":{"kb":1024,"order":"first"}}}`)
	cut := s.line()
	if len(cut) > 512<<10+3 || !strings.HasPrefix(cut, `{"jsonrpc":"2.0","id":8,"result":`) {
		t.Fatalf("the cut line: %d bytes (ceiling %d), head %.60q", len(cut), 512<<10, cut)
	}
	l := s.line()
	if gjson.Get(l, "id").Raw != "8" || gjson.Get(l, "error.data.reason").String() != "message-too-large" {
		t.Fatalf("want the too-large error to call 8, got %.300s", l)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/rest"}`)
	s.send(`{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	if l := s.line(); gjson.Get(l, "id").Raw != "9" {
		t.Fatalf("after the cut answer the shim sent %.300s, want the ping's answer", l)
	}
}

// TestLongAnswerCheckedAsShort: an answer passed on as it comes is checked
// exactly as one held whole (issue 30, item 6): a number or literal that
// is no JSON (`[tru]`, `1.2.3`, `--1`), or a value where a member must
// be, makes the call's answer unreadable, long or short. Before, the
// Follower skipped numbers and literals and took such a long answer as
// the call's success: the call got no error answer.
func TestLongAnswerCheckedAsShort(t *testing.T) {
	s := startRawShim(t, "halfway")
	tails := []string{
		`"}],"n":[tru]}}`,
		`"}],"n":1.2.3}}`,
		`"}],"n":--1}}`,
		`"}],"n":[1,]}}`,
		`"} "x"]}}`,
		`"}],"n":01}}`,
	}
	id := 100
	for _, tail := range tails {
		for _, kb := range []int{0, 256} {
			id++
			ids := strconv.Itoa(id)
			args := `{"kb":` + strconv.Itoa(kb) + `,"order":"first","tail":` + strconv.Quote(tail) + `}`
			s.send(`{"jsonrpc":"2.0","id":` + ids + `,"method":"tools/call","params":{"name":"read","arguments":` + args + `}}`)
			if kb > 0 {
				head := make([]byte, 128<<10)
				within(t, 10*time.Second, "the head of the long answer", func() { _, _ = io.ReadFull(s.out, head) })
			}
			s.send(`{"jsonrpc":"2.0","method":"notifications/rest"}`)
			if kb > 0 {
				if l := s.line(); !strings.HasSuffix(l, tail+"\n") {
					t.Fatalf("the long line was not passed on as written: …%q", l[max(0, len(l)-60):])
				}
			}
			// A ping after it: its answer must come after the call's.
			s.send(`{"jsonrpc":"2.0","id":"p` + ids + `","method":"ping"}`)
			l := s.line()
			if gjson.Get(l, "id").Raw != ids || gjson.Get(l, "error.data.reason").String() != "unreadable-answer" {
				t.Errorf("tail %q, %d KiB: want the shim's unreadable-answer error to call %s, got %.200s", tail, kb, ids, l)
				if gjson.Get(l, "id").String() == "p"+ids {
					continue
				}
			}
			if l := s.line(); gjson.Get(l, "id").String() != "p"+ids {
				t.Fatalf("want the ping's answer, got %.200s", l)
			}
		}
	}
}

// TestLongErrorAnswerNotRecorded: a long error answer to
// resources/subscribe is routed as an error: the subscription is not
// recorded, so a restarted server is not asked for it again. Before, a
// long answer was taken as a success, and the restart replayed the
// subscription (the server refused it again: the replay failed, and the
// new server was killed).
func TestLongErrorAnswerNotRecorded(t *testing.T) {
	methods := filepath.Join(t.TempDir(), "methods")
	s := startRawShimEnv(t, "halfway", []string{"FAKE_METHODS=" + methods})
	s.send(`{"jsonrpc":"2.0","id":5,"method":"resources/subscribe","params":{"uri":"long-error"}}`)
	if l := s.line(); gjson.Get(l, "id").Raw != "5" || gjson.Get(l, "error.code").Int() != -32602 || len(l) < 100<<10 {
		t.Fatalf("want the server's long error to call 5, got %.200s", l)
	}
	count := func(method string) int {
		b, _ := os.ReadFile(methods)
		return strings.Count(string(b), method+"\n")
	}
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 10*time.Second, "the restarted server's initialize", func() bool { return count("initialize") == 2 })
	s.send(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"read","arguments":{"kb":1,"order":"first"}}}`)
	s.send(`{"jsonrpc":"2.0","method":"notifications/rest"}`)
	if l := s.line(); gjson.Get(l, "id").Raw != "6" || !gjson.Get(l, "result").Exists() {
		t.Fatalf("the call after the restart: %.300s", l)
	}
	if n := count("resources/subscribe"); n != 1 {
		t.Errorf("the server was asked for the refused subscription %d times, want once (the client's)", n)
	}
}

// TestCutAnswerOneAccount: a server killed (SIGKILL) after 4 MB of an
// 8 MiB answer passed on as it came (issue 30, item 5). The client gets
// the cut line, ended (Claude Code skips a line it cannot parse and keeps
// the connection: docs/claude-code-behaviour.md), then one account of
// the call, true and in mcp-heal's words: the server exited after N
// bytes of its answer, the call may or may not have taken effect, and it
// is restarting; the next call's answer carries no restart note (no
// second account of the same exit). Before, the call got "the server is
// still running. Retry the call", and the next call the note "was
// restarted: killed by signal 9".
//
// Where the server writes the id last (as the TypeScript SDK does), the
// cut comes before it: the account goes to the only call in flight.
func TestCutAnswerOneAccount(t *testing.T) {
	for _, order := range []string{"first", "last"} {
		t.Run(order, func(t *testing.T) { cutAnswerOneAccount(t, order) })
	}
}

func cutAnswerOneAccount(t *testing.T, order string) {
	s := startRawShim(t, "halfway")
	const cut = 4_000_000
	s.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read","arguments":{"kb":8192,"order":"` + order + `","cut":4000000}}}`)
	var l string
	within(t, 20*time.Second, "the cut line", func() { l = s.line() })
	head := `{"jsonrpc":"2.0","id":3,"result":`
	if order == "last" {
		head = `{"result":`
	}
	if len(l) != cut+1 || !strings.HasPrefix(l, head) {
		t.Fatalf("the cut line: %d bytes, want %d and a line end: %.60q", len(l), cut+1, l)
	}
	account := s.line()
	msg := gjson.Get(account, "error.message").String()
	t.Logf("the account: %s", msg)
	if gjson.Get(account, "id").Raw != "3" || gjson.Get(account, "error.data.reason").String() != "answer-cut" {
		t.Errorf("want one error to call 3 saying the answer was cut, got %.600s", account)
	}
	for _, want := range []string{`MCP server "halfway" is restarting`, "after 4000000 bytes of this call's answer", "killed by signal 9 (SIGKILL)", "may or may not have taken effect"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the account does not say %q: %s", want, msg)
		}
	}
	if strings.Contains(msg, "still running") {
		t.Errorf("the account says the server is still running: %s", msg)
	}
	s.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read","arguments":{"kb":1,"order":"first"}}}`)
	s.send(`{"jsonrpc":"2.0","method":"notifications/rest"}`)
	next := s.line()
	if gjson.Get(next, "id").Raw != "4" {
		t.Fatalf("want the next call's answer, got %.300s", next)
	}
	if n := len(gjson.Get(next, "result.content").Array()); n != 1 {
		c := gjson.Get(next, "result.content").Raw
		t.Errorf("the next call's answer has %d items, want the server's one (no restart note): …%s", n, c[max(0, len(c)-400):])
	}
}

// TestCutAnswerReadOnlyResent: the answer of a read-only call cut by its
// server's death (SIGKILL after 4 MB of 8 MiB) is re-sent, by the rule
// any call lost with its server follows: the client gets the cut line,
// ended (Claude Code skips it and keeps the connection), then the new
// process's whole answer, with the note of the restart. Before, it got the
// account "the answer is lost ... this call was not re-sent", though the
// call was safe to re-send. A server that dies under the call each time
// gets it at most maxRetries times, then one error that names the kill
// (before, the new process's answer, held whole for the restart note, was
// read as a finished line when the kill cut it: "not valid JSON ... the
// server is still running").
func TestCutAnswerReadOnlyResent(t *testing.T) {
	for _, once := range []bool{true, false} {
		t.Run(map[bool]string{true: "cut once", false: "cut each time"}[once], func(t *testing.T) {
			var env []string
			if once {
				env = []string{"FAKE_CUT_ONCE=" + filepath.Join(t.TempDir(), "cut")}
			}
			s := startRawShimEnv(t, "halfway", env)
			s.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
			if l := s.line(); gjson.Get(l, "result.tools.1.name").String() != "read_safe" {
				t.Fatalf("tools/list: %.300s", l)
			}
			const cut = 4_000_000
			s.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_safe","arguments":{"kb":8192,"order":"first","cut":4000000,"whole":true}}}`)
			var l string
			within(t, 20*time.Second, "the cut line", func() { l = s.line() })
			if len(l) != cut+1 || !strings.HasPrefix(l, `{"jsonrpc":"2.0","id":3,"result":`) {
				t.Fatalf("the cut line: %d bytes, want %d and a line end: %.60q", len(l), cut+1, l)
			}
			if !once {
				// Each new process dies under the call as well, before the
				// restart note lets its answer go on as it comes: what it
				// wrote is dropped, and once the re-sends are spent the
				// call gets one error, true to what happened.
				var account string
				within(t, 20*time.Second, "the call's error", func() { account = s.line() })
				msg := gjson.Get(account, "error.message").String()
				if gjson.Get(account, "id").Raw != "3" || gjson.Get(account, "error.data.reason").String() != "retries-exhausted" ||
					!strings.Contains(msg, "killed by signal 9") || strings.Contains(msg, "still running") {
					t.Fatalf("after the call was cut and its server died under it again, want one error naming the kill, got %.600s", account)
				}
				t.Logf("the error: %s", msg)
				return
			}
			var whole string
			within(t, 20*time.Second, "the re-sent call's answer", func() { whole = s.line() })
			if gjson.Get(whole, "id").Raw != "3" || gjson.Get(whole, "error").Exists() {
				t.Fatalf("want the re-sent call's answer to id 3, got %.300s", whole)
			}
			text := gjson.Get(whole, "result.content.0.text").String()
			if len(text) != 8192<<10 {
				t.Errorf("the answer's text: %d bytes, want %d", len(text), 8192<<10)
			}
			if c := gjson.Get(whole, "result.content").Array(); len(c) < 2 || !strings.Contains(c[len(c)-1].Get("text").String(), "halfway") {
				t.Errorf("the answer carries no note of the restart: %d items", len(c))
			}
		})
	}
}

// TestLongAnswerHeldWholeWhenKept: the other delivery path
// (upstream.Handler says why there are two). A kept server's connection
// (internal/keep) delivers over Recv: it gives each response the client's
// own id back, which it can do only to a whole line (the TypeScript SDK
// writes the id last). So a long answer is held whole: the client gets
// none of it until the server has written its end, where the same answer
// from a server that is not kept is passed on as it comes
// (TestLongAnswerPassedOnAsItComes). Once the kept path passes answers
// on as they come, this test fails, and upstream.Handler's account of
// the two paths changes with it.
func TestLongAnswerHeldWholeWhenKept(t *testing.T) {
	env := []string{"XDG_RUNTIME_DIR=" + testenv.RuntimeDir(t), "XDG_STATE_HOME=" + t.TempDir()}
	t.Cleanup(func() {
		// A kept server outlives its shim: stop it once the shim is gone.
		stop := exec.Command(testenv.Binary(t), "stop", "--all")
		stop.Env = append(os.Environ(), env...)
		if out, err := stop.CombinedOutput(); err != nil {
			t.Errorf("mcp-heal stop --all: %v\n%s", err, out)
		}
	})
	s := startRawShimEnv(t, "halfway", env, "--keep", "1m")
	for i, order := range []string{"first", "last"} {
		id := strconv.Itoa(10 + i)
		s.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"read","arguments":{"kb":1024,"order":"` + order + `"}}}`)
		first := make(chan byte, 1)
		go func() {
			if b, err := s.out.ReadByte(); err == nil {
				first <- b
			}
		}()
		// The server wrote its head and 1 MiB at once; a path that passes
		// them on does so within milliseconds (the other test allows 10 s
		// for 512 KiB; this one waits 2 s for one byte).
		select {
		case <-first:
			t.Fatalf("id %s: the kept path passed the answer on before the server wrote its end: the account of the two paths (upstream.Handler) is out of date", order)
		case <-time.After(2 * time.Second):
		}
		s.send(`{"jsonrpc":"2.0","method":"notifications/rest"}`)
		var b byte
		within(t, 20*time.Second, "the answer once the server wrote its end", func() { b = <-first })
		whole := string(b) + s.line()
		checkMiBAnswer(t, whole, id, order)
	}
}
