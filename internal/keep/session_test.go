package keep

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestKeeperWire: the keeper reads the notes and answers with the bytes
// kept guardians have always used. A kept guardian outlives an update of
// the binary, so a shim of one version attaches to a guardian of another:
// the notes here are what shims sent to the guardian when it still held
// the session itself, and the answers what it wrote to the server then.
func TestKeeperWire(t *testing.T) {
	k := newKeeper()
	for _, line := range []string{
		`{"op":"note","session":{"init":{"protocolVersion":"2025-06-18","capabilities":{}},"version":"2025-06-18"}}`,
		`{"op":"note","session":{"subs":["example://counter"]}}`,
		`{"op":"note","req_id":7,"open":true}`,
		`{"op":"note","req_id":"s-2","open":true}`,
		`{"op":"note","req_id":7}`, // answered by the client
		`{"op":"note","listen":"k1:5","open":true}`,
		`{"op":"writing","id":1,"open":true}`, // not a note: ignored
	} {
		k.note([]byte(line))
	}
	sess, _ := k.attach()
	if want := `{"init":{"protocolVersion":"2025-06-18","capabilities":{}},"version":"2025-06-18","subs":["example://counter"]}`; string(sess) != want {
		t.Errorf("session handed over:\n got %s\nwant %s", sess, want)
	}
	var got []string
	for _, l := range k.detach() {
		got = append(got, string(l))
	}
	want := []string{
		`{"jsonrpc":"2.0","id":"s-2","error":{"code":-32603,"message":"the client went away (mcp-heal kept the server running)"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"k1:5","reason":"the client went away"}}`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("written to the server when the shim went away:\n got %q\nwant %q", got, want)
	}
	if again := k.detach(); len(again) != 0 {
		t.Errorf("a second detach wrote %q: each is said once", again)
	}

	// A shim's own notes (tell's encoding) read back the same.
	b, err := json.Marshal(note{Op: "note", ReqID: json.RawMessage(`3`), Open: true})
	if err != nil {
		t.Fatal(err)
	}
	k.note(b)
	if l := k.detach(); len(l) != 1 || string(l[0]) != `{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"the client went away (mcp-heal kept the server running)"}}` {
		t.Errorf("request 3 answered with %q", l)
	}
}

// TestKeeperDrained: while nobody is attached, a request of the server
// is answered at once, and each list that changed is told to the next
// client once (and kept for the one after when the attach failed).
func TestKeeperDrained(t *testing.T) {
	k := newKeeper()
	if r := k.drained([]byte(`{"jsonrpc":"2.0","id":"r1","method":"roots/list"}`)); string(r) != `{"jsonrpc":"2.0","id":"r1","error":{"code":-32603,"message":"the client went away (mcp-heal kept the server running)"}}` {
		t.Errorf("a server request while detached answered with %s", r)
	}
	for _, l := range []string{
		`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`,
		`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
		`{"jsonrpc":"2.0","method":"notifications/prompts/list_changed"}`,
		`not json`,
		`{"jsonrpc":"2.0","id":4,"result":{}}`,
	} {
		if r := k.drained([]byte(l)); r != nil {
			t.Errorf("%s answered with %s", l, r)
		}
	}
	sess, undo := k.attach()
	const want = `{"list_changed":["notifications/tools/list_changed","notifications/prompts/list_changed"],"catalog_changed":true}`
	if string(sess) != want {
		t.Errorf("session:\n got %s\nwant %s", sess, want)
	}
	if again, _ := k.attach(); string(again) != `{}` {
		t.Errorf("the changes were handed over twice: %s", again)
	}
	undo() // that first shim never heard them
	k.drained([]byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`))
	if again, _ := k.attach(); string(again) != want {
		t.Errorf("after a failed attach:\n got %s\nwant %s", again, want)
	}
	// A new server forgets the session, not the news.
	k.note([]byte(`{"op":"note","session":{"init":{},"version":"v"},"req_id":1,"open":true}`))
	k.drained([]byte(`{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`))
	k.started()
	if s, _ := k.attach(); string(s) != `{"list_changed":["notifications/resources/list_changed"]}` {
		t.Errorf("after a new server started: %s", s)
	}
	if l := k.detach(); len(l) != 0 {
		t.Errorf("the old server's request was answered to the new one: %q", l)
	}
}
