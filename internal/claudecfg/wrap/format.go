package wrap

import (
	"strings"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
)

// style is how an entry is laid out, detected from the entry itself so a
// rewritten entry looks like its neighbours.
type style struct {
	pretty bool
	nl     string // "\n" or "\r\n"
	inner  string // indent of the entry's keys
	close  string // indent of the entry's closing brace
	unit   string // one level of indent
	sep    string // between a key and its value: ": " or ":"
}

func detectStyle(e gjson.Result) style {
	raw := e.Raw
	st := style{nl: "\n", sep: ":", unit: "  "}
	ms := claudecfg.Members(e)
	if len(ms) > 0 {
		start := ms[0].KRaw.Index + len(ms[0].KRaw.Raw) - e.Index
		end := ms[0].Val.Index - e.Index
		if start >= 0 && end >= start && end <= len(raw) {
			st.sep = raw[start:end]
		}
	}
	if !strings.Contains(raw, "\n") {
		return st
	}
	st.pretty = true
	if strings.Contains(raw, "\r\n") {
		st.nl = "\r\n"
	}
	first := raw[strings.IndexByte(raw, '\n')+1:]
	st.inner = first[:len(first)-len(strings.TrimLeft(first, " \t"))]
	st.close = closeIndent(raw)
	if strings.HasPrefix(st.inner, st.close) && len(st.inner) > len(st.close) {
		st.unit = st.inner[len(st.close):]
	}
	return st
}

// closeIndent is the leading whitespace of raw's last line.
func closeIndent(raw string) string {
	i := strings.LastIndexByte(raw, '\n')
	if i < 0 {
		return ""
	}
	last := raw[i+1:]
	return last[:len(last)-len(strings.TrimLeft(last, " \t"))]
}

// field is one key and its raw JSON value, in output order.
type field struct{ Key, Val string } // key is raw JSON (quoted)

func (st style) object(fields []field, inner, close string) string {
	return st.list('{', '}', len(fields), func(i int) string { return fields[i].Key + st.sep + fields[i].Val }, inner, close)
}

// strings renders an array of strings whose opening bracket sits on a line
// indented by indent.
func (st style) strings(vals []string, indent string) string {
	return st.list('[', ']', len(vals), func(i int) string { return claudecfg.JSONString(vals[i]) }, indent+st.unit, indent)
}

// list renders n items (item(i) each) between open and close, comma
// separated; pretty, each on a line of its own indented by inner, and
// close on one indented by outer. An empty list stays on one line.
func (st style) list(open, close byte, n int, item func(int) string, inner, outer string) string {
	if n == 0 {
		return string([]byte{open, close})
	}
	var b strings.Builder
	b.WriteByte(open)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		if st.pretty {
			b.WriteString(st.nl + inner)
		}
		b.WriteString(item(i))
	}
	if st.pretty {
		b.WriteString(st.nl + outer)
	}
	b.WriteByte(close)
	return b.String()
}

// stringObject renders an object of strings in key order.
func (st style) stringObject(keys []string, m map[string]string, indent string) string {
	var fs []field
	for _, k := range keys {
		fs = append(fs, field{claudecfg.JSONString(k), claudecfg.JSONString(m[k])})
	}
	return st.object(fs, indent+st.unit, indent)
}

// indentLines inserts add after every newline of raw.
func indentLines(raw, add string) string {
	if add == "" {
		return raw
	}
	return strings.ReplaceAll(raw, "\n", "\n"+add)
}

// dedentLines removes up to n leading blanks after every newline of raw:
// the inverse of indentLines for an n-character add.
func dedentLines(raw string, n int) string {
	if n <= 0 || !strings.Contains(raw, "\n") {
		return raw
	}
	parts := strings.Split(raw, "\n")
	for i := 1; i < len(parts); i++ {
		p := parts[i]
		j := 0
		for j < n && j < len(p) && (p[j] == ' ' || p[j] == '\t') {
			j++
		}
		parts[i] = p[j:]
	}
	return strings.Join(parts, "\n")
}
