//go:build unix

package interop

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// The client driver: the test binary, run by the conformance suite's
// client leg as the "client under test" (roleEnv=client-driver; argv: the
// mcp-heal binary, then the scenario server's URL the suite appends). It
// plays Claude Code: an MCP client on stdio, talking to `mcp-heal shim
// --url URL`, so what the suite judges on the HTTP side is the bridge. It
// does what the suite's reference client does for each scenario, no more:
// the protocol work under test (headers, SSE, sessions, retries) is the
// bridge's.

// driverConn is a line JSON-RPC client over the bridge's stdio that also
// answers the server's requests (elicitation, sampling, roots).
type driverConn struct {
	w       io.Writer
	wmu     sync.Mutex
	mu      sync.Mutex
	next    int
	pending map[string]chan []byte
	meta    map[string]any // the stateless era's per-request _meta; nil in the handshake era
}

func newDriverConn(r io.Reader, w io.Writer) *driverConn {
	d := &driverConn{w: w, pending: map[string]chan []byte{}}
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			line := append([]byte(nil), sc.Bytes()...)
			m, err := jsonrpc.Peek(line)
			if err != nil {
				continue
			}
			switch m.Kind {
			case jsonrpc.KindResponse:
				d.mu.Lock()
				ch := d.pending[string(m.ID)]
				delete(d.pending, string(m.ID))
				d.mu.Unlock()
				if ch != nil {
					ch <- line
				}
			case jsonrpc.KindRequest:
				d.write(jsonrpc.ResultReply(m.ID, answerServer(m.Method, line)))
			}
		}
		d.mu.Lock()
		for id, ch := range d.pending {
			close(ch)
			delete(d.pending, id)
		}
		d.mu.Unlock()
	}()
	return d
}

func (d *driverConn) write(b []byte) {
	d.wmu.Lock()
	defer d.wmu.Unlock()
	d.w.Write(append(b, '\n'))
}

// call sends a request (with the era's _meta) and returns the response.
func (d *driverConn) call(ctx context.Context, method string, params map[string]any) (gjson.Result, error) {
	if params == nil {
		params = map[string]any{}
	}
	if d.meta != nil {
		meta := map[string]any{}
		for k, v := range d.meta {
			meta[k] = v
		}
		if m, ok := params["_meta"].(map[string]any); ok {
			for k, v := range m {
				meta[k] = v
			}
		}
		params["_meta"] = meta
	}
	p, _ := json.Marshal(params)
	d.mu.Lock()
	d.next++
	id := []byte(strconv.Itoa(d.next))
	ch := make(chan []byte, 1)
	d.pending[string(id)] = ch
	d.mu.Unlock()
	d.write(jsonrpc.NewRequest(id, method, p))
	select {
	case line, ok := <-ch:
		if !ok {
			return gjson.Result{}, fmt.Errorf("%s: the bridge exited", method)
		}
		r := gjson.ParseBytes(line)
		if e := r.Get("error"); e.Exists() {
			return r, fmt.Errorf("%s: error %s", method, e.Raw)
		}
		return r.Get("result"), nil
	case <-ctx.Done():
		return gjson.Result{}, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// answerServer is the driver's answer to a server->client request: accept
// an elicitation with its schema's defaults, a fixed sampling text, no
// roots.
func answerServer(method string, line []byte) []byte {
	switch method {
	case "elicitation/create":
		content := map[string]any{}
		gjson.GetBytes(line, "params.requestedSchema.properties").ForEach(func(k, v gjson.Result) bool {
			if d := v.Get("default"); d.Exists() {
				content[k.Str] = d.Value()
			}
			return true
		})
		b, _ := json.Marshal(map[string]any{"action": "accept", "content": content})
		return b
	case "sampling/createMessage":
		return []byte(`{"role":"assistant","content":{"type":"text","text":"hello from the driver"},"model":"driver","stopReason":"endTurn"}`)
	case "roots/list":
		return []byte(`{"roots":[]}`)
	}
	return []byte(`{}`)
}

// clientDriver is the driver's main: argv is the mcp-heal binary and the
// scenario server's URL.
func clientDriver(argv []string) int {
	if len(argv) < 2 {
		fmt.Fprintln(os.Stderr, "client driver: want the mcp-heal binary and a URL")
		return 2
	}
	bin, url := argv[0], argv[len(argv)-1]
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	version := os.Getenv("MCP_CONFORMANCE_PROTOCOL_VERSION")
	if version == "" {
		version = "2025-11-25"
	}
	xdg, err := os.MkdirTemp("", "mcp-heal-driver-")
	if err != nil {
		return 2
	}
	defer os.RemoveAll(xdg)
	cmd := exec.Command(bin, "shim", "--name", "conformance", "--url", url, "--deadline", "15s")
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+xdg)
	cmd.Stderr = os.Stderr
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "client driver:", err)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	d := newDriverConn(out, in)
	err = drive(ctx, d, scenario, version)
	testenv.CloseAndWait(cmd, in, 10*time.Second)
	if err != nil {
		fmt.Fprintln(os.Stderr, "client driver:", scenario, err)
		return 1
	}
	return 0
}

// drive runs the scenario's client side.
func drive(ctx context.Context, d *driverConn, scenario, version string) error {
	var toolCalls []gjson.Result
	if c := os.Getenv("MCP_CONFORMANCE_CONTEXT"); c != "" {
		toolCalls = gjson.Get(c, "toolCalls").Array()
	}
	if version >= "2026-07-28" {
		d.meta = map[string]any{
			"io.modelcontextprotocol/protocolVersion":    version,
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "mcp-heal-conformance-driver", "version": "1.0.0"},
			"io.modelcontextprotocol/clientCapabilities": map[string]any{"roots": map[string]any{}, "sampling": map[string]any{}, "elicitation": map[string]any{}},
		}
		if _, err := d.call(ctx, "server/discover", nil); err != nil {
			if !strings.Contains(err.Error(), "-32022") {
				return err
			}
			// request-metadata: an unsupported version is answered with
			// the versions the server supports; use one both support.
			supported := gjson.Get(err.Error()[strings.Index(err.Error(), "{"):], "data.supported").Array()
			if len(supported) == 0 {
				return err
			}
			d.meta["io.modelcontextprotocol/protocolVersion"] = supported[0].Str
			if _, err := d.call(ctx, "server/discover", nil); err != nil {
				return err
			}
		}
	} else {
		if _, err := d.call(ctx, "initialize", map[string]any{
			"protocolVersion": version,
			"capabilities":    map[string]any{"roots": map[string]any{}, "sampling": map[string]any{}, "elicitation": map[string]any{}},
			"clientInfo":      map[string]any{"name": "mcp-heal-conformance-driver", "version": "1.0.0"},
		}); err != nil {
			return err
		}
		d.write(jsonrpc.NewNotification("notifications/initialized", nil))
		if scenario == "initialize" {
			return nil
		}
	}
	list, err := d.call(ctx, "tools/list", nil)
	if err != nil {
		return err
	}
	switch scenario {
	case "request-metadata", "json-schema-ref-no-deref":
		return nil
	case "sep-2322-client-request-state":
		return driveMRTR(ctx, d)
	case "json-schema-2020-12-preservation":
		// The schema the client saw goes back to the server verbatim; the
		// scenario diffs it against what it served.
		for _, t := range list.Get(`tools.#(name=="json_schema_2020_12_tool")`).Array() {
			var schema any
			json.Unmarshal([]byte(t.Get("inputSchema").Raw), &schema)
			_, err := d.call(ctx, "tools/call", map[string]any{"name": "json_schema_echo", "arguments": map[string]any{"schema": schema}})
			return err
		}
		return fmt.Errorf("no json_schema_2020_12_tool in tools/list: %s", list.Raw)
	}
	if len(toolCalls) > 0 {
		for _, tc := range toolCalls {
			args := map[string]any{}
			json.Unmarshal([]byte(tc.Get("arguments").Raw), &args)
			if _, err := d.call(ctx, "tools/call", map[string]any{"name": tc.Get("name").Str, "arguments": args}); err != nil {
				return err
			}
		}
		return nil
	}
	tools := list.Get("tools").Array()
	if scenario == "http-standard-headers" {
		for _, t := range tools {
			if _, err := d.call(ctx, "tools/call", map[string]any{"name": t.Get("name").Str, "arguments": sampleArgs(t.Get("inputSchema"))}); err != nil {
				return err
			}
		}
		res, err := d.call(ctx, "resources/list", nil)
		if err != nil {
			return err
		}
		for _, r := range res.Get("resources").Array() {
			if _, err := d.call(ctx, "resources/read", map[string]any{"uri": r.Get("uri").Str}); err != nil {
				return err
			}
		}
		prompts, err := d.call(ctx, "prompts/list", nil)
		if err != nil {
			return err
		}
		for _, p := range prompts.Get("prompts").Array() {
			args := map[string]any{}
			p.Get("arguments").ForEach(func(_, a gjson.Result) bool {
				args[a.Get("name").Str] = "value"
				return true
			})
			if _, err := d.call(ctx, "prompts/get", map[string]any{"name": p.Get("name").Str, "arguments": args}); err != nil {
				return err
			}
		}
		return nil
	}
	if len(tools) > 0 {
		if _, err := d.call(ctx, "tools/call", map[string]any{"name": tools[0].Get("name").Str, "arguments": map[string]any{"a": 2, "b": 3}}); err != nil {
			return err
		}
	}
	return nil
}

// sampleArgs fills a tool's required arguments with a value of their type.
func sampleArgs(schema gjson.Result) map[string]any {
	args := map[string]any{}
	schema.Get("properties").ForEach(func(k, v gjson.Result) bool {
		switch v.Get("type").Str {
		case "number", "integer":
			args[k.Str] = 1
		case "boolean":
			args[k.Str] = true
		default:
			args[k.Str] = "value"
		}
		return true
	})
	return args
}

// driveMRTR is the multi round-trip client flow (SEP-2322): each test_mrtr
// tool's input-required result is answered with the requested input and
// the server's requestState echoed unchanged (or none when it sent none),
// with an unrelated call in between that carries neither.
func driveMRTR(ctx context.Context, d *driverConn) error {
	round := func(name string) error {
		r, err := d.call(ctx, "tools/call", map[string]any{"name": name, "arguments": map[string]any{}})
		if err != nil || r.Get("resultType").Str != "input_required" {
			return err
		}
		responses := map[string]any{}
		r.Get("inputRequests").ForEach(func(k, v gjson.Result) bool {
			if v.Get("method").Str == "elicitation/create" {
				responses[k.Str] = map[string]any{"action": "accept", "content": map[string]any{"confirmed": true}}
			}
			return true
		})
		if name == "test_mrtr_echo_state" {
			if _, err := d.call(ctx, "tools/call", map[string]any{"name": "test_mrtr_unrelated", "arguments": map[string]any{}}); err != nil {
				return err
			}
		}
		params := map[string]any{"name": name, "arguments": map[string]any{}, "inputResponses": responses}
		if s := r.Get("requestState"); s.Exists() {
			params["requestState"] = s.Value()
		}
		_, err = d.call(ctx, "tools/call", params)
		return err
	}
	for _, name := range []string{"test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_no_result_type"} {
		if err := round(name); err != nil {
			return err
		}
	}
	return nil
}
