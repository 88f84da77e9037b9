package e2e

import (
	"bufio"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// post sends a Messages API request body to the model.
func post(t *testing.T, m *Model, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(m.URL+"/v1/messages?beta=true", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

const mainTools = `"tools":[{"name":"Bash"},{"name":"mcp__ex__echo"}]`

func TestModelStreamsScriptedTurns(t *testing.T) {
	m, err := NewModel(
		Turn{Text: "calling", Tools: []ToolUse{{Name: "mcp__ex__echo", Input: map[string]any{"text": "hi"}}}},
		Turn{Text: "done"},
	)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	resp := post(t, m, `{"model":"claude-x","stream":true,`+mainTools+`,"messages":[{"role":"user","content":"go"}]}`)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("got Content-Type %q, want text/event-stream", ct)
	}
	var events []string
	var toolJSON string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "event: "); ok {
			events = append(events, name)
		}
		if data, ok := strings.CutPrefix(line, "data: "); ok && strings.Contains(data, "input_json_delta") {
			var d struct {
				Delta struct {
					PartialJSON string `json:"partial_json"`
				} `json:"delta"`
			}
			json.Unmarshal([]byte(data), &d)
			toolJSON = d.Delta.PartialJSON
		}
	}
	want := []string{"message_start",
		"content_block_start", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_stop",
		"message_delta", "message_stop"}
	if !reflect.DeepEqual(events, want) {
		t.Errorf("got events %v, want %v", events, want)
	}
	if toolJSON != `{"text":"hi"}` {
		t.Errorf("got tool input %q, want {\"text\":\"hi\"}", toolJSON)
	}

	// The next request carries one assistant message: turn 1, as JSON.
	resp = post(t, m, `{"model":"claude-x",`+mainTools+`,"messages":[
		{"role":"user","content":"go"},
		{"role":"assistant","content":[{"type":"tool_use","id":"toolu_e2e_00_0","name":"mcp__ex__echo","input":{"text":"hi"}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_e2e_00_0","content":[{"type":"text","text":"hi"}]}]},
		{"role":"system","content":[{"type":"text","text":"PostToolUseFailure:mcp__ex__echo hook additional context: first\n\nline two\n\nPostToolBatch hook additional context: second"}]}]}`)
	var msg struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		StopReason string `json:"stop_reason"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
		t.Fatal(err)
	}
	if len(msg.Content) != 1 || msg.Content[0].Text != "done" || msg.StopReason != "end_turn" {
		t.Errorf("got %+v, want the text of turn 1 with end_turn", msg)
	}
	req := m.ForTurn(1)
	if req == nil {
		t.Fatal("no request recorded for turn 1")
	}
	if tr, ok := req.ToolResult("toolu_e2e_00_0"); !ok || tr.Text != "hi" || tr.IsError {
		t.Errorf("got tool result %+v, %v; want hi", tr, ok)
	}
	wantCtx := map[string]string{"PostToolUseFailure:mcp__ex__echo": "first\n\nline two", "PostToolBatch": "second"}
	if got := req.HookContext(); !reflect.DeepEqual(got, wantCtx) {
		t.Errorf("got hook context %q, want %q", got, wantCtx)
	}
	calls := m.Calls()
	if len(calls) != 1 || !calls[0].OK() || calls[0].Name != "mcp__ex__echo" {
		t.Errorf("got calls %+v, want one successful echo", calls)
	}
}

func TestModelSideRequestsDoNotAdvance(t *testing.T) {
	m, err := NewModel(Turn{Text: "scripted"})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	// A title or quota request: no tools.
	post(t, m, `{"model":"claude-haiku","max_tokens":1,"messages":[{"role":"user","content":"quota"}]}`)
	resp, err := http.Post(m.URL+"/v1/messages/count_tokens", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp = post(t, m, `{"model":"claude-x",`+mainTools+`,"messages":[{"role":"user","content":"go"}]}`)
	var msg struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	json.NewDecoder(resp.Body).Decode(&msg)
	if len(msg.Content) != 1 || msg.Content[0].Text != "scripted" {
		t.Errorf("got %+v, want the scripted turn 0 after side requests", msg)
	}
	if n := len(m.Main()); n != 1 {
		t.Errorf("got %d main-loop requests, want 1", n)
	}
	if n := len(m.Requests()); n != 3 {
		t.Errorf("got %d requests recorded, want 3", n)
	}
}
