// Package cfgtest generates realistic Claude Code config files for the tests
// of claudecfg and claudecfg/wrap (the benchmarks, the fuzz seeds, the
// round trips).
package cfgtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
)

// GenConfig writes a realistic ~/.claude.json the way Claude Code does
// (JSON.stringify with indent; indent "" gives one compact line): many
// top-level keys, nProjects projects with unicode paths, each with the keys
// Claude Code keeps there, user servers of every transport and local servers
// in some projects. It returns the file and the project keys that have
// local servers.
func GenConfig(seed int64, nProjects int, indent string) ([]byte, []string) {
	r := rand.New(rand.NewSource(seed))
	w := &jw{indent: indent}
	var withServers []string
	w.open('{')
	w.kv("numStartups", "417")
	w.kv("installMethod", `"native"`)
	w.kv("autoUpdates", "false")
	w.kv("theme", `"dark"`)
	w.kv("tipsHistory", func() {
		w.open('{')
		w.kv("new-user-warmup", "7")
		w.kv("memory-command", "12")
		w.kv("théme-tip ✨", "3")
		w.close('}')
	})
	w.kv("userID", `"`+strings.Repeat("ab12", 16)+`"`)
	w.kv("oauthAccount", func() {
		w.open('{')
		w.kv("emailAddress", `"dév@exämple.com"`)
		w.kv("organizationRole", `"admin"`)
		w.close('}')
	})
	w.kv("mcpServers", func() { servers(w, r, "user", 12) })
	w.kv("projects", func() {
		w.open('{')
		for i := 0; i < nProjects; i++ {
			key := projectKey(r, i)
			hasServers := i%25 == 3
			if hasServers {
				withServers = append(withServers, key)
			}
			w.kv(jsonString(key)[1:len(jsonString(key))-1], func() {
				w.open('{')
				w.kv("allowedTools", func() {
					w.open('[')
					for j := 0; j < r.Intn(4); j++ {
						w.val(jsonString(fmt.Sprintf("Bash(npm run test:%d)", j)))
					}
					w.close(']')
				})
				w.kv("history", func() {
					w.open('[')
					for j := 0; j < r.Intn(5); j++ {
						w.val(fmt.Sprintf(`{"display":%s,"pastedContents":{}}`, jsonString(fmt.Sprintf("fix the «bug» #%d in \"main.go\"\t→ 🚀\\n", j))))
					}
					w.close(']')
				})
				w.kv("mcpContextUris", "[]")
				if hasServers {
					w.kv("mcpServers", func() { servers(w, r, "local"+fmt.Sprint(i), 1+r.Intn(4)) })
				} else if r.Intn(2) == 0 {
					w.kv("mcpServers", "{}")
				}
				w.kv("enabledMcpjsonServers", "[]")
				w.kv("disabledMcpjsonServers", "[]")
				w.kv("hasTrustDialogAccepted", fmt.Sprint(r.Intn(2) == 0))
				w.kv("lastCost", fmt.Sprintf("%.6f", r.Float64()*3))
				w.kv("lastDuration", fmt.Sprint(r.Intn(1e6)))
				w.kv("exampleFiles", `["a.go","b.go"]`)
				w.close('}')
			})
		}
		w.close('}')
	})
	w.kv("cachedChangelog", jsonString(strings.Repeat("# 2.1.328\n- fixes ünïcödé ✓\n", 40)))
	w.kv("hasCompletedOnboarding", "true")
	w.close('}')
	return []byte(w.b.String()), withServers
}

var words = []string{"src", "proj", "项目", "données", "тест", "my app", "repo.v2", "a*b?c", "x|y", "q#1", "@scope", "naïve", "🚀rocket", `quo"te`, `back\slash`}

func projectKey(r *rand.Rand, i int) string {
	return fmt.Sprintf("/home/ūser/%s/%s-%d", words[r.Intn(len(words))], words[r.Intn(len(words))], i)
}

// servers writes an mcpServers object with n entries of every kind.
func servers(w *jw, r *rand.Rand, tag string, n int) {
	w.open('{')
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("%s-%s-%d", []string{"github", "memory", "fs", "sentry", "ünï", "db.prod", "a b"}[r.Intn(7)], tag, i)
		w.kv(jsonString(name)[1:len(jsonString(name))-1], func() {
			w.open('{')
			switch i % 5 {
			case 0, 3: // stdio as `claude mcp add` writes it
				w.kv("type", `"stdio"`)
				w.kv("command", `"npx"`)
				w.kv("args", func() {
					w.open('[')
					w.val(`"-y"`)
					w.val(`"@modelcontextprotocol/server-memory"`)
					w.val(jsonString("--dir=/tmp/ü ñ"))
					w.close(']')
				})
				w.kv("env", func() {
					w.open('{')
					w.kv("API_KEY", `"sk-live-SECRET`+fmt.Sprint(i)+`"`)
					w.kv("DEBUG", `"1"`)
					w.close('}')
				})
			case 1: // hand-written: no type, no args, extra keys
				w.kv("command", jsonString("/opt/servers/my server ✓/bin/run"))
				w.kv("timeout", "60000")
				w.kv("alwaysAllow", `["read","write"]`)
			case 2: // http with secret headers
				w.kv("type", `"http"`)
				w.kv("url", `"https://mcp.example.com/mcp?team=ü"`)
				w.kv("headers", func() {
					w.open('{')
					w.kv("Authorization", `"Bearer ghp_SECRETTOKEN`+fmt.Sprint(i)+`"`)
					w.kv("X-Api-Key", `"${MY_KEY}"`)
					w.close('}')
				})
			case 4: // sse, empty args and env
				w.kv("type", `"sse"`)
				w.kv("url", `"http://127.0.0.1:9/sse"`)
			}
			w.close('}')
		})
	}
	w.close('}')
}

// jw writes JSON like JSON.stringify(v, null, indent).
type jw struct {
	b      strings.Builder
	indent string
	depth  int
	first  []bool
}

func (w *jw) nl() {
	if w.indent != "" {
		w.b.WriteString("\n" + strings.Repeat(w.indent, w.depth))
	}
}

func (w *jw) sep() {
	if n := len(w.first); n > 0 {
		if !w.first[n-1] {
			w.b.WriteByte(',')
		}
		w.first[n-1] = false
		w.nl()
	}
}

func (w *jw) open(c byte) {
	w.b.WriteByte(c)
	w.depth++
	w.first = append(w.first, true)
}

func (w *jw) close(c byte) {
	empty := w.first[len(w.first)-1]
	w.first = w.first[:len(w.first)-1]
	w.depth--
	if !empty {
		w.nl()
	}
	w.b.WriteByte(c)
}

func (w *jw) val(raw string) { w.sep(); w.b.WriteString(raw) }

// kv writes a key (already escaped, without quotes) and a raw value or a
// func that writes it.
func (w *jw) kv(key string, v any) {
	w.sep()
	w.b.WriteString(`"` + key + `":`)
	if w.indent != "" {
		w.b.WriteByte(' ')
	}
	switch v := v.(type) {
	case string:
		w.b.WriteString(v)
	case func():
		v()
	}
}

// jsonString is s as a JSON string, the way JSON.stringify writes it (no
// HTML escaping).
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return string(bytes.TrimRight(b.Bytes(), "\n"))
}
