package wrap

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/claudecfg/cfgtest"
)

// FuzzTransforms: Wrap and Unwrap never panic; on valid input Wrap gives
// valid JSON, is idempotent, and Unwrap(Wrap(x)) == x byte for byte when x
// holds no wrapped entries to begin with.
func FuzzTransforms(f *testing.F) {
	seeds := []string{
		`{"mcpServers":{"a":{"command":"x","args":["1"],"env":{"K":"v"}}}}`,
		"{\n  \"mcpServers\": {\n    \"h\": {\n      \"type\": \"http\",\n      \"url\": \"https://x\",\n      \"headers\": {\"A\": \"b\"}\n    }\n  }\n}",
		"{\r\n\t\"mcpServers\": {\r\n\t\t\"s\": {\"type\": \"sse\", \"url\": \"u\"}\r\n\t}\r\n}",
		`{"mcpServers":{"a":{"command":"/x/mcp-heal","args":["shim","--","y"]}}}`,
		`{"mcpServers":{"a":{"command":"x"},"a":{"command":"y"}}}`,
		`{"mcpServers":{"a":{"command":"x","command":"y"},"b":[],"c":{"url":1}}}`,
		`{"mcpServers":{"ü":{ "command" :"x" , "args" : [ ] }}}`,
		`{"mcpServers":{"a":{"command":"x",` + "\n" + `"args":["y"]}}}`,
		`{"mcpServers":{"a":{"command":"x","mcpHeal":{"original":{"command":"z"}}}}}`,
		`{"mcpServers":{"h":{"type":"http","url":"u","headers":{"A":"1","a":"2","A-":"3"},"env":{"MCP_HEAL_HEADER_A":"x"}}}}`,
		`[]`, ``, `{`, `{"mcpServers":null}`,
	}
	small, _ := cfgtest.GenConfig(9, 3, "  ")
	seeds = append(seeds, string(small))
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	path := []string{"mcpServers"}
	f.Fuzz(func(t *testing.T, data []byte) {
		w, _, err := Wrap(data, path, nil, "/s/mcp-heal")
		u0, _, uerr := Unwrap(data, path, nil)
		if (err == nil) != (uerr == nil) {
			t.Fatalf("Wrap error %v, Unwrap error %v", err, uerr)
		}
		if err != nil {
			return
		}
		if !json.Valid(w) {
			t.Fatalf("Wrap gave invalid JSON:\n%s", w)
		}
		w2, _, err := Wrap(w, path, nil, "/s/mcp-heal")
		if err != nil || !bytes.Equal(w2, w) {
			t.Fatalf("Wrap not idempotent: %v\n%s\n%s", err, w, w2)
		}
		if !bytes.Equal(u0, data) {
			return // it held wrapped entries
		}
		back, _, err := Unwrap(w, path, nil)
		if err != nil || !bytes.Equal(back, data) {
			t.Fatalf("Unwrap(Wrap(x)) != x: %v\nx:    %q\nwrap: %q\nback: %q", err, data, w, back)
		}
	})
}
