package bridge

import (
	"strconv"
	"strings"
	"sync"

	"github.com/tidwall/gjson"
)

// paramHeaders remembers, per tool, which arguments a stateless-era server
// wants mirrored into Mcp-Param-{Name} headers (SEP-2243: an
// "x-mcp-header" annotation on an input-schema property). A server that
// declares them rejects a tools/call without them, and only tools/list
// says which they are, so the bridge reads every tools/list result that
// passes through. It belongs to the Dialer: the catalogue outlives one
// connection.
type paramHeaders struct {
	mu    sync.Mutex
	tools map[string][]paramBinding
}

type paramBinding struct {
	path   []string // property names from the arguments object down
	header string   // without the Mcp-Param- prefix
}

// learn reads a tools/list result.
func (p *paramHeaders) learn(result gjson.Result) {
	tools := result.Get("tools")
	if !tools.IsArray() {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tools == nil {
		p.tools = map[string][]paramBinding{}
	}
	tools.ForEach(func(_, t gjson.Result) bool {
		name := t.Get("name").Str
		if name == "" {
			return true
		}
		var bs []paramBinding
		collectBindings(t.Get("inputSchema.properties"), nil, &bs)
		if len(bs) > 0 {
			p.tools[name] = bs
		} else {
			delete(p.tools, name)
		}
		return true
	})
}

func collectBindings(props gjson.Result, prefix []string, out *[]paramBinding) {
	props.ForEach(func(k, v gjson.Result) bool {
		path := append(append([]string(nil), prefix...), k.Str)
		if h := v.Get(gjson.Escape("x-mcp-header")); h.Type == gjson.String && h.Str != "" && validHeaderName(h.Str) {
			*out = append(*out, paramBinding{path: path, header: h.Str})
		}
		if sub := v.Get("properties"); sub.IsObject() {
			collectBindings(sub, path, out)
		}
		return true
	})
}

// headers returns the Mcp-Param-* headers for a tools/call body.
func (p *paramHeaders) headers(body []byte) map[string]string {
	name := gjson.GetBytes(body, "params.name").Str
	p.mu.Lock()
	bs := p.tools[name]
	p.mu.Unlock()
	if len(bs) == 0 {
		return nil
	}
	args := gjson.GetBytes(body, "params.arguments")
	out := map[string]string{}
	for _, b := range bs {
		esc := make([]string, len(b.path))
		for i, s := range b.path {
			esc[i] = gjson.Escape(s)
		}
		v := args.Get(strings.Join(esc, "."))
		var s string
		switch v.Type {
		case gjson.String:
			s = headerValue(v.Str)
		case gjson.True, gjson.False:
			s = v.Raw
		case gjson.Number:
			if _, err := strconv.ParseInt(v.Raw, 10, 64); err != nil {
				continue // only integers are allowed
			}
			s = v.Raw
		default:
			continue // absent, null or not a primitive: no header
		}
		out["Mcp-Param-"+b.header] = s
	}
	return out
}
