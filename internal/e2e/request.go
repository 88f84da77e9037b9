package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// Request is one request Claude Code sent the stand-in model.
type Request struct {
	Seq    int
	At     time.Time
	Method string
	Path   string
	Header http.Header
	Body   []byte

	// Parsed /v1/messages fields.
	Model     string
	Stream    bool
	MaxTokens int
	System    string // all system prompt text blocks, joined
	Tools     []string
	Messages  []Message

	// Main is set for requests of the main agent loop; Turn is the script
	// index it was answered with (-1 for side requests).
	Main bool
	Turn int
}

// Message is one conversation message; string content becomes one text block.
type Message struct {
	Role    string
	Content []Block
}

// Block is one content block.
type Block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"` // tool_result: string or blocks
	IsError   bool            `json:"is_error,omitempty"`
}

// ToolResult is a tool_result block as the model saw it.
type ToolResult struct {
	ID      string
	Text    string // the text of its content
	IsError bool
}

func (r *Request) parse() error {
	var raw struct {
		Model     string          `json:"model"`
		Stream    bool            `json:"stream"`
		MaxTokens int             `json:"max_tokens"`
		System    json.RawMessage `json:"system"`
		Tools     []struct {
			Name string `json:"name"`
		} `json:"tools"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(r.Body, &raw); err != nil {
		return err
	}
	r.Model, r.Stream, r.MaxTokens = raw.Model, raw.Stream, raw.MaxTokens
	r.System = textOf(raw.System)
	for _, t := range raw.Tools {
		r.Tools = append(r.Tools, t.Name)
	}
	for _, m := range raw.Messages {
		msg := Message{Role: m.Role}
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			msg.Content = []Block{{Type: "text", Text: s}}
		} else if err := json.Unmarshal(m.Content, &msg.Content); err != nil {
			return err
		}
		r.Messages = append(r.Messages, msg)
	}
	return nil
}

// textOf returns the text of a string or of an array of text blocks.
func textOf(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []Block
	if json.Unmarshal(raw, &blocks) != nil {
		return ""
	}
	var parts []string
	for _, b := range blocks {
		if b.Text != "" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// isMainLoop tells the agent loop from side requests by the tool set: the
// main loop sends the agent's tools (Bash, the MCP tools); title
// generation, quota and topic checks send none. (With
// CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1, Claude Code 2.1.328 sent no
// side requests at all in -p or interactive sessions.)
func (r *Request) isMainLoop() bool {
	if len(r.Tools) == 0 {
		return false
	}
	for _, t := range r.Tools {
		if t == "Bash" || strings.HasPrefix(t, "mcp__") {
			return true
		}
	}
	return false
}

// assistantTurns counts assistant messages: the number of turns the model
// has already written in this conversation.
func (r *Request) assistantTurns() int {
	n := 0
	for _, m := range r.Messages {
		if m.Role == "assistant" {
			n++
		}
	}
	return n
}

// Tail returns the messages after the last assistant message: what is new
// to the model in this request (tool results, hook context, the prompt).
func (r *Request) Tail() []Message {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "assistant" {
			return r.Messages[i+1:]
		}
	}
	return r.Messages
}

// ToolResults returns the tool_result blocks in Tail.
func (r *Request) ToolResults() []ToolResult {
	var out []ToolResult
	for _, m := range r.Tail() {
		for _, b := range m.Content {
			if b.Type == "tool_result" {
				out = append(out, ToolResult{ID: b.ToolUseID, Text: textOf(b.Content), IsError: b.IsError})
			}
		}
	}
	return out
}

// ToolResult returns the result for tool_use id in Tail.
func (r *Request) ToolResult(id string) (ToolResult, bool) {
	for _, tr := range r.ToolResults() {
		if tr.ID == id {
			return tr, true
		}
	}
	return ToolResult{}, false
}

// Context returns the text the model got in Tail besides tool results and
// the prompt: role "system" messages, where Claude Code puts hook
// additionalContext after a tool result, and <system-reminder> text blocks.
func (r *Request) Context() string {
	var parts []string
	for _, m := range r.Tail() {
		for _, b := range m.Content {
			if b.Type != "text" {
				continue
			}
			if m.Role == "system" || strings.Contains(b.Text, "<system-reminder>") {
				parts = append(parts, b.Text)
			}
		}
	}
	return strings.Join(parts, "\n")
}

// HookContext returns the additionalContext hooks gave the model in Tail,
// keyed by hook name ("PostToolUseFailure:mcp__srv__tool", "PostToolBatch").
// Claude Code delivers it as a role "system" message after the tool
// results, one "<hook name> hook additional context: <text>" paragraph per
// hook.
func (r *Request) HookContext() map[string]string {
	const sep = " hook additional context: "
	out := map[string]string{}
	for _, m := range r.Tail() {
		if m.Role != "system" {
			continue
		}
		for _, b := range m.Content {
			// Paragraphs are separated by blank lines, but a context can
			// contain blank lines too: split on the separator instead.
			rest := b.Text
			name := ""
			for {
				i := strings.Index(rest, sep)
				if i < 0 {
					if name != "" {
						out[name] += strings.TrimSpace(rest)
					}
					break
				}
				head := rest[:i]
				j := strings.LastIndex(head, "\n\n")
				next := head
				if j >= 0 {
					next = head[j+2:]
					if name != "" {
						out[name] += strings.TrimSpace(head[:j])
					}
				}
				name = strings.TrimSpace(next)
				rest = rest[i+len(sep):]
			}
		}
	}
	return out
}

// UserText returns the plain user text blocks in Tail (the prompt, or an
// expanded slash command).
func (r *Request) UserText() string {
	var parts []string
	for _, m := range r.Tail() {
		if m.Role != "user" {
			continue
		}
		for _, b := range m.Content {
			if b.Type == "text" {
				parts = append(parts, b.Text)
			}
		}
	}
	return strings.Join(parts, "\n")
}
