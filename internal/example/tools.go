package example

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
)

// Tool names; the annotations decide what a proxy may retry (tools/call is
// safe to re-send only when readOnlyHint or idempotentHint is true).
const (
	ToolEcho             = "echo"              // readOnlyHint
	ToolAdd              = "add"               // readOnlyHint
	ToolCounterIncrement = "counter_increment" // not idempotent
	ToolSetValue         = "set_value"         // idempotentHint
	ToolSlow             = "slow"              // readOnlyHint; sleeps ms
	ToolCrash            = "crash"             // exits the process mid-call
	ToolHang             = "hang"              // stops answering anything
	ToolSessionInfo      = "session_info"      // readOnlyHint; pid, version, level, subscriptions
)

// delayProp is accepted by every tool: sleep that long before acting, so a
// test can kill the server while the call is in flight.
var delayProp = map[string]any{"type": "integer", "description": "milliseconds to wait before acting"}

func schema(props map[string]any, required ...string) map[string]any {
	p := map[string]any{"delay_ms": delayProp}
	for k, v := range props {
		p[k] = v
	}
	s := map[string]any{"type": "object", "properties": p}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func annotations(title string, readOnly, idempotent, destructive bool) map[string]any {
	return map[string]any{
		"title":           title,
		"readOnlyHint":    readOnly,
		"idempotentHint":  idempotent,
		"destructiveHint": destructive,
		"openWorldHint":   false,
	}
}

func toolList() []map[string]any {
	str := map[string]any{"type": "string"}
	num := map[string]any{"type": "number"}
	return []map[string]any{
		{"name": ToolEcho, "description": "Returns its text.",
			"inputSchema": schema(map[string]any{"text": str}, "text"),
			"annotations": annotations("Echo", true, true, false)},
		{"name": ToolAdd, "description": "Adds a and b.",
			"inputSchema": schema(map[string]any{"a": num, "b": num}, "a", "b"),
			"annotations": annotations("Add", true, true, false)},
		{"name": ToolCounterIncrement, "description": "Adds one to a persistent counter and returns it. Not idempotent: running it twice counts twice.",
			"inputSchema": schema(nil),
			"annotations": annotations("Increment counter", false, false, false)},
		{"name": ToolSetValue, "description": "Sets key to value (idempotent).",
			"inputSchema": schema(map[string]any{"key": str, "value": str}, "key", "value"),
			"annotations": annotations("Set value", false, true, false)},
		{"name": ToolSlow, "description": "Waits ms milliseconds, sending progress if asked, then answers.",
			"inputSchema": schema(map[string]any{"ms": map[string]any{"type": "integer"}}, "ms"),
			"annotations": annotations("Slow read", true, true, false)},
		{"name": ToolCrash, "description": "Makes the server process exit while the call is running.",
			"inputSchema": schema(map[string]any{"code": map[string]any{"type": "integer", "description": "exit code (default 3)"}}),
			"annotations": map[string]any{"title": "Crash the server", "destructiveHint": true}},
		{"name": ToolHang, "description": "Makes the server stop answering anything, pings included.",
			"inputSchema": schema(nil),
			"annotations": map[string]any{"title": "Hang the server"}},
		{"name": ToolSessionInfo, "description": "Reports the server's pid, negotiated protocol version, log level and resource subscriptions.",
			"inputSchema": schema(nil),
			"annotations": annotations("Session info", true, true, false)},
	}
}

type callParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Meta      struct {
		ProgressToken json.RawMessage `json:"progressToken"`
	} `json:"_meta"`
}

type toolArgs struct {
	DelayMS int64    `json:"delay_ms"`
	Text    *string  `json:"text"`
	A       *float64 `json:"a"`
	B       *float64 `json:"b"`
	Key     string   `json:"key"`
	Value   string   `json:"value"`
	MS      int64    `json:"ms"`
	Code    *int     `json:"code"`
	Bytes   int64    `json:"bytes"`
}

func textResult(text string) map[string]any {
	return map[string]any{"content": []map[string]any{{"type": "text", "text": text}}}
}

// toolError is a tool's own failure: a result with isError, not a
// JSON-RPC error (tools spec: errors in tool execution are reported in the
// result so the model can see them).
func toolError(text string) map[string]any {
	r := textResult(text)
	r["isError"] = true
	return r
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *server) callTool(ctx context.Context, req request) (any, error) {
	var p callParams
	if err := json.Unmarshal(req.Params, &p); err != nil {
		return nil, &rpcError{jsonrpc.CodeInvalidParams, "tools/call: " + err.Error()}
	}
	var a toolArgs
	if len(p.Arguments) > 0 && string(p.Arguments) != "null" {
		if err := json.Unmarshal(p.Arguments, &a); err != nil {
			return nil, &rpcError{jsonrpc.CodeInvalidParams, "tools/call " + p.Name + ": " + err.Error()}
		}
	}
	s.event("call %s %s", p.Name, a.Key)
	known := false
	for _, t := range s.tools() {
		if t["name"] == p.Name {
			known = true
		}
	}
	if !known {
		return nil, &rpcError{jsonrpc.CodeInvalidParams, "unknown tool: " + p.Name}
	}
	if err := sleep(ctx, time.Duration(a.DelayMS)*time.Millisecond); err != nil {
		return nil, err
	}
	s.logCall(p.Name, p.Arguments)
	s.log("debug", "tools/call "+p.Name)
	if s.opts.JunkStdout {
		s.junk("calling " + p.Name + " (not JSON-RPC)")
	}
	if r, err, ok := s.testTool(ctx, req.ID, p.Name, a); ok {
		return r, err
	}
	switch p.Name {
	case ToolEcho:
		if a.Text == nil {
			return toolError("echo: missing text"), nil
		}
		return textResult(*a.Text), nil
	case ToolAdd:
		if a.A == nil || a.B == nil {
			return toolError("add: a and b are required"), nil
		}
		return textResult(strconv.FormatFloat(*a.A+*a.B, 'f', -1, 64)), nil
	case ToolCounterIncrement:
		n, err := s.increment()
		if err != nil {
			return toolError("counter_increment: " + err.Error()), nil
		}
		s.log("info", fmt.Sprintf("counter is now %d", n))
		s.resourceUpdated(counterURI)
		return textResult(strconv.Itoa(n)), nil
	case ToolSetValue:
		if a.Key == "" {
			return toolError("set_value: missing key"), nil
		}
		s.mu.Lock()
		s.values[a.Key] = a.Value
		s.mu.Unlock()
		return textResult(a.Key + "=" + a.Value), nil
	case ToolSlow:
		return s.slow(ctx, time.Duration(a.MS)*time.Millisecond, p.Meta.ProgressToken)
	case ToolCrash:
		code := 3
		if a.Code != nil {
			code = *a.Code
		}
		fmt.Fprintf(s.stderr, "example-server: crash tool called; exiting with code %d\n", code)
		s.crash(code, "crash tool")
		return nil, errNoReply
	case ToolHang:
		fmt.Fprintln(s.stderr, "example-server: hang tool called; no longer answering")
		s.mu.Lock()
		s.hung = true
		s.mu.Unlock()
		return nil, errNoReply
	case ToolSessionInfo:
		b, _ := json.Marshal(s.sessionInfo())
		return textResult(string(b)), nil
	}
	if s.isExtra("tool", p.Name) {
		return textResult(p.Name), nil
	}
	return nil, &rpcError{jsonrpc.CodeInvalidParams, "unknown tool: " + p.Name}
}

// slow waits d, sending notifications/progress about every 100 ms when the
// client gave a progress token.
func (s *server) slow(ctx context.Context, d time.Duration, token json.RawMessage) (any, error) {
	deadline := time.Now().Add(d)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		step := min(left, 100*time.Millisecond)
		if err := sleep(ctx, step); err != nil {
			return nil, err
		}
		if len(token) > 0 {
			done := d - time.Until(deadline)
			s.notify("notifications/progress", map[string]any{
				"progressToken": token,
				"progress":      min(done, d).Milliseconds(),
				"total":         d.Milliseconds(),
			})
		}
	}
	return textResult(fmt.Sprintf("waited %d ms", d.Milliseconds())), nil
}

// counterMu serialises counter updates across servers in one process (tests
// run several on the same file).
var counterMu sync.Mutex

func (s *server) increment() (int, error) {
	if s.opts.StateFile == "" {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.counter++
		return s.counter, nil
	}
	counterMu.Lock()
	defer counterMu.Unlock()
	n, err := ReadCounter(s.opts.StateFile)
	if err != nil {
		return 0, err
	}
	n++
	return n, writeFileAtomic(s.opts.StateFile, []byte(strconv.Itoa(n)+"\n"))
}

func (s *server) counterValue() int {
	if s.opts.StateFile == "" {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.counter
	}
	n, _ := ReadCounter(s.opts.StateFile)
	return n
}

// ReadCounter reads a counter file written by counter_increment (or
// --fail-file); a missing file is 0.
func ReadCounter(path string) (int, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	t := strings.TrimSpace(string(b))
	if t == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(t)
	if err != nil {
		return 0, fmt.Errorf("counter file %s: %w", path, err)
	}
	return n, nil
}

// writeFileAtomic writes via a temp file and rename, so a server killed
// mid-write leaves the old value, never half a number.
func writeFileAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".counter-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func (s *server) logCall(name string, args json.RawMessage) {
	if s.opts.CallLog == "" {
		return
	}
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	f, err := os.OpenFile(s.opts.CallLog, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		s.opts.Logger.Warn("call log", "err", err)
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s %s\n", name, compact(args))
}

func compact(b []byte) string {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return string(b)
	}
	out, _ := json.Marshal(v)
	return string(out)
}
