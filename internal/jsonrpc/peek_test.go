package jsonrpc

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestPeek(t *testing.T) {
	tests := []struct {
		in      string
		kind    Kind
		id      string
		method  string
		isError bool
		err     error
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, KindRequest, `1`, "tools/list", false, nil},
		{`{"jsonrpc":"2.0","id":"abc","method":"x","params":{"id":9}}`, KindRequest, `"abc"`, "x", false, nil},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, KindNotification, ``, "notifications/initialized", false, nil},
		{`{"jsonrpc":"2.0","id":12345678901234567890,"result":{}}`, KindResponse, `12345678901234567890`, "", false, nil},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, KindResponse, `null`, "", true, nil},
		{`{"jsonrpc":"2.0","id":"s\u0031","error":{"code":1,"message":"x"}}`, KindResponse, `"s\u0031"`, "", true, nil},
		{` [{"jsonrpc":"2.0","id":1,"method":"a"}]`, KindBatch, ``, "", false, nil},
		{`{"jsonrpc":"2.0","id":1.5,"method":"a"}`, KindInvalid, ``, "", false, ErrInvalidID},
		{`{"jsonrpc":"2.0","id":{},"method":"a"}`, KindInvalid, ``, "", false, ErrInvalidID},
		{`{"jsonrpc":"2.0","id":1,"method":""}`, KindInvalid, ``, "", false, ErrEmptyMethod},
		{`{"jsonrpc":"2.0","id":1,"method":3}`, KindInvalid, ``, "", false, ErrNotJSONRPC},
		{`{"jsonrpc":"2.0"}`, KindInvalid, ``, "", false, ErrNotJSONRPC},
		{`{"result":1}`, KindInvalid, ``, "", false, ErrNotJSONRPC},
		{`"str"`, KindInvalid, ``, "", false, ErrNotJSONRPC},
		{`{"id":1,`, KindInvalid, ``, "", false, ErrNotJSON},
		{"{\"id\":\"\xff\",\"method\":\"a\"}", KindInvalid, ``, "", false, ErrNotUTF8},
		{``, KindInvalid, ``, "", false, ErrNotJSON},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			m, err := Peek([]byte(tt.in))
			if !errors.Is(err, tt.err) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if err != nil {
				return
			}
			if m.Kind != tt.kind || string(m.ID) != tt.id || m.Method != tt.method || m.IsError != tt.isError {
				t.Errorf("got %v id=%s method=%q isError=%v, want %v id=%s method=%q isError=%v",
					m.Kind, m.ID, m.Method, m.IsError, tt.kind, tt.id, tt.method, tt.isError)
			}
		})
	}
}

func TestBuildersProduceValidJSON(t *testing.T) {
	msgs := [][]byte{
		ErrorReply([]byte(`"x"`), CodeInternalError, "server \"a\" exited\n", map[string]any{"retried": false}),
		ErrorReply(nil, CodeParseError, "parse error", nil),
		ResultReply([]byte(`7`), []byte(`{}`)),
		NewRequest([]byte(`"mcp-heal-1"`), "ping", nil),
		NewRequest([]byte(`3`), "initialize", []byte(`{"protocolVersion":"2025-11-25"}`)),
		NewNotification("notifications/initialized", nil),
	}
	for _, b := range msgs {
		if !json.Valid(b) {
			t.Errorf("invalid JSON: %s", b)
		}
		if _, err := Peek(b); err != nil {
			t.Errorf("Peek(%s): %v", b, err)
		}
	}
	m, _ := Peek(ErrorReply(nil, CodeParseError, "x", nil))
	if string(m.ID) != "null" || !m.IsError {
		t.Errorf("error reply without id: got id %s", m.ID)
	}
}

// TestPeekAnyText: a server's line with invalid UTF-8 is routed like any
// other (the client decodes it with U+FFFD), and only that is let through.
func TestPeekAnyText(t *testing.T) {
	bad := "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"t\":\"\xff\xed\xa0\x80\\ud800\xf0\x9f\"}}"
	if _, err := Peek([]byte(bad)); !errors.Is(err, ErrNotUTF8) {
		t.Fatalf("Peek: %v, want ErrNotUTF8", err)
	}
	m, err := PeekAnyText([]byte(bad))
	if err != nil || m.Kind != KindResponse || string(m.ID) != "7" {
		t.Fatalf("PeekAnyText: %+v, %v", m, err)
	}
	for in, want := range map[string]error{
		"{\"id\":1,\"result\":\xff}": ErrNotJSON, // outside a string: not JSON
		"\xff":                       ErrNotJSON,
		`{"id":1,"result":"x`:        ErrNotJSON,
		`{"id":1.5,"result":1}`:      ErrInvalidID,
	} {
		if _, err := PeekAnyText([]byte(in)); !errors.Is(err, want) {
			t.Errorf("PeekAnyText(%q): %v, want %v", in, err, want)
		}
	}
}
