//go:build unix

package shim

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

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
