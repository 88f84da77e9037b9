package claudecfg

import (
	"errors"
	"testing"
)

// FuzzParse: reading any config file (Discover's parser, the shim-argument
// reader, the syntax-error locator) never panics, and a wrapped entry always
// resolves to a real server.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"mcpServers":{"a":{"command":"/x/mcp-heal","args":["shim","--name","a","--url","u","--header","A: ${MCP_HEAL_HEADER_A}"],"env":{"MCP_HEAL_HEADER_A":"v"}}}}`,
		`{"mcpServers":{"a":{"command":"mcp-heal","args":["shim","--name=a","--","c"]}}}`,
		`{"mcpServers":{"a":{"command":"mcp-heal","args":["shim","--header"]}}}`,
		`{"mcpServers":{"a":{"type":7,"args":{"x":1},"env":[1],"headers":"h"}}}`,
		"{\n\"mcpServers\": {\"ü\": }\n}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := Check("f", data); err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Line < 1 || se.Col < 1 {
				t.Fatalf("bad error %v", err)
			}
			return
		}
		obj, ok := At(data, []string{"mcpServers"})
		if !ok {
			return
		}
		for _, s := range ParseServers(obj, ConfigFile{Scope: ScopeUser}) {
			if s.Wrapped && s.Command == "" && s.URL == "" {
				t.Fatalf("wrapped entry %q resolves to nothing", s.Name)
			}
		}
	})
}
