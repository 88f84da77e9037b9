//go:build unix

package bridge

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
)

// The stateless era (2026-07-28) over Streamable HTTP, through the real
// binary, against a go-sdk v1.8.0 server killed and restarted during
// calls while a subscriptions/listen stream is open.

// eraMeta is the per-request _meta of the stateless era.
const eraMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bridge-test","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`

// serveEra is a go-sdk v1.8.0 server in stateless mode (it answers
// server/discover and serves subscriptions/listen) that logs every POST
// it receives to dir/requests as "pid method name id cut", one line each.
// Its tools slow_read (readOnlyHint) and slow_write (no annotations)
// run while the file dir/block exists (a run is logged as "pid running
// read|write text false" when it starts, and as "pid cancelled read|write
// text false" when it is cancelled meanwhile); add_tool adds a tool, which
// tells the listen streams that asked for it
// (notifications/tools/list_changed).
// While the file dir/cut exists, it drops each subscriptions/listen
// stream 300 ms after it opened, with no response (cutAfter).
func serveEra(port, dir string) {
	log, err := os.OpenFile(filepath.Join(dir, "requests"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "era", Version: "1.0.0"}, nil)
	slow := func(kind string) func(context.Context, *mcp.CallToolRequest, echoIn) (*mcp.CallToolResult, any, error) {
		return func(ctx context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			fmt.Fprintf(log, "%d running %s %s false\n", os.Getpid(), kind, in.Text)
			for {
				if _, err := os.Stat(filepath.Join(dir, "block")); err != nil {
					break
				}
				select {
				case <-ctx.Done():
					fmt.Fprintf(log, "%d cancelled %s %s false\n", os.Getpid(), kind, in.Text)
					return nil, nil, ctx.Err()
				case <-time.After(10 * time.Millisecond):
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: kind + ":" + in.Text}}}, nil, nil
		}
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "slow_read", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, slow("read"))
	mcp.AddTool(srv, &mcp.Tool{Name: "slow_write"}, slow("write"))
	// mrtr_read (readOnlyHint) and mrtr_write: multi round-trip calls
	// (SEP-2322). The first round asks for input, with a requestState
	// naming this process; the continuation runs like slow_read and
	// answers with the requestState it got.
	mrtr := func(kind string) func(context.Context, *mcp.CallToolRequest, echoIn) (*mcp.CallToolResult, any, error) {
		return func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			if len(req.Params.InputResponses) == 0 {
				return &mcp.CallToolResult{
					InputRequests: mcp.InputRequestMap{"confirm": &mcp.ElicitParams{Message: "go on?"}},
					RequestState:  fmt.Sprintf("state-of-%d", os.Getpid()),
				}, nil, nil
			}
			r, _, err := slow("mrtr-"+kind)(ctx, req, in)
			if err != nil {
				return nil, nil, err
			}
			r.Content = append(r.Content, &mcp.TextContent{Text: req.Params.RequestState})
			return r, nil, nil
		}
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "mrtr_read", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, mrtr("read"))
	mcp.AddTool(srv, &mcp.Tool{Name: "mrtr_write"}, mrtr("write"))
	mcp.AddTool(srv, &mcp.Tool{Name: "add_tool"}, func(ctx context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		mcp.AddTool(srv, &mcp.Tool{Name: in.Text}, slow("added"))
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "added:" + in.Text}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless: true,
		// The 2026-07-28 rule (a closed stream cancels its request),
		// which go-sdk v1.8.0 keeps behind this option.
		PropagateRequestCancellation: true,
	})
	pid := os.Getpid()
	err = http.ListenAndServe("127.0.0.1:"+port, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if m, err := jsonrpc.Peek(body); err == nil && m.Kind == jsonrpc.KindRequest {
				name := gjson.GetBytes(body, "params.name").Str
				if name == "" {
					name = "-"
				}
				_, err := os.Stat(filepath.Join(dir, "cut"))
				cut := err == nil && m.Method == "subscriptions/listen"
				fmt.Fprintf(log, "%d %s %s %s %v\n", pid, m.Method, name, m.ID, cut)
				if cut {
					cutAfter(w, r, h, 300*time.Millisecond)
					return
				}
			}
		}
		h.ServeHTTP(w, r)
	}))
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

// cutAfter serves r, then after d closes the connection under it with no
// response (net/http's ErrAbortHandler): the server, alive, drops the
// stream. What the handler writes after d is discarded.
func cutAfter(w http.ResponseWriter, r *http.Request, h http.Handler, d time.Duration) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	cw := &cutWriter{w: w}
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(cw, r.WithContext(ctx))
	}()
	select {
	case <-done:
		return
	case <-time.After(d):
	}
	cw.mu.Lock()
	cw.cut = true
	cw.mu.Unlock()
	cancel()
	<-done
	panic(http.ErrAbortHandler)
}

type cutWriter struct {
	w   http.ResponseWriter
	mu  sync.Mutex
	cut bool
}

func (c *cutWriter) Header() http.Header { return c.w.Header() }

func (c *cutWriter) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cut {
		return 0, http.ErrHandlerTimeout
	}
	return c.w.Write(b)
}

func (c *cutWriter) WriteHeader(code int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.cut {
		c.w.WriteHeader(code)
	}
}

func (c *cutWriter) Flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f, ok := c.w.(http.Flusher); ok && !c.cut {
		f.Flush()
	}
}

// eraListen is the params of a subscriptions/listen for tools/list_changed.
const eraListen = `{"notifications":{"toolsListChanged":true},` + eraMeta + `}`

// startEra starts a statelessEra server and a shim bridging to it,
// discovers the server and lists its tools through the shim, and opens a
// subscriptions/listen stream (sh.listen), whose id and response channel
// it returns.
func startEra(t *testing.T) (srv *server, sh *shimProc, listenID string, listenCh chan []byte) {
	t.Helper()
	srv = newServer(t, statelessEra)
	sh = startShim(t, "--name", "era", "--url", srv.URL)
	for _, method := range []string{"server/discover", "tools/list"} {
		if _, err := sh.ok(method, "{"+eraMeta+"}", 30*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	listenID, listenCh = sh.listen(t)
	return srv, sh, listenID, listenCh
}

// touch makes the file name in the server's directory (block, cut: see
// serveEra) and returns its path.
func (s *server) touch(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(s.Dir, name)
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// listen opens a subscriptions/listen stream and waits for its
// acknowledgement; it returns the request's id and the channel its
// response would come on.
func (s *shimProc) listen(t *testing.T) (string, chan []byte) {
	t.Helper()
	id, ch := s.start("subscriptions/listen", eraListen)
	s.waitNote(t, "notifications/subscriptions/acknowledged", id)
	return id, ch
}

// addToolHeard adds a tool to the server and waits for the
// notifications/tools/list_changed of the listen stream listenID, which
// must still be open (its request not answered).
func (s *shimProc) addToolHeard(t *testing.T, tool, listenID string, listenCh chan []byte) {
	t.Helper()
	if _, err := s.ok("tools/call", `{"name":"add_tool","arguments":{"text":"`+tool+`"},`+eraMeta+`}`, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	s.waitNote(t, "notifications/tools/list_changed", listenID)
	select {
	case l := <-listenCh:
		t.Errorf("the listen request was answered: %s", l)
	default:
	}
}

// eraRequest is one line of serveEra's log.
type eraRequest struct {
	pid, method, name, id string
	cut                   bool // a listen stream the server drops
}

func (s *server) requests(t *testing.T) []eraRequest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.Dir, "requests"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []eraRequest
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if f := strings.Fields(l); len(f) == 5 {
			out = append(out, eraRequest{f[0], f[1], f[2], f[3], f[4] == "true"})
		}
	}
	return out
}

// waitRequests waits until the server's log satisfies ok.
func (s *server) waitRequests(t *testing.T, what string, ok func([]eraRequest) bool) []eraRequest {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := s.requests(t)
		if ok(r) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server never received %s; it received %v", what, r)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitCalls waits until the server has received the tools/call requests
// with these ids.
func (s *server) waitCalls(t *testing.T, ids ...string) []eraRequest {
	t.Helper()
	return s.waitRequests(t, fmt.Sprintf("the calls %v", ids), func(rs []eraRequest) bool {
		n := 0
		for _, r := range rs {
			if r.method == "tools/call" && slices.Contains(ids, r.id) {
				n++
			}
		}
		return n == len(ids)
	})
}

// waitRunning waits until the server's slow tools have started the runs
// named "read|write text".
func (s *server) waitRunning(t *testing.T, runs ...string) {
	t.Helper()
	s.waitRequests(t, fmt.Sprintf("the runs %v", runs), func(rs []eraRequest) bool {
		n := 0
		for _, r := range rs {
			if r.method == "running" && slices.Contains(runs, r.name+" "+r.id) {
				n++
			}
		}
		return n == len(runs)
	})
}

// restartDuring waits until the calls with these ids, held by the file
// block, reach the server, then kills it, removes block and starts it
// again. It returns the pid of the process killed.
func (s *server) restartDuring(t *testing.T, block string, ids ...string) string {
	t.Helper()
	pid := s.waitCalls(t, ids...)[0].pid
	s.Stop()
	os.Remove(block)
	s.Start()
	return pid
}

// start sends a request and returns its id and the channel its response
// comes on.
func (s *shimProc) start(method, params string) (string, chan []byte) {
	id := fmt.Appendf(nil, "%d", s.next.Add(1))
	ch := make(chan []byte, 1)
	s.mu.Lock()
	s.waiters[string(id)] = ch
	s.mu.Unlock()
	s.write(jsonrpc.NewRequest(id, method, []byte(params)))
	return string(id), ch
}

func wait(t *testing.T, what string, ch chan []byte) []byte {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: no response in 30s", what)
		return nil
	}
}

// startCall starts a tools/call of tool with the argument text.
func (s *shimProc) startCall(tool, text string) (string, chan []byte) {
	return s.start("tools/call", `{"name":"`+tool+`","arguments":{"text":"`+text+`"},`+eraMeta+`}`)
}

// waitNote waits for a notification of method whose subscriptionId is
// sub, skipping others.
func (s *shimProc) waitNote(t *testing.T, method, sub string) []byte {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case n := <-s.notes:
			got := gjson.GetBytes(n, "params._meta."+gjson.Escape("io.modelcontextprotocol/subscriptionId")).Raw
			if gjson.GetBytes(n, "method").Str == method && got == sub {
				return n
			}
			t.Logf("notification: %s", n)
		case <-deadline:
			t.Fatalf("no %s for subscription %s in 30s", method, sub)
			return nil
		}
	}
}

// A server killed and restarted during two calls, a listen stream open:
// the stream closing cancelled both calls at the server (2026-07-28,
// Streamable HTTP, "Cancellation"), so what is re-issued is a new request
// with a new id: the read-only call comes back under the client's own id;
// the other call gets one error saying its outcome is unknown, and never
// reaches the new server; the listen stream is re-established under a new
// id, and its notifications reach the client under the client's own
// subscription id.
func TestShimStatelessLostStream(t *testing.T) {
	srv, sh, listenID, listenCh := startEra(t)

	block := srv.touch(t, "block")
	readID, readCh := sh.startCall("slow_read", "r")
	writeID, writeCh := sh.startCall("slow_write", "w")
	pid := srv.restartDuring(t, block, readID, writeID)

	r := wait(t, "slow_read", readCh)
	if got := gjson.GetBytes(r, "result.content.0.text").Str; got != "read:r" {
		t.Errorf("the read-only call: got %s, want its result", r)
	}
	w := wait(t, "slow_write", writeCh)
	msg := gjson.GetBytes(w, "error.message").Str
	if gjson.GetBytes(w, "error.code").Int() != jsonrpc.CodeInternalError || !strings.Contains(msg, "may or may not have taken effect") {
		t.Errorf("the other call: got %s, want one -32603 error saying its outcome is unknown", w)
	}
	t.Logf("the other call's error: %s", msg)

	// The listen stream is back: a change on the new server reaches the
	// client under its own subscription id.
	sh.addToolHeard(t, "fresh", listenID, listenCh)

	var reissued []eraRequest
	for _, rq := range srv.requests(t) {
		if rq.pid == pid {
			continue
		}
		reissued = append(reissued, rq)
		switch {
		case rq.method == "tools/call" && rq.name == "slow_write":
			t.Errorf("the call that is not safe to re-send reached the new server: %v", rq)
		case rq.method == "tools/call" && rq.name == "slow_read" && rq.id == readID,
			rq.method == "subscriptions/listen" && rq.id == listenID:
			t.Errorf("%s was re-issued under its old id %s: a lost stream cancelled that request, so it must be a new one", rq.method, rq.id)
		}
	}
	t.Logf("requests to the new server: %v", reissued)
}

// A listen stream the server (alive) closes without a response is
// re-opened under a new id, its notifications still under the client's
// subscription id, and nothing else is lost with it: a call in flight on
// another stream gets its answer. One the server keeps closing at once is
// re-opened a bounded number of times (3 opens in a row within 10 s),
// then the client gets one error, not a loop, and the other listen
// streams are untouched.
func TestShimStatelessListenReopen(t *testing.T) {
	srv, sh, id, ch := startEra(t)
	listens := func() []string {
		var ids []string
		for _, r := range srv.requests(t) {
			if r.method == "subscriptions/listen" {
				ids = append(ids, r.id)
			}
		}
		return ids
	}
	block := srv.touch(t, "block")
	wid, wch := sh.startCall("slow_write", "w")
	srv.waitCalls(t, wid)

	// Closed once (the server cuts the next listen it opens): re-opened.
	cut := srv.touch(t, "cut")
	id2, ch2 := sh.listen(t)
	srv.waitRequests(t, "a re-opened listen", func([]eraRequest) bool { return len(listens()) >= 3 })
	os.Remove(cut)
	srv.waitRequests(t, "a listen it keeps open", func(rs []eraRequest) bool {
		last := eraRequest{}
		for _, r := range rs {
			if r.method == "subscriptions/listen" {
				last = r
			}
		}
		return !last.cut
	})
	os.Remove(block)
	w := wait(t, "slow_write", wch)
	if got := gjson.GetBytes(w, "result.content.0.text").Str; got != "write:w" {
		t.Errorf("the call in flight while a listen stream was closed: got %s, want its result", w)
	}
	if _, err := sh.ok("tools/call", `{"name":"add_tool","arguments":{"text":"fresh"},`+eraMeta+`}`, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	deadline := time.After(30 * time.Second)
	for !got[id] || !got[id2] {
		select {
		case n := <-sh.notes:
			if gjson.GetBytes(n, "method").Str == "notifications/tools/list_changed" {
				got[gjson.GetBytes(n, "params._meta."+gjson.Escape("io.modelcontextprotocol/subscriptionId")).Raw] = true
			}
		case r := <-ch:
			t.Fatalf("listen %s answered: %s", id, r)
		case r := <-ch2:
			t.Fatalf("listen %s answered: %s", id2, r)
		case <-deadline:
			t.Fatalf("list_changed reached subscriptions %v, want %s and %s", got, id, id2)
		}
	}
	seen := map[string]bool{}
	for _, l := range listens() {
		if seen[l] {
			t.Errorf("listen id %s sent twice: %v", l, listens())
		}
		seen[l] = true
	}
	t.Logf("listens the server got: %v", listens())

	// Closed every time: bounded.
	srv.touch(t, "cut")
	before := len(listens())
	id3, ch3 := sh.start("subscriptions/listen", eraListen)
	var r []byte
	select {
	case r = <-ch3:
	case <-time.After(30 * time.Second):
		t.Fatalf("a listen the server keeps closing was never given up: the server got %v", listens()[before:])
	}
	msg := gjson.GetBytes(r, "error.message").Str
	if gjson.GetBytes(r, "error.code").Int() != jsonrpc.CodeInternalError || !strings.Contains(msg, "3 times in a row") {
		t.Errorf("listen %s: got %s, want one -32603 error after 3 opens", id3, r)
	}
	t.Logf("the listen's error: %s", msg)
	time.Sleep(time.Second)
	if n := len(listens()) - before; n != 3 {
		t.Errorf("the server got %d listens while it kept closing one (want 3: the others untouched): %v", n, listens()[before:])
	}
	select {
	case r := <-ch:
		t.Errorf("listen %s answered: %s", id, r)
	case r := <-ch2:
		t.Errorf("listen %s answered: %s", id2, r)
	default:
	}
}

// The client cancels a call of the stateless era: on Streamable HTTP the
// cancellation is closing the call's response stream (2026-07-28, no
// notifications/cancelled is expected), so the server's handler stops; a
// call and a listen stream in flight on other streams are untouched.
func TestShimStatelessCancelClosesStream(t *testing.T) {
	srv, sh, listenID, listenCh := startEra(t)
	block := srv.touch(t, "block")
	wid, _ := sh.startCall("slow_write", "cancel-me")
	_, rch := sh.startCall("slow_read", "keep")
	// Both handlers run: a call whose stream closes before its handler
	// starts is never run, so there is no cancellation for it to see.
	srv.waitRunning(t, "write cancel-me", "read keep")
	sh.write([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + wid + `,"reason":"user"}}`))
	srv.waitRequests(t, "the cancellation of slow_write (its handler never saw one)", func(rs []eraRequest) bool {
		for _, r := range rs {
			if r.method == "cancelled" && r.name == "write" && r.id == "cancel-me" {
				return true
			}
		}
		return false
	})
	for _, r := range srv.requests(t) {
		if r.method == "cancelled" && r.id != "cancel-me" {
			t.Errorf("another call was cancelled: %v", r)
		}
	}
	os.Remove(block)
	if r := wait(t, "slow_read", rch); gjson.GetBytes(r, "result.content.0.text").Str != "read:keep" {
		t.Errorf("the other call: got %s, want its result", r)
	}
	sh.addToolHeard(t, "later", listenID, listenCh)
}

// A server killed during the continuation of a multi round-trip call
// (SEP-2322) over HTTP: the continuation of a read-only tool is re-issued
// as a new request under a new id, inputResponses and requestState as
// the client sent them (the new stateless process accepts the old
// state); the other one gets one error that says to start the call again
// from the first round. Neither first round is sent again.
func TestShimStatelessMRTRKilled(t *testing.T) {
	srv, sh, _, _ := startEra(t)
	state := map[string]string{}
	for _, name := range []string{"mrtr_read", "mrtr_write"} {
		r, err := sh.ok("tools/call", `{"name":"`+name+`","arguments":{"text":"m"},`+eraMeta+`}`, 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if gjson.GetBytes(r, "result.resultType").Str != "input_required" {
			t.Fatalf("%s, first round: %s", name, r)
		}
		state[name] = gjson.GetBytes(r, "result.requestState").Str
	}
	block := srv.touch(t, "block")
	cont := func(name string) string {
		return `{"name":"` + name + `","arguments":{"text":"m"},"inputResponses":{"confirm":{"action":"accept","content":{}}},"requestState":"` + state[name] + `",` + eraMeta + `}`
	}
	readID, readCh := sh.start("tools/call", cont("mrtr_read"))
	writeID, writeCh := sh.start("tools/call", cont("mrtr_write"))
	pid := srv.restartDuring(t, block, readID, writeID)

	r := wait(t, "mrtr_read", readCh)
	if got := gjson.GetBytes(r, "result.content.0.text").Str + " " + gjson.GetBytes(r, "result.content.1.text").Str; got != "mrtr-read:m "+state["mrtr_read"] {
		t.Errorf("the read-only continuation: got %s, want its result with the old process's requestState", r)
	}
	w := wait(t, "mrtr_write", writeCh)
	msg := gjson.GetBytes(w, "error.message").Str
	if gjson.GetBytes(w, "error.code").Int() != jsonrpc.CodeInternalError || !strings.Contains(msg, "start the call again from the first round") || !strings.Contains(msg, "may or may not have taken effect") {
		t.Errorf("the other continuation: got %s, want one -32603 error: outcome unknown, start again", w)
	}
	t.Logf("the other continuation's error: %s", msg)
	var again []eraRequest
	for _, rq := range srv.requests(t) {
		if rq.pid == pid || rq.method != "tools/call" {
			continue
		}
		again = append(again, rq)
		if rq.name != "mrtr_read" || rq.id == readID {
			t.Errorf("sent to the new server: %v (want only the read-only continuation, under a new id)", rq)
		}
	}
	if len(again) != 1 {
		t.Errorf("calls to the new server: %v, want the one read-only continuation", again)
	}
}
