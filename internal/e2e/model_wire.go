package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// The stand-in model's side of the Messages API wire format: the answer to
// a request, as JSON or as the SSE stream Claude Code asks for.

// message is an Anthropic Messages API response.
type message struct {
	ID           string           `json:"id"`
	Type         string           `json:"type"`
	Role         string           `json:"role"`
	Model        string           `json:"model"`
	Content      []map[string]any `json:"content"`
	StopReason   string           `json:"stop_reason"`
	StopSequence *string          `json:"stop_sequence"`
	Usage        map[string]int   `json:"usage"`
}

func answer(req *Request, t Turn) *message {
	msg := &message{
		ID:         fmt.Sprintf("msg_e2e_%d", req.Seq),
		Type:       "message",
		Role:       "assistant",
		Model:      req.Model,
		Content:    []map[string]any{},
		StopReason: "end_turn",
		Usage:      map[string]int{"input_tokens": 100, "output_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
	}
	if t.Text != "" || len(t.Tools) == 0 {
		text := t.Text
		if text == "" {
			text = "OK."
		}
		msg.Content = append(msg.Content, map[string]any{"type": "text", "text": text})
	}
	for i, tu := range t.Tools {
		in := tu.Input
		if in == nil {
			in = map[string]any{}
		}
		msg.Content = append(msg.Content, map[string]any{
			"type":  "tool_use",
			"id":    ToolUseID(req.Turn, i),
			"name":  tu.Name,
			"input": in,
		})
		msg.StopReason = "tool_use"
	}
	return msg
}

// ToolUseID is the id the model gives the i-th tool_use of turn.
func ToolUseID(turn, i int) string { return fmt.Sprintf("toolu_e2e_%02d_%d", turn, i) }

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// writeSSE streams msg with the Messages API's event sequence:
// message_start, per block content_block_start/delta/stop, message_delta,
// message_stop.
func writeSSE(w http.ResponseWriter, msg *message) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	fl, _ := w.(http.Flusher)
	event := func(name string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
		if fl != nil {
			fl.Flush()
		}
	}
	startJSON := map[string]any{
		"id": msg.ID, "type": "message", "role": "assistant", "model": msg.Model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]int{"input_tokens": msg.Usage["input_tokens"], "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
	}
	event("message_start", map[string]any{"type": "message_start", "message": startJSON})
	for i, b := range msg.Content {
		switch b["type"] {
		case "text":
			event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": b["text"]}})
		case "tool_use":
			event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}})
			in, _ := json.Marshal(b["input"])
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(in)}})
		}
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": msg.StopReason, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": msg.Usage["output_tokens"]}})
	event("message_stop", map[string]any{"type": "message_stop"})
}
