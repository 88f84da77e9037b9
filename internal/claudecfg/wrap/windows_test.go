package wrap

import (
	"encoding/json"
	"reflect"
	"testing"

	dirs "github.com/mcp-heal/mcp-heal/internal/paths"
)

// TestWrapWindowsEntries: on Windows wrap writes the stable copy's path
// as paths gives it there (%LOCALAPPDATA%\mcp-heal\data\bin\mcp-heal.exe,
// backslashes, .exe), JSON-escaped, with the real command line in args
// untouched (Claude Code starts a stdio entry without a shell and resolves
// its command through PATHEXT, so nothing is quoted for a shell). The
// entry reads back as wrapped (a second wrap changes nothing) on any
// platform, and unwrap restores it byte for byte. Before, IsShim took the
// base name with this platform's separator: on Linux the whole Windows
// path, so the wrapped entry read as not wrapped and wrap refused it.
func TestWrapWindowsEntries(t *testing.T) {
	env := map[string]string{"USERPROFILE": `C:\Users\Ünal Öz`, "LOCALAPPDATA": `C:\Users\Ünal Öz\AppData\Local`}
	shim := dirs.For("windows", func(k string) string { return env[k] }).StableBinary
	if want := `C:\Users\Ünal Öz\AppData\Local\mcp-heal\data\bin\mcp-heal.exe`; shim != want {
		t.Fatalf("stable copy on Windows: %q, want %q", shim, want)
	}
	orig := []byte(`{
  "mcpServers": {
    "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "C:\\Users\\Ünal Öz\\My Projects"]},
    "py": {"command": "C:\\Program Files\\Python312\\python.exe", "args": ["-m", "srv", "--name", "a \"quoted\" name"]},
    "web": {"type": "http", "url": "https://example.com/mcp"}
  }
}
`)
	got, ch, err := Wrap(orig, []string{"mcpServers"}, nil, shim)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range ch {
		if c.Action != ActWrapped {
			t.Fatalf("%s: %s (%s), want wrapped", c.Name, c.Action, c.Detail)
		}
	}
	var cfg struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(got, &cfg); err != nil {
		t.Fatalf("wrapped config is not JSON: %v\n%s", err, got)
	}
	want := map[string][]string{
		"fs":  {"shim", "--name", "fs", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem", `C:\Users\Ünal Öz\My Projects`},
		"py":  {"shim", "--name", "py", "--", `C:\Program Files\Python312\python.exe`, "-m", "srv", "--name", `a "quoted" name`},
		"web": {"shim", "--name", "web", "--url-env", "MCP_HEAL_URL", "--transport", "http"},
	}
	for name, args := range want {
		e := cfg.MCPServers[name]
		if e.Command != shim || !reflect.DeepEqual(e.Args, args) {
			t.Errorf("%s: command %q args %q\nwant command %q args %q", name, e.Command, e.Args, shim, args)
		}
	}
	again, ch, err := Wrap(got, []string{"mcpServers"}, nil, shim)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range ch {
		if c.Action != ActAlreadyWrapped {
			t.Errorf("wrap again %s: %s (%s), want already wrapped", c.Name, c.Action, c.Detail)
		}
	}
	if string(again) != string(got) {
		t.Errorf("wrap again changed the file:\n%s", again)
	}
	back, _, err := Unwrap(got, []string{"mcpServers"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(back) != string(orig) {
		t.Errorf("unwrap did not restore the entries:\n%s\nwant\n%s", back, orig)
	}
}
