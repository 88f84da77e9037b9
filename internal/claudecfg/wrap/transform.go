package wrap

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
)

// What a transform did to one entry.
const (
	ActWrapped        = "wrapped"
	ActUnwrapped      = "unwrapped"
	ActShimUpdated    = "shim path updated"
	ActKeepSet        = "--keep set" // an entry wrapped already, now with wrap's --keep
	ActAlreadyWrapped = "already wrapped"
	ActNotWrapped     = "not wrapped"
	ActSkipped        = "skipped"
	ActRefreshed      = "refreshed" // a local copy of a project server, after .mcp.json changed
)

// Change is what a transform did, or declined to do, to one entry.
type Change struct {
	Name   string `json:"name"`
	Action string `json:"action"`
	Detail string `json:"detail,omitempty"` // why it was skipped, or a note
}

// Changed reports whether the entry's bytes changed.
func (c Change) Changed() bool {
	return c.Action == ActWrapped || c.Action == ActUnwrapped || c.Action == ActShimUpdated || c.Action == ActKeepSet || c.Action == ActRefreshed || c.Action == ActURLMoved
}

type splice struct {
	start, end int
	text       string
}

func apply(data []byte, sp []splice) []byte {
	sort.Slice(sp, func(i, j int) bool { return sp[i].start < sp[j].start })
	out := make([]byte, 0, len(data)+256*len(sp))
	pos := 0
	for _, s := range sp {
		out = append(out, data[pos:s.start]...)
		out = append(out, s.text...)
		pos = s.end
	}
	return append(out, data[pos:]...)
}

// entries yields the entries of the mcpServers object at path selected by
// names (all when names is empty), the last of duplicate keys only, in file
// order.
func entries(data []byte, path []string, names []string) ([]claudecfg.Member, error) {
	if err := claudecfg.Check("", data); err != nil {
		return nil, err
	}
	obj, ok := claudecfg.At(data, path)
	if !ok || !obj.IsObject() {
		return nil, nil
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	ms := claudecfg.Members(obj)
	last := map[string]int{}
	for i, m := range ms {
		last[m.Key] = i
	}
	var out []claudecfg.Member
	for i, m := range ms {
		if last[m.Key] == i && (len(names) == 0 || want[m.Key]) {
			out = append(out, m)
		}
	}
	return out, nil
}

// Wrap rewrites the entries named (all when names is empty) of the
// mcpServers object at path so that Claude Code launches them through
// `shimPath shim`. Everything outside those entries keeps its bytes. An
// entry already wrapped is left alone (or only its shim path updated), so
// wrapping twice equals wrapping once. Invalid JSON returns a *SyntaxError
// and no data. flags are extra shim flags for stdio entries (e.g. --keep
// DURATION).
func Wrap(data []byte, path []string, names []string, shimPath string, flags ...string) ([]byte, []Change, error) {
	return rewrite(data, path, names, func(name string, e gjson.Result) (string, Change) { return wrapEntry(name, e, shimPath, flags...) })
}

// Unwrap is the inverse of Wrap: a wrapped entry gets its original bytes
// back (re-indented only if the file was re-indented since). An entry
// wrapped by hand (no marker) is rebuilt from the shim's arguments.
func Unwrap(data []byte, path []string, names []string) ([]byte, []Change, error) {
	return rewrite(data, path, names, unwrapEntry)
}

// rewrite replaces each selected entry by what edit makes of it, when
// edit changed it.
func rewrite(data []byte, path []string, names []string, edit func(string, gjson.Result) (string, Change)) ([]byte, []Change, error) {
	ms, err := entries(data, path, names)
	if err != nil {
		return nil, nil, err
	}
	var sp []splice
	var changes []Change
	for _, m := range ms {
		text, ch := edit(m.Key, m.Val)
		changes = append(changes, ch)
		if ch.Changed() {
			sp = append(sp, splice{m.Val.Index, m.Val.Index + len(m.Val.Raw), text})
		}
	}
	return apply(data, sp), changes, nil
}

// withKeepEnv adds --keep-env with the names of the entry's env to
// flags that ask for --keep: a kept server's identity covers the
// variables its config entry sets, and only those (the rest of Claude
// Code's environment differs from one session to the next).
func withKeepEnv(flags []string, env gjson.Result) []string {
	keep := false
	for _, f := range flags {
		keep = keep || f == "--keep"
	}
	if !keep || !env.IsObject() {
		return flags
	}
	var names []string
	env.ForEach(func(k, _ gjson.Result) bool {
		names = append(names, k.String())
		return true
	})
	if len(names) == 0 {
		return flags
	}
	sort.Strings(names)
	return append(append([]string(nil), flags...), "--keep-env", strings.Join(names, ","))
}

func hasDuplicateKeys(e gjson.Result) bool {
	seen := map[string]bool{}
	for _, m := range claudecfg.Members(e) {
		if seen[m.Key] {
			return true
		}
		seen[m.Key] = true
	}
	return false
}

func wrapEntry(name string, e gjson.Result, shimPath string, flags ...string) (string, Change) {
	ch := Change{Name: name, Action: ActSkipped}
	if !e.IsObject() {
		ch.Detail = "not a JSON object"
		return "", ch
	}
	if hasDuplicateKeys(e) {
		ch.Detail = "the entry has duplicate keys"
		return "", ch
	}
	command := claudecfg.LastVal(e, "command")
	args, argsOK := claudecfg.StringArray(claudecfg.LastVal(e, "args"))
	if command.Type == gjson.String && argsOK && claudecfg.IsShim(command.String(), args) {
		return rewrapEntry(ch, e, command.String(), args, shimPath, flags)
	}
	if claudecfg.LastVal(e, claudecfg.MarkerKey).Exists() {
		ch.Detail = fmt.Sprintf("fix or remove its %q key: the entry has it but does not run the shim (edited by hand?)", claudecfg.MarkerKey)
		return "", ch
	}
	st := detectStyle(e)
	typ := claudecfg.LastVal(e, "type")
	if typ.Exists() && typ.Type != gjson.String {
		ch.Detail = "\"type\" is not a string"
		return "", ch
	}
	transport := claudecfg.TransportOf(typ.String(), command.String(), claudecfg.LastVal(e, "url").String())
	var fields []field
	switch transport {
	case "stdio":
		if command.Type != gjson.String || command.String() == "" {
			ch.Detail = "no command"
			return "", ch
		}
		if !argsOK {
			ch.Detail = "\"args\" is not an array of strings"
			return "", ch
		}
		fields = stdioFields(name, e, st, shimPath, command.String(), args, flags)
		ch.Detail = keptWords(flags)
	case "http", "sse":
		var why string
		if fields, why = remoteFields(name, e, st, shimPath, transport); why != "" {
			ch.Detail = why
			return "", ch
		}
		if keepOf(flags) != "" {
			ch.Detail = notKept
		}
	default:
		ch.Detail = fmt.Sprintf("transport %q cannot be wrapped", transport)
		return "", ch
	}
	fields = append(fields, field{claudecfg.JSONString(claudecfg.MarkerKey), st.marker(e)})
	ch.Action = ActWrapped
	return st.object(fields, st.inner, st.close), ch
}

// stdioFields are the members of stdio entry e wrapped: command and args
// replaced by the shim's (in their place, args added after command when e
// has none), every other member as it was.
func stdioFields(name string, e gjson.Result, st style, shimPath, command string, args, flags []string) []field {
	shimArgs := st.strings(StdioShimArgs(name, command, args, withKeepEnv(flags, claudecfg.LastVal(e, "env"))...), st.inner)
	var fields []field
	for _, m := range claudecfg.Members(e) {
		switch m.Key {
		case "command":
			fields = append(fields, field{m.KRaw.Raw, claudecfg.JSONString(shimPath)})
			if !claudecfg.LastVal(e, "args").Exists() {
				fields = append(fields, field{`"args"`, shimArgs})
			}
		case "args":
			fields = append(fields, field{m.KRaw.Raw, shimArgs})
		default:
			fields = append(fields, field{m.KRaw.Raw, m.Val.Raw})
		}
	}
	return fields
}

// remoteFields are the members of remote entry e wrapped as a stdio entry
// running the shim: the header values and the URL move into the entry's
// env (secrets stay out of argv); why says why e cannot
// be wrapped ("" when it can).
func remoteFields(name string, e gjson.Result, st style, shimPath, transport string) (fields []field, why string) {
	url := claudecfg.LastVal(e, "url")
	if url.Type != gjson.String || url.String() == "" {
		return nil, "no url"
	}
	for _, k := range []string{"oauth", "headersHelper"} {
		if claudecfg.LastVal(e, k).Exists() {
			return nil, fmt.Sprintf("uses %q, which only Claude Code can do for a remote server", k)
		}
	}
	hv := claudecfg.LastVal(e, "headers")
	if hv.Exists() && !hv.IsObject() {
		return nil, "\"headers\" is not an object"
	}
	env, envKeys := claudecfg.StringMap(claudecfg.LastVal(e, "env"))
	if env == nil {
		env = map[string]string{}
	}
	taken := map[string]bool{}
	for _, k := range envKeys {
		taken[k] = true
	}
	var headers []string
	hm, hkeys := claudecfg.StringMap(hv)
	for _, k := range hkeys {
		v := headerEnvName(k, taken)
		env[v] = hm[k]
		envKeys = append(envKeys, v)
		headers = append(headers, k+": ${"+v+"}")
	}
	// The URL always moves: a key may sit in any part of it (the path as
	// often as the query), and argv is public (ps). Claude Code expands
	// ${VAR} in an entry's env as in its url, so the value the shim gets
	// is the one Claude Code would have used, and the file keeps ${VAR}.
	v := envName(claudecfg.URLEnvName, taken)
	env[v] = url.String()
	shimURL := "${" + v + "}"
	envKeys = append(envKeys, v)
	shimArgs := st.strings(RemoteShimArgs(name, shimURL, transport, headers), st.inner)
	envRaw := st.stringObject(envKeys, env, st.inner)
	if !claudecfg.LastVal(e, "type").Exists() {
		fields = append(fields, field{`"type"`, `"stdio"`})
	}
	for _, m := range claudecfg.Members(e) {
		switch m.Key {
		case "type":
			fields = append(fields, field{m.KRaw.Raw, `"stdio"`})
		case "url":
			fields = append(fields, field{`"command"`, claudecfg.JSONString(shimPath)}, field{`"args"`, shimArgs})
			if !claudecfg.LastVal(e, "env").Exists() {
				fields = append(fields, field{`"env"`, envRaw})
			}
		case "env":
			fields = append(fields, field{m.KRaw.Raw, envRaw})
		case "headers", "command", "args":
		default:
			fields = append(fields, field{m.KRaw.Raw, m.Val.Raw})
		}
	}
	return fields, ""
}

// marker is the mcpHeal object of a wrapped entry: the original e,
// re-indented to sit two levels deeper.
func (st style) marker(e gjson.Result) string {
	orig := e.Raw
	if st.pretty {
		deeper := st.inner + st.unit
		if strings.HasPrefix(deeper, st.close) {
			orig = indentLines(orig, deeper[len(st.close):])
		}
	}
	return st.object([]field{{`"original"`, orig}}, st.inner+st.unit, st.inner)
}

// EntryNames lists the keys of the mcpServers object at path (only those in
// names, when names is not empty), in file order, without duplicates.
func EntryNames(data []byte, path []string, names []string) []string {
	obj, ok := claudecfg.At(data, path)
	if !ok {
		return nil
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var out []string
	seen := map[string]bool{}
	for _, m := range claudecfg.Members(obj) {
		if !seen[m.Key] && (len(names) == 0 || want[m.Key]) {
			seen[m.Key] = true
			out = append(out, m.Key)
		}
	}
	return out
}
