package redact

import (
	"bytes"
	"encoding/json"
	"strings"
)

// secretObjects are the keys whose object members are all secret: an MCP
// server entry's "env" and "headers" (Claude Code's config schema).
var secretObjects = map[string]bool{"env": true, "headers": true}

// JSON returns the JSON document data (a Claude Code config, a server
// entry) with its secrets replaced: every string member of an "env" or
// "headers" object, every "url" and every other string that is an http(s)
// URL (URL: hidden whole), and what String finds in any other string. Keys, order and whitespace stay, so two
// documents redacted alike diff like the originals (what a dry run shows).
// Invalid JSON goes through String whole.
func JSON(data []byte) []byte {
	if !json.Valid(data) {
		return []byte(String(string(data)))
	}
	type frame struct {
		object    bool
		key       string // the current member's key (objects)
		parentKey string // the key this container is the value of
	}
	var stack []frame
	expectKey := false
	out := make([]byte, 0, len(data))
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch c {
		case '{', '[':
			parent := ""
			if n := len(stack); n > 0 {
				parent = stack[n-1].key
				if !stack[n-1].object {
					parent = stack[n-1].parentKey
				}
			}
			stack = append(stack, frame{object: c == '{', parentKey: parent})
			expectKey = c == '{'
			out = append(out, c)
		case '}', ']':
			stack = stack[:len(stack)-1]
			out = append(out, c)
		case ',':
			expectKey = len(stack) > 0 && stack[len(stack)-1].object
			out = append(out, c)
		case ':':
			expectKey = false
			out = append(out, c)
		case '"':
			end := stringEnd(data, i)
			raw := data[i : end+1]
			i = end
			var s string
			if json.Unmarshal(raw, &s) != nil {
				out = append(out, raw...)
				continue
			}
			if expectKey {
				stack[len(stack)-1].key = s
				out = append(out, raw...)
				continue
			}
			var top frame
			if len(stack) > 0 {
				top = stack[len(stack)-1]
			}
			r := s
			switch {
			case top.object && secretObjects[top.parentKey] && s != "":
				r = Mark
			case top.object && top.key == "url", strings.HasPrefix(s, "http://"), strings.HasPrefix(s, "https://"):
				// A remote server's URL, in "url" or in an argument
				// (a shim wrapped by an older mcp-heal, mcp-remote).
				r = URL(s)
			default:
				r = String(s)
			}
			if r == s {
				out = append(out, raw...)
			} else {
				out = append(out, quote(r)...)
			}
		default:
			out = append(out, c)
		}
	}
	return out
}

// stringEnd returns the index of the quote closing the JSON string that
// opens at data[i].
func stringEnd(data []byte, i int) int {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
	return len(data) - 1
}

func quote(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
