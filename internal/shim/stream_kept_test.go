//go:build unix

package shim

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

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
	rt, err := os.MkdirTemp("", "kw") // short: the keeper's socket path must stay under 104 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(rt) })
	env := []string{"XDG_RUNTIME_DIR=" + rt, "XDG_STATE_HOME=" + t.TempDir()}
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
		want := `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 1<<20) + `"}]}}` + "\n"
		if order == "last" {
			want = `{"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 1<<20) + `"}]},"jsonrpc":"2.0","id":` + id + `}` + "\n"
		}
		if whole != want {
			t.Fatalf("id %s: the answer differs from the server's (%d bytes against %d): %.80q…%q", order, len(whole), len(want), whole, whole[max(0, len(whole)-40):])
		}
	}
}
