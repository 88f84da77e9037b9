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
