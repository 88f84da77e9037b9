package wrap

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
	"github.com/mcp-heal/mcp-heal/internal/claudecfg/cfgtest"
)

const testShim = "/home/ūser/.local/share/mcp-heal/bin/mcp-heal"

// paths returns every mcpServers path of a generated config.
func paths(projects []string) [][]string {
	out := [][]string{{"mcpServers"}}
	for _, p := range projects {
		out = append(out, []string{"projects", p, "mcpServers"})
	}
	return out
}

func wrapAll(t testing.TB, data []byte, ps [][]string, shim string) []byte {
	t.Helper()
	for _, p := range ps {
		var err error
		var ch []Change
		data, ch, err = Wrap(data, p, nil, shim)
		if err != nil {
			t.Fatalf("Wrap %q: %v", p, err)
		}
		for _, c := range ch {
			if c.Action == ActSkipped {
				t.Fatalf("Wrap %q skipped %s: %s", p, c.Name, c.Detail)
			}
		}
	}
	return data
}

func unwrapAll(t testing.TB, data []byte, ps [][]string) []byte {
	t.Helper()
	for _, p := range ps {
		var err error
		data, _, err = Unwrap(data, p, nil)
		if err != nil {
			t.Fatalf("Unwrap %q: %v", p, err)
		}
	}
	return data
}

func TestRoundTripLargeConfig(t *testing.T) {
	for _, tc := range []struct {
		name   string
		indent string
	}{{"two-spaces", "  "}, {"tabs", "\t"}, {"compact", ""}, {"four-spaces", "    "}} {
		t.Run(tc.name, func(t *testing.T) {
			orig, projects := cfgtest.GenConfig(1, 500, tc.indent)
			if len(projects) < 15 || len(orig) < 200_000 {
				t.Fatalf("generated config too small: %d bytes, %d projects with servers", len(orig), len(projects))
			}
			if !json.Valid(orig) {
				t.Fatal("generated config is not valid JSON")
			}
			ps := paths(projects)
			wrapped := wrapAll(t, orig, ps, testShim)
			if !json.Valid(wrapped) {
				t.Fatal("wrapped config is not valid JSON")
			}
			if again := wrapAll(t, wrapped, ps, testShim); !bytes.Equal(again, wrapped) {
				t.Fatal("wrap is not idempotent")
			}
			if got := unwrapAll(t, wrapped, ps); !bytes.Equal(got, orig) {
				t.Fatalf("unwrap(wrap(x)) != x\n%s", Diff("config", orig, got))
			}
			// Everything but the server entries is untouched: compare the
			// documents with every mcpServers object removed.
			if a, b := withoutServers(t, orig, ps), withoutServers(t, wrapped, ps); a != b {
				t.Fatal("wrap changed something outside the server entries")
			}
			// The wrapped entries resolve to the same real servers.
			for _, p := range ps {
				before, _ := claudecfg.At(orig, p)
				after, _ := claudecfg.At(wrapped, p)
				a := claudecfg.ParseServers(before, claudecfg.ConfigFile{JSONPath: p})
				b := claudecfg.ParseServers(after, claudecfg.ConfigFile{JSONPath: p})
				if len(a) != len(b) {
					t.Fatalf("%q: %d servers before, %d after", p, len(a), len(b))
				}
				for i := range a {
					if !b[i].Wrapped || b[i].Shim != testShim {
						t.Fatalf("%s: not wrapped: %+v", b[i].Name, b[i])
					}
					b[i].Wrapped, b[i].Shim = false, ""
					if a[i].Transport == "http" || a[i].Transport == "sse" {
						a[i].EnvKeys, b[i].EnvKeys = nil, nil
						if len(b[i].Env) == 0 {
							b[i].Env = nil
						}
					}
					if !reflect.DeepEqual(a[i], b[i]) {
						t.Fatalf("%s resolves differently after wrap:\nbefore %+v\nafter  %+v", a[i].Name, a[i], b[i])
					}
				}
			}
		})
	}
}

// withoutServers deletes every mcpServers object and returns the rest,
// compacted.
func withoutServers(t *testing.T, data []byte, ps [][]string) string {
	t.Helper()
	var sp []splice
	for _, p := range ps {
		obj, ok := claudecfg.At(data, p)
		if !ok {
			t.Fatalf("%q missing", p)
		}
		sp = append(sp, splice{obj.Index, obj.Index + len(obj.Raw), "null"})
	}
	var b bytes.Buffer
	if err := json.Compact(&b, apply(data, sp)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestWrapKeepsSecretsOutOfArgs(t *testing.T) {
	orig, projects := cfgtest.GenConfig(2, 30, "  ")
	wrapped := wrapAll(t, orig, paths(projects), testShim)
	for _, p := range paths(projects) {
		obj, _ := claudecfg.At(wrapped, p)
		for _, m := range claudecfg.Members(obj) {
			args := m.Val.Get("args").Raw
			if strings.Contains(args, "SECRET") || strings.Contains(args, "${MY_KEY}") {
				t.Fatalf("%s: a header or env value is in args: %s", m.Key, args)
			}
			for _, h := range m.Val.Get("mcpHeal.original.headers").Map() {
				if !strings.Contains(m.Val.Get("env").Raw, claudecfg.JSONString(h.String())) {
					t.Fatalf("%s: header value %q not carried in env", m.Key, h)
				}
			}
		}
	}
}

func TestWrapEntries(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"stdio no args", `{"s":{"command":"srv"}}`,
			`{"s":{"command":"/bin/mcp-heal","args":["shim","--name","s","--","srv"],"mcpHeal":{"original":{"command":"srv"}}}}`},
		{"stdio keeps keys", `{"s":{"type":"stdio","command":"srv","args":["a"],"env":{"K":"v"},"timeout":5}}`,
			`{"s":{"type":"stdio","command":"/bin/mcp-heal","args":["shim","--name","s","--","srv","a"],"env":{"K":"v"},"timeout":5,"mcpHeal":{"original":{"type":"stdio","command":"srv","args":["a"],"env":{"K":"v"},"timeout":5}}}}`},
		{"http headers", `{"h":{"type":"http","url":"https://x/mcp","headers":{"Authorization":"Bearer t","x-k":"${K}"}}}`,
			`{"h":{"type":"stdio","command":"/bin/mcp-heal","args":["shim","--name","h","--url-env","MCP_HEAL_URL","--transport","http","--header-env","Authorization=MCP_HEAL_HEADER_AUTHORIZATION","--header-env","x-k=MCP_HEAL_HEADER_X_K"],"env":{"MCP_HEAL_HEADER_AUTHORIZATION":"Bearer t","MCP_HEAL_HEADER_X_K":"${K}","MCP_HEAL_URL":"https://x/mcp"},"mcpHeal":{"original":{"type":"http","url":"https://x/mcp","headers":{"Authorization":"Bearer t","x-k":"${K}"}}}}}`},
		{"sse", `{"e":{"type":"sse","url":"http://h/sse"}}`,
			`{"e":{"type":"stdio","command":"/bin/mcp-heal","args":["shim","--name","e","--url-env","MCP_HEAL_URL","--transport","sse"],"env":{"MCP_HEAL_URL":"http://h/sse"},"mcpHeal":{"original":{"type":"sse","url":"http://h/sse"}}}}`},
		{"pretty", "{\n  \"s\": {\n    \"command\": \"srv\"\n  }\n}",
			"{\n  \"s\": {\n    \"command\": \"/bin/mcp-heal\",\n    \"args\": [\n      \"shim\",\n      \"--name\",\n      \"s\",\n      \"--\",\n      \"srv\"\n    ],\n    \"mcpHeal\": {\n      \"original\": {\n        \"command\": \"srv\"\n      }\n    }\n  }\n}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := Wrap([]byte(tc.in), nil, nil, "/bin/mcp-heal")
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tc.want)
			}
			back, _, err := Unwrap(got, nil, nil)
			if err != nil || string(back) != tc.in {
				t.Fatalf("unwrap: got %s, %v; want %s", back, err, tc.in)
			}
		})
	}
}

func TestWrapSkips(t *testing.T) {
	for _, tc := range []struct{ name, entry, detail string }{
		{"oauth", `{"type":"http","url":"https://x","oauth":{"clientId":"c"}}`, "oauth"},
		{"headersHelper", `{"type":"http","url":"https://x","headersHelper":"/bin/h"}`, "headersHelper"},
		{"ws", `{"type":"ws","url":"ws://x"}`, "transport"},
		{"not object", `"srv"`, "not a JSON object"},
		{"bad args", `{"command":"x","args":"y"}`, "args"},
		{"duplicate keys", `{"command":"x","command":"y"}`, "duplicate"},
		{"stale marker", `{"command":"x","mcpHeal":{"original":{}}}`, "mcpHeal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := `{"s":` + tc.entry + `}`
			got, ch, err := Wrap([]byte(in), nil, nil, "/bin/mcp-heal")
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != in || len(ch) != 1 || ch[0].Action != ActSkipped || !strings.Contains(ch[0].Detail, tc.detail) {
				t.Fatalf("got %s %+v, want it untouched and skipped (%s)", got, ch, tc.detail)
			}
		})
	}
}

func TestWrapNamesAndShimUpdate(t *testing.T) {
	in := []byte(`{"a":{"command":"x"},"b":{"command":"y"}}`)
	got, ch, err := Wrap(in, nil, []string{"b"}, "/old/mcp-heal")
	if err != nil || len(ch) != 1 || ch[0].Name != "b" || gjson.GetBytes(got, "a.command").String() != "x" {
		t.Fatalf("got %s %+v %v", got, ch, err)
	}
	moved, ch, _ := Wrap(got, nil, []string{"b"}, "/new/mcp-heal")
	if ch[0].Action != ActShimUpdated || gjson.GetBytes(moved, "b.command").String() != "/new/mcp-heal" {
		t.Fatalf("shim path not updated: %s %+v", moved, ch)
	}
	back, _, _ := Unwrap(moved, nil, []string{"b"})
	if !bytes.Equal(back, in) {
		t.Fatalf("got %s, want %s", back, in)
	}
}

func TestUnwrapAfterClaudeReindents(t *testing.T) {
	// Claude Code rewrites ~/.claude.json with JSON.stringify(v, null, 2):
	// unwrap then restores the original as Claude Code would print it.
	compact, projects := cfgtest.GenConfig(3, 50, "")
	wrapped := wrapAll(t, compact, paths(projects), testShim)
	var reindented, want bytes.Buffer
	json.Indent(&reindented, wrapped, "", "  ")
	json.Indent(&want, compact, "", "  ")
	got := unwrapAll(t, reindented.Bytes(), paths(projects))
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("unwrap after re-indent:\n%s", Diff("config", want.Bytes(), got))
	}
}

func TestUnwrapKeepsEditsSinceWrap(t *testing.T) {
	for _, tc := range []struct{ name, in, from, to, want, keys string }{
		{"rotated env", "{\"s\":{\n  \"command\": \"x\",\n  \"env\": {\"A\": \"1\"},\n  \"timeout\": 5\n}}", `"A": "1"`, `"A": "2"`,
			"{\"s\":{\n  \"command\": \"x\",\n  \"env\": {\"A\": \"2\"},\n  \"timeout\": 5\n}}", "env"},
		{"new argument", `{"s":{"command":"x","args":["a"]}}`, `"x","a"]`, `"x","a","b"]`, `{"s":{"command":"x","args":["a","b"]}}`, "args"},
		{"key removed", `{"s":{"command":"x","timeout":5}}`, `"timeout":5,`, ``, `{"s":{"command":"x"}}`, "timeout"},
		{"rotated header", `{"h":{"type":"http","url":"https://x","headers":{"Authorization":"Bearer old"}}}`, `"MCP_HEAL_HEADER_AUTHORIZATION":"Bearer old"`, `"MCP_HEAL_HEADER_AUTHORIZATION":"Bearer new"`,
			`{"h":{"type":"http","url":"https://x","headers":{"Authorization":"Bearer new"}}}`, "headers"},
		{"remote without type", `{"h":{"url":"https://x","timeout":1}}`, `"timeout":1`, `"timeout":2`, `{"h":{"url":"https://x","timeout":2}}`, "timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, _, _ := Wrap([]byte(tc.in), nil, nil, "/bin/mcp-heal")
			// Edit the live part of the entry, not the saved original.
			i := bytes.Index(w, []byte(`"mcpHeal"`))
			live := bytes.Replace(w[:i], []byte(tc.from), []byte(tc.to), 1)
			if bytes.Equal(live, w[:i]) {
				t.Fatalf("%s not found in %s", tc.from, w[:i])
			}
			edited := append(live, w[i:]...)
			got, ch, err := Unwrap(edited, nil, nil)
			if err != nil || string(got) != tc.want || !strings.HasSuffix(ch[0].Detail, ": "+tc.keys) {
				t.Fatalf("got %s %+v %v\nwant %s (kept %s)", got, ch, err, tc.want, tc.keys)
			}
		})
	}
}

func TestUnwrapHandWrapped(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"s":{"command":"/x/mcp-heal","args":["shim","--name","s","--","srv","-v"],"env":{"K":"v"}}}`,
			`{"s":{"command":"srv","args":["-v"],"env":{"K":"v"}}}`},
		{`{"h":{"type":"stdio","command":"mcp-heal","args":["shim","--url","https://x","--header","A: ${MCP_HEAL_HEADER_A}"],"env":{"MCP_HEAL_HEADER_A":"tok"}}}`,
			`{"h":{"type":"http","url":"https://x","headers":{"A":"tok"}}}`},
	} {
		got, ch, err := Unwrap([]byte(tc.in), nil, nil)
		if err != nil || string(got) != tc.want || ch[0].Action != ActUnwrapped {
			t.Fatalf("got %s %+v %v, want %s", got, ch, err, tc.want)
		}
	}
}

func TestRefuseBrokenInput(t *testing.T) {
	for _, tc := range []struct {
		name, in  string
		line, col int
	}{
		{"trailing comma", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"},\n  }\n}", 4, 3},
		{"truncated", "{\n  \"mcpServers\": {", 2, 18},
		{"unicode column", "{\n  \"ü✓\": tru }", 2, 12},
		{"empty", "", 1, 1},
		{"not an object", "  [1]", 1, 3},
		{"garbage after", `{"a":1} x`, 1, 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, f := range []func([]byte) ([]byte, []Change, error){
				func(b []byte) ([]byte, []Change, error) { return Wrap(b, []string{"mcpServers"}, nil, "/m") },
				func(b []byte) ([]byte, []Change, error) { return Unwrap(b, []string{"mcpServers"}, nil) },
			} {
				out, _, err := f([]byte(tc.in))
				var se *claudecfg.SyntaxError
				if !errors.As(err, &se) || out != nil {
					t.Fatalf("got %q, %v; want a *SyntaxError and no output", out, err)
				}
				if se.Line != tc.line || se.Col != tc.col {
					t.Fatalf("got %d:%d (%v), want %d:%d", se.Line, se.Col, err, tc.line, tc.col)
				}
			}
		})
	}
}
