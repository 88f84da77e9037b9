//go:build unix

package interop

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/procinfo"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// reply is one line from testdata/client.cjs: a command's outcome or an
// event.
type reply struct {
	ID     int             `json:"id"`
	OK     bool            `json:"ok"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
	MS    int64  `json:"ms"`
	Event string `json:"event"`
	at    time.Time
}

func (r reply) String() string {
	if r.OK {
		return fmt.Sprintf("ok %s", r.Result)
	}
	if r.Error != nil {
		return fmt.Sprintf("error %d %s %s", r.Error.Code, r.Error.Message, r.Error.Data)
	}
	return "no reply"
}

// tsClient drives the official TypeScript SDK client in a node process.
type tsClient struct {
	t  *testing.T
	in io.WriteCloser

	mu      sync.Mutex
	next    int
	waiters map[int]chan reply
	events  chan reply
}

// startTSClient starts the client script with serverCmd as the stdio
// server it spawns; env is added to the server's environment.
func startTSClient(t *testing.T, serverCmd []string, env map[string]string) *tsClient {
	t.Helper()
	sc, _ := json.Marshal(serverCmd)
	se, _ := json.Marshal(env)
	return startTSClientEnv(t, "SERVER_CMD="+string(sc), "SERVER_ENV="+string(se))
}

// startTSRemoteClient starts the client script connected straight to the
// remote server at url over transport, "http" (Streamable HTTP) or "sse".
func startTSRemoteClient(t *testing.T, url, transport string) *tsClient {
	t.Helper()
	return startTSClientEnv(t, "SERVER_URL="+url, "SERVER_TRANSPORT="+transport)
}

// startTSClientEnv starts the client script with env (see client.cjs).
func startTSClientEnv(t *testing.T, env ...string) *tsClient {
	t.Helper()
	prefix := testenv.NPM(t, npmClientPkgs...)
	script := filepath.Join(testenv.ModuleRoot(t), "internal", "interop", "testdata", "client.cjs")
	p := startStdio(t, "client/server", append([]string{"NODE_PATH=" + filepath.Join(prefix, "node_modules")}, env...), testenv.Node(t), script)
	c := &tsClient{t: t, in: p.in, waiters: map[int]chan reply{}, events: make(chan reply, 64)}
	go func() {
		sc := bufio.NewScanner(p.out)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			var r reply
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				continue
			}
			r.at = time.Now()
			if r.Event != "" {
				select {
				case c.events <- r:
				default:
				}
				continue
			}
			c.mu.Lock()
			ch := c.waiters[r.ID]
			delete(c.waiters, r.ID)
			c.mu.Unlock()
			if ch != nil {
				ch <- r
			}
		}
	}()
	return c
}

// connect connects the client to its server and returns the pid of the
// process it spawned: the shim, or the server when connected directly.
func (c *tsClient) connect() int {
	c.t.Helper()
	r := c.do(map[string]any{"op": "connect"})
	wantOK(c.t, "connect", r)
	var cr struct {
		PID int `json:"pid"`
	}
	json.Unmarshal(r.Result, &cr)
	return cr.PID
}

// start sends a command and returns where its reply will arrive.
func (c *tsClient) start(op map[string]any) <-chan reply {
	c.mu.Lock()
	c.next++
	id := c.next
	ch := make(chan reply, 1)
	c.waiters[id] = ch
	c.mu.Unlock()
	op["id"] = id
	b, _ := json.Marshal(op)
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatalf("write to node client: %v", err)
	}
	return ch
}

// do sends a command and waits for its reply.
func (c *tsClient) do(op map[string]any) reply {
	c.t.Helper()
	return c.wait(c.start(op), 60*time.Second)
}

func (c *tsClient) wait(ch <-chan reply, d time.Duration) reply {
	c.t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(d):
		c.t.Fatalf("no reply from the node client within %v", d)
	}
	return reply{}
}

func (c *tsClient) waitEvent(name string, d time.Duration) reply {
	c.t.Helper()
	deadline := time.After(d)
	for {
		select {
		case r := <-c.events:
			if r.Event == name {
				return r
			}
		case <-deadline:
			c.t.Fatalf("no %q event within %v", name, d)
		}
	}
}

func (c *tsClient) call(name string, args map[string]any) reply {
	c.t.Helper()
	return c.do(map[string]any{"op": "call", "name": name, "args": args})
}

// shimChild returns the pid of the server the shim shimPID runs, from the
// shim's state record under xdgState (the contract), waiting until the
// record says running with a live child other than not.
func shimChild(t *testing.T, xdgState string, shimPID, not int) int {
	t.Helper()
	path := filepath.Join(xdgState, "mcp-heal", "shims", strconv.Itoa(shimPID)+".json")
	deadline := time.Now().Add(15 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(path)
		if err == nil {
			var r state.Record
			if json.Unmarshal(b, &r) == nil {
				last = string(b)
				if r.State == state.Running && r.ChildPID > 0 && r.ChildPID != not && procinfo.Alive(r.ChildPID) {
					return r.ChildPID
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no running child in the state record of shim %d (want one other than %d); last record: %s", shimPID, not, last)
	return 0
}

func kill9(t *testing.T, pid int) time.Time {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 %d: %v", pid, err)
	}
	return time.Now()
}

// testWriter logs each line written to it.
type testWriter struct {
	t      *testing.T
	prefix string
	mu     sync.Mutex
	buf    string
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf += string(p)
	for {
		i := strings.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		line := w.buf[:i]
		w.buf = w.buf[i+1:]
		func() {
			defer func() { recover() }() // the test may have ended
			w.t.Log(w.prefix + line)
		}()
	}
	return len(p), nil
}
