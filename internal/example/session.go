package example

// The protocol side of the server: what each method does, the two eras'
// handshakes, the log level and the session state the tests inspect.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
)

// stateless reports whether params carry the stateless era's per-request
// protocol version.
func stateless(params json.RawMessage) bool {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	_, ok := p.Meta[metaProtocolVersion]
	return ok
}

func (s *server) dispatch(ctx context.Context, req request) (any, error) {
	s.noteRequest(req)
	switch req.Method {
	case "server/discover":
		if s.opts.Era == EraHandshake {
			return nil, &rpcError{jsonrpc.CodeMethodNotFound, "method not found: server/discover"}
		}
		return s.discover(), nil
	case "initialize":
		if s.opts.Era == EraStateless {
			return nil, &rpcError{jsonrpc.CodeMethodNotFound, "method not found: initialize"}
		}
		return s.initialize(req.Params)
	case "ping":
		return struct{}{}, nil
	}
	if !stateless(req.Params) {
		s.mu.Lock()
		ok := s.version != ""
		s.mu.Unlock()
		if !ok {
			// Lifecycle: the client SHOULD NOT send requests other than
			// pings before the server has responded to initialize. Being
			// strict here makes a proxy that forgets to replay the
			// handshake visible.
			return nil, &rpcError{jsonrpc.CodeInvalidRequest, fmt.Sprintf("method %q before initialize", req.Method)}
		}
	}
	switch req.Method {
	case "tools/list":
		return map[string]any{"tools": s.tools()}, nil
	case "tools/call":
		return s.callTool(ctx, req)
	case "resources/list":
		if hasCursor(req.Params) {
			if err := sleep(ctx, s.opts.Faults.CursorDelay); err != nil {
				return nil, err
			}
		}
		return map[string]any{"resources": s.resources()}, nil
	case "resources/templates/list":
		return map[string]any{"resourceTemplates": resourceTemplates()}, nil
	case "resources/read":
		return s.readResource(req.Params)
	case "resources/subscribe", "resources/unsubscribe":
		return s.subscribe(req.Method, req.Params)
	case "subscriptions/listen":
		return s.listen(ctx, req)
	case "prompts/list":
		return map[string]any{"prompts": s.prompts()}, nil
	case "prompts/get":
		return s.getPrompt(req.Params)
	case "logging/setLevel":
		return s.setLevel(req.Params)
	case "completion/complete":
		return map[string]any{"completion": map[string]any{"values": []string{}, "hasMore": false}}, nil
	}
	return nil, &rpcError{jsonrpc.CodeMethodNotFound, "method not found: " + req.Method}
}

func (s *server) capabilities() map[string]any {
	return map[string]any{
		"tools":     map[string]any{"listChanged": !s.opts.Faults.NoToolsListChanged},
		"resources": map[string]any{"subscribe": true, "listChanged": true},
		"prompts":   map[string]any{"listChanged": true},
		"logging":   map[string]any{},
	}
}

func (s *server) serverInfo() map[string]any {
	return map[string]any{"name": s.opts.Name, "version": "1.0.0"}
}

// discover answers server/discover (2026-07-28): the supported versions,
// capabilities, and serverInfo in _meta.
func (s *server) discover() any {
	versions := []string{StatelessVersion}
	if s.opts.Era == EraBoth {
		versions = append(versions, handshakeVersions...)
	}
	return map[string]any{
		"resultType":        "complete",
		"supportedVersions": versions,
		"capabilities":      s.capabilities(),
		"instructions":      "Example server built into mcp-heal.",
		"_meta":             map[string]any{metaServerInfo: s.serverInfo()},
	}
}

func (s *server) initialize(params json.RawMessage) (any, error) {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := json.Unmarshal(params, &p); err != nil || p.ProtocolVersion == "" {
		return nil, &rpcError{jsonrpc.CodeInvalidParams, "initialize: missing protocolVersion"}
	}
	if f := s.opts.Faults; f.MuteInitAfter > 0 && s.after(f.MuteInitAfter) {
		s.event("initialize %d muted", os.Getpid())
		return nil, errNoReply
	}
	s.event("initialize %d", os.Getpid())
	version := handshakeVersions[0]
	for _, v := range handshakeVersions {
		if v == p.ProtocolVersion {
			version = v
		}
	}
	if f := s.opts.Faults; f.Version != "" && (f.VersionAfter == 0 || s.after(f.VersionAfter)) {
		version = f.Version
	}
	s.mu.Lock()
	s.version = version
	s.initializes++
	s.mu.Unlock()
	return map[string]any{
		"protocolVersion": version,
		"capabilities":    s.capabilities(),
		"serverInfo":      s.serverInfo(),
		"instructions":    "Example server built into mcp-heal.",
	}, nil
}

// logLevels in RFC 5424 order, as logging/setLevel defines them.
var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

func (s *server) setLevel(params json.RawMessage) (any, error) {
	var p struct {
		Level string `json:"level"`
	}
	if json.Unmarshal(params, &p) != nil || !slices.Contains(logLevels, p.Level) {
		return nil, &rpcError{jsonrpc.CodeInvalidParams, "logging/setLevel: unknown level"}
	}
	s.mu.Lock()
	s.logLevel = p.Level
	s.mu.Unlock()
	return struct{}{}, nil
}

// log sends notifications/message when the client set a level at or below
// level (no messages before logging/setLevel).
func (s *server) log(level, text string) {
	s.mu.Lock()
	set := s.logLevel
	s.mu.Unlock()
	if set == "" || slices.Index(logLevels, level) < slices.Index(logLevels, set) {
		return
	}
	s.notify("notifications/message", map[string]any{"level": level, "logger": "example", "data": text})
}

// sessionInfo is what the session_info tool and example://session report:
// enough for a test to check that a proxy replayed the session.
func (s *server) sessionInfo() map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	subs := []string{}
	for u := range s.subs {
		subs = append(subs, u)
	}
	slices.Sort(subs)
	return map[string]any{
		"pid":             os.Getpid(),
		"protocolVersion": s.version,
		"initialized":     s.initialized,
		"initializes":     s.initializes,
		"logLevel":        s.logLevel,
		"subscriptions":   subs,
		"uptimeMs":        time.Since(s.started).Milliseconds(),
	}
}
