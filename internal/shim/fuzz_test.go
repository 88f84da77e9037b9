package shim

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
)

// FuzzReplaceID checks the id splice used for server->client request
// remapping and injected requests: the result is valid, carries the new id,
// and everything else is unchanged.
func FuzzReplaceID(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":0,"method":"roots/list","params":{"id":5}}`), int64(7))
	f.Add([]byte(`{"params":{"id":"inner"},"id":"outer","method":"x","jsonrpc":"2.0"}`), int64(-1))
	f.Add([]byte(` { "id" : "a\"b" , "result" : {} } `), int64(123456789))
	f.Fuzz(func(t *testing.T, line []byte, n int64) {
		m, err := jsonrpc.Peek(line)
		if err != nil || m.ID == nil || m.Kind == jsonrpc.KindBatch {
			return
		}
		id := itoaID(n)
		out := jsonrpc.ReplaceID(line, id)
		m2, err := jsonrpc.Peek(out)
		if err != nil {
			t.Fatalf("ReplaceID(%q) = %q: %v", line, out, err)
		}
		if !bytes.Equal(m2.ID, id) || m2.Kind != m.Kind || m2.Method != m.Method {
			t.Fatalf("ReplaceID(%q) = %q: got id %s kind %v", line, out, m2.ID, m2.Kind)
		}
		var a, b map[string]json.RawMessage
		json.Unmarshal(line, &a)
		json.Unmarshal(out, &b)
		delete(a, "id")
		delete(b, "id")
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if bytes.Count(line, []byte(`"id"`)) < 2 && !bytes.Equal(ja, jb) {
			t.Fatalf("ReplaceID changed more than the id: %q -> %q", line, out)
		}
	})
}
