package example

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"strconv"
	"strings"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
)

// Resource URIs.
const (
	helloURI   = "example://hello"
	counterURI = "example://counter" // updated by counter_increment
	sessionURI = "example://session" // same JSON as the session_info tool
)

func resourceList() []map[string]any {
	return []map[string]any{
		{"uri": helloURI, "name": "hello", "mimeType": "text/plain", "description": "A fixed greeting."},
		{"uri": counterURI, "name": "counter", "mimeType": "text/plain", "description": "counter_increment's counter; subscribe to hear about changes."},
		{"uri": sessionURI, "name": "session", "mimeType": "application/json", "description": "This server process: pid, protocol version, log level, subscriptions."},
	}
}

func resourceTemplates() []map[string]any {
	return []map[string]any{
		{"uriTemplate": "example://echo/{text}", "name": "echo", "mimeType": "text/plain"},
	}
}

type uriParams struct {
	URI string `json:"uri"`
}

func (s *server) readResource(params json.RawMessage) (any, error) {
	var p uriParams
	if json.Unmarshal(params, &p) != nil || p.URI == "" {
		return nil, &rpcError{jsonrpc.CodeInvalidParams, "resources/read: missing uri"}
	}
	var text, mime string
	switch {
	case p.URI == helloURI:
		text, mime = "Hello from the mcp-heal example server.", "text/plain"
	case p.URI == counterURI:
		text, mime = strconv.Itoa(s.counterValue()), "text/plain"
	case p.URI == sessionURI:
		b, _ := json.Marshal(s.sessionInfo())
		text, mime = string(b), "application/json"
	case strings.HasPrefix(p.URI, "example://echo/"):
		text, mime = strings.TrimPrefix(p.URI, "example://echo/"), "text/plain"
	case s.isExtra("resource", p.URI):
		text, mime = p.URI, "text/plain"
	default:
		// Resources spec: resource not found is -32002.
		return nil, &rpcError{-32002, "resource not found: " + p.URI}
	}
	return map[string]any{"contents": []map[string]any{{"uri": p.URI, "mimeType": mime, "text": text}}}, nil
}

func (s *server) subscribe(method string, params json.RawMessage) (any, error) {
	var p uriParams
	if json.Unmarshal(params, &p) != nil || p.URI == "" {
		return nil, &rpcError{jsonrpc.CodeInvalidParams, method + ": missing uri"}
	}
	s.mu.Lock()
	if method == "resources/subscribe" {
		s.subs[p.URI] = true
	} else {
		delete(s.subs, p.URI)
	}
	s.mu.Unlock()
	return struct{}{}, nil
}

// listen serves subscriptions/listen (2026-07-28): acknowledge what is
// honoured, then keep the request open, carrying resource updates tagged
// with the listen request's id, until the client cancels it.
func (s *server) listen(ctx context.Context, req request) (any, error) {
	var p struct {
		Notifications *struct {
			ResourceSubscriptions []string `json:"resourceSubscriptions"`
			ToolsListChanged      bool     `json:"toolsListChanged"`
			PromptsListChanged    bool     `json:"promptsListChanged"`
			ResourcesListChanged  bool     `json:"resourcesListChanged"`
		} `json:"notifications"`
	}
	if json.Unmarshal(req.Params, &p) != nil || p.Notifications == nil {
		return nil, &rpcError{jsonrpc.CodeInvalidParams, "subscriptions/listen: missing notifications"}
	}
	key := string(req.ID)
	l := listen{resources: map[string]bool{}, lists: map[string]bool{
		"toolsListChanged":     p.Notifications.ToolsListChanged,
		"promptsListChanged":   p.Notifications.PromptsListChanged,
		"resourcesListChanged": p.Notifications.ResourcesListChanged,
	}}
	for _, u := range p.Notifications.ResourceSubscriptions {
		l.resources[u] = true
	}
	s.mu.Lock()
	s.listens[key] = l
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listens, key)
		s.mu.Unlock()
	}()
	s.notify("notifications/subscriptions/acknowledged", map[string]any{
		"_meta": map[string]any{metaSubscriptionID: req.ID},
		"notifications": map[string]any{
			"resourceSubscriptions": p.Notifications.ResourceSubscriptions,
			"toolsListChanged":      p.Notifications.ToolsListChanged,
			"promptsListChanged":    p.Notifications.PromptsListChanged,
			"resourcesListChanged":  p.Notifications.ResourcesListChanged,
		},
	})
	<-ctx.Done()
	return nil, errNoReply
}

// resourceUpdated tells subscribers (handshake-era resources/subscribe and
// stateless-era listen streams) that uri changed.
func (s *server) resourceUpdated(uri string) {
	s.mu.Lock()
	legacy := s.subs[uri]
	s.mu.Unlock()
	if legacy {
		s.notify("notifications/resources/updated", map[string]any{"uri": uri})
	}
	s.notifyListens(func(l listen) bool { return l.resources[uri] }, "notifications/resources/updated", map[string]any{"uri": uri})
}

// notifyListens sends method on every subscriptions/listen stream that
// wants it, with params and the stream's id in _meta (2026-07-28:
// io.modelcontextprotocol/subscriptionId).
func (s *server) notifyListens(wants func(listen) bool, method string, params map[string]any) {
	s.mu.Lock()
	var ids []string
	for id, l := range s.listens {
		if wants(l) {
			ids = append(ids, id)
		}
	}
	s.mu.Unlock()
	for _, id := range ids {
		p := maps.Clone(params)
		p["_meta"] = map[string]any{metaSubscriptionID: json.RawMessage(id)}
		s.notify(method, p)
	}
}

func promptList() []map[string]any {
	return []map[string]any{
		{"name": "greet", "description": "Greets someone.",
			"arguments": []map[string]any{{"name": "name", "description": "who to greet", "required": true}}},
	}
}

func (s *server) getPrompt(params json.RawMessage) (any, error) {
	var p struct {
		Name      string            `json:"name"`
		Arguments map[string]string `json:"arguments"`
	}
	err := json.Unmarshal(params, &p)
	if err == nil && s.isExtra("prompt", p.Name) {
		return map[string]any{"messages": []map[string]any{{"role": "user",
			"content": map[string]any{"type": "text", "text": p.Name}}}}, nil
	}
	if err != nil || p.Name != "greet" {
		return nil, &rpcError{jsonrpc.CodeInvalidParams, "unknown prompt: " + p.Name}
	}
	name := p.Arguments["name"]
	if name == "" {
		return nil, &rpcError{jsonrpc.CodeInvalidParams, "prompts/get greet: missing argument name"}
	}
	return map[string]any{
		"description": "A greeting",
		"messages": []map[string]any{{"role": "user",
			"content": map[string]any{"type": "text", "text": "Please greet " + name + "."}}},
	}, nil
}

// failStart implements --fail-starts: count this start in FailFile and fail
// the first FailStarts of them, as a server with a broken environment does.
// n is this start's number (1 without a FailFile).
func failStart(opts Options, stderr io.Writer) (n int, err error) {
	if opts.FailFile == "" {
		if opts.FailStarts > 0 {
			return 0, fmt.Errorf("--fail-starts needs --fail-file")
		}
		return 1, nil
	}
	counterMu.Lock()
	defer counterMu.Unlock()
	n, err = ReadCounter(opts.FailFile)
	if err != nil {
		return 0, err
	}
	n++
	if err := writeFileAtomic(opts.FailFile, []byte(strconv.Itoa(n)+"\n")); err != nil {
		return 0, err
	}
	if n <= opts.FailStarts {
		fmt.Fprintf(stderr, "example-server: simulated start failure %d of %d: cannot open database (connection refused)\n", n, opts.FailStarts)
		return n, &ExitError{Code: 1, Reason: fmt.Sprintf("simulated start failure %d of %d", n, opts.FailStarts)}
	}
	return n, nil
}
