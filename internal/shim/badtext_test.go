//go:build unix

package shim

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/example"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

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
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	in, out := testenv.StartPiped(t, cmd)
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
	t.Cleanup(func() {
		testenv.CloseAndWait(cmd, in, 10*time.Second)
		if t.Failed() {
			t.Logf("%s stderr (tail):\n%s", argv[0], lastN(stderr.String(), 3000))
		}
	})
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
