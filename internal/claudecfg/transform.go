package claudecfg

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// markerKey holds, inside a wrapped entry, the original entry exactly as it
// was ({"original": <entry>}), so unwrap restores it byte for byte. Claude
// Code 2.1.328 ignores unknown keys in a server entry and keeps them when it
// rewrites ~/.claude.json or .mcp.json (checked with `claude mcp get`,
// `claude mcp list` and `claude mcp add`).
const markerKey = "mcpHeal"

// What a transform did to one entry.
const (
	ActWrapped        = "wrapped"
	ActUnwrapped      = "unwrapped"
	ActShimUpdated    = "shim path updated"
	ActAlreadyWrapped = "already wrapped"
	ActNotWrapped     = "not wrapped"
	ActSkipped        = "skipped"
)

// Change is what a transform did, or declined to do, to one entry.
type Change struct {
	Name   string `json:"name"`
	Action string `json:"action"`
	Detail string `json:"detail,omitempty"` // why it was skipped, or a note
}

// Changed reports whether the entry's bytes changed.
func (c Change) Changed() bool {
	return c.Action == ActWrapped || c.Action == ActUnwrapped || c.Action == ActShimUpdated
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
func entries(data []byte, path []string, names []string) ([]member, error) {
	if err := Check("", data); err != nil {
		return nil, err
	}
	obj, ok := at(data, path)
	if !ok || !obj.IsObject() {
		return nil, nil
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	ms := members(obj)
	last := map[string]int{}
	for i, m := range ms {
		last[m.key] = i
	}
	var out []member
	for i, m := range ms {
		if last[m.key] == i && (len(names) == 0 || want[m.key]) {
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
	ms, err := entries(data, path, names)
	if err != nil {
		return nil, nil, err
	}
	var sp []splice
	var changes []Change
	for _, m := range ms {
		text, ch := wrapEntry(m.key, m.val, shimPath, flags...)
		changes = append(changes, ch)
		if ch.Changed() {
			sp = append(sp, splice{m.val.Index, m.val.Index + len(m.val.Raw), text})
		}
	}
	return apply(data, sp), changes, nil
}

// Unwrap is the inverse of Wrap: a wrapped entry gets its original bytes
// back (re-indented only if the file was re-indented since). An entry
// wrapped by hand (no marker) is rebuilt from the shim's arguments.
func Unwrap(data []byte, path []string, names []string) ([]byte, []Change, error) {
	ms, err := entries(data, path, names)
	if err != nil {
		return nil, nil, err
	}
	var sp []splice
	var changes []Change
	for _, m := range ms {
		text, ch := unwrapEntry(m.key, m.val)
		changes = append(changes, ch)
		if ch.Changed() {
			sp = append(sp, splice{m.val.Index, m.val.Index + len(m.val.Raw), text})
		}
	}
	return apply(data, sp), changes, nil
}

func hasDuplicateKeys(e gjson.Result) bool {
	seen := map[string]bool{}
	for _, m := range members(e) {
		if seen[m.key] {
			return true
		}
		seen[m.key] = true
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
	command := lastVal(e, "command")
	args, argsOK := stringArray(lastVal(e, "args"))
	if command.Type == gjson.String && argsOK && IsShim(command.String(), args) {
		ch.Action = ActAlreadyWrapped
		if command.String() != shimPath {
			m, _ := lastMember(e, "command")
			off := m.val.Index - e.Index
			ch.Action = ActShimUpdated
			ch.Detail = "was " + command.String()
			return e.Raw[:off] + jsonString(shimPath) + e.Raw[off+len(m.val.Raw):], ch
		}
		return "", ch
	}
	if lastVal(e, markerKey).Exists() {
		ch.Detail = fmt.Sprintf("has an %q key but does not run the shim (edited by hand?); fix it or remove that key", markerKey)
		return "", ch
	}
	st := detectStyle(e)
	typ := lastVal(e, "type")
	if typ.Exists() && typ.Type != gjson.String {
		ch.Detail = "\"type\" is not a string"
		return "", ch
	}
	transport := transportOf(typ.String(), command.String(), lastVal(e, "url").String())
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
		shimArgs := st.strings(StdioShimArgs(name, command.String(), args, flags...), st.inner)
		for _, m := range members(e) {
			switch m.key {
			case "command":
				fields = append(fields, field{m.kraw.Raw, jsonString(shimPath)})
				if !lastVal(e, "args").Exists() {
					fields = append(fields, field{`"args"`, shimArgs})
				}
			case "args":
				fields = append(fields, field{m.kraw.Raw, shimArgs})
			default:
				fields = append(fields, field{m.kraw.Raw, m.val.Raw})
			}
		}
	case "http", "sse":
		url := lastVal(e, "url")
		if url.Type != gjson.String || url.String() == "" {
			ch.Detail = "no url"
			return "", ch
		}
		for _, k := range []string{"oauth", "headersHelper"} {
			if lastVal(e, k).Exists() {
				ch.Detail = fmt.Sprintf("uses %q, which only Claude Code can do for a remote server", k)
				return "", ch
			}
		}
		hv := lastVal(e, "headers")
		if hv.Exists() && !hv.IsObject() {
			ch.Detail = "\"headers\" is not an object"
			return "", ch
		}
		env, envKeys := stringMap(lastVal(e, "env"))
		if env == nil {
			env = map[string]string{}
		}
		taken := map[string]bool{}
		for _, k := range envKeys {
			taken[k] = true
		}
		var headers []string
		hm, hkeys := stringMap(hv)
		for _, k := range hkeys {
			v := headerEnvName(k, taken)
			env[v] = hm[k]
			envKeys = append(envKeys, v)
			headers = append(headers, k+": ${"+v+"}")
		}
		shimURL, movedURL := url.String(), urlHasSecret(url.String())
		if movedURL {
			v := envName(URLEnvName, taken)
			env[v], shimURL = url.String(), "${"+v+"}"
			envKeys = append(envKeys, v)
		}
		shimArgs := st.strings(RemoteShimArgs(name, shimURL, transport, headers), st.inner)
		envRaw := st.stringObject(envKeys, env, st.inner)
		if !typ.Exists() {
			fields = append(fields, field{`"type"`, `"stdio"`})
		}
		for _, m := range members(e) {
			switch m.key {
			case "type":
				fields = append(fields, field{m.kraw.Raw, `"stdio"`})
			case "url":
				fields = append(fields, field{`"command"`, jsonString(shimPath)}, field{`"args"`, shimArgs})
				if (len(headers) > 0 || movedURL) && !lastVal(e, "env").Exists() {
					fields = append(fields, field{`"env"`, envRaw})
				}
			case "env":
				fields = append(fields, field{m.kraw.Raw, envRaw})
			case "headers", "command", "args":
			default:
				fields = append(fields, field{m.kraw.Raw, m.val.Raw})
			}
		}
	default:
		ch.Detail = fmt.Sprintf("transport %q cannot be wrapped", transport)
		return "", ch
	}
	// The original, re-indented to sit two levels deeper.
	orig := e.Raw
	if st.pretty {
		deeper := st.inner + st.unit
		if strings.HasPrefix(deeper, st.close) {
			orig = indentLines(orig, deeper[len(st.close):])
		}
	}
	marker := st.object([]field{{`"original"`, orig}}, st.inner+st.unit, st.inner)
	fields = append(fields, field{jsonString(markerKey), marker})
	ch.Action = ActWrapped
	return st.object(fields, st.inner, st.close), ch
}

func unwrapEntry(name string, e gjson.Result) (string, Change) {
	ch := Change{Name: name, Action: ActNotWrapped}
	if !e.IsObject() {
		return "", ch
	}
	command := lastVal(e, "command")
	args, ok := stringArray(lastVal(e, "args"))
	if command.Type != gjson.String || !ok || !IsShim(command.String(), args) {
		if lastVal(e, markerKey).Exists() {
			ch.Action = ActSkipped
			ch.Detail = fmt.Sprintf("has an %q key but does not run the shim (edited by hand?); fix it or remove that key", markerKey)
		}
		return "", ch
	}
	orig := lastVal(lastVal(e, markerKey), "original")
	if orig.IsObject() {
		raw := orig.Raw
		// Wrap put the same indent in front of every line of the original,
		// so its last line's indent is that added indent plus the entry's.
		cW, cO := closeIndent(e.Raw), closeIndent(raw)
		if strings.HasSuffix(cO, cW) {
			raw = dedentLines(raw, len(cO)-len(cW))
		}
		ch.Action = ActUnwrapped
		if edited := editedKeys(name, e, raw); len(edited) > 0 {
			// Someone changed the wrapped entry (a rotated token, a new
			// argument): keep those changes in the restored entry.
			inv, ok := ParseShimArgs(args)
			plain, _ := rebuild(name, e, inv)
			merged, keys, err := mergeEdits(raw, plain)
			if !ok || err != nil {
				ch.Detail = "restored the entry as it was before wrap; changes made to it since are dropped: " + strings.Join(edited, ", ")
				return raw, ch
			}
			if len(keys) > 0 {
				ch.Detail = "kept the changes made to it since wrap: " + strings.Join(keys, ", ")
			}
			return merged, ch
		}
		return raw, ch
	}
	inv, ok := ParseShimArgs(args)
	if !ok {
		ch.Action, ch.Detail = ActSkipped, "cannot read the shim's arguments"
		return "", ch
	}
	return rebuild(name, e, inv)
}

// rebuild turns an entry wrapped by hand (no marker) back into a plain one.
func rebuild(name string, e gjson.Result, inv ShimInvocation) (string, Change) {
	st := detectStyle(e)
	ch := Change{Name: name, Action: ActUnwrapped, Detail: "rebuilt from the shim's arguments"}
	var fields []field
	if inv.URL == "" {
		for _, m := range members(e) {
			switch m.key {
			case "command":
				fields = append(fields, field{m.kraw.Raw, jsonString(inv.Command)})
			case "args":
				fields = append(fields, field{m.kraw.Raw, st.strings(inv.Args, st.inner)})
			case markerKey:
			default:
				fields = append(fields, field{m.kraw.Raw, m.val.Raw})
			}
		}
		return st.object(fields, st.inner, st.close), ch
	}
	transport := inv.Transport
	if transport == "" || transport == "auto" {
		transport = "http"
	}
	env, envKeys := stringMap(lastVal(e, "env"))
	hm := map[string]string{}
	var hkeys []string
	used := map[string]bool{}
	realURL := inv.URL
	if v, name, ok := fromEnv(realURL, env, URLEnvName); ok {
		realURL, used[name] = v, true
	}
	for _, h := range inv.Headers {
		k, v := splitHeader(h)
		if m := envRef().FindStringSubmatch(v); m != nil && strings.HasPrefix(m[1], HeaderEnvPrefix) {
			if ev, ok := env[m[1]]; ok {
				v = ev
				used[m[1]] = true
			}
		}
		if _, dup := hm[k]; !dup {
			hkeys = append(hkeys, k)
		}
		hm[k] = v
	}
	var keep []string
	for _, k := range envKeys {
		if !used[k] {
			keep = append(keep, k)
		}
	}
	if !lastVal(e, "type").Exists() {
		fields = append(fields, field{`"type"`, jsonString(transport)})
	}
	for _, m := range members(e) {
		switch m.key {
		case "type":
			fields = append(fields, field{m.kraw.Raw, jsonString(transport)})
		case "command":
			fields = append(fields, field{`"url"`, jsonString(realURL)})
			if len(hkeys) > 0 {
				fields = append(fields, field{`"headers"`, st.stringObject(hkeys, hm, st.inner)})
			}
		case "args", markerKey:
		case "env":
			if len(keep) > 0 {
				fields = append(fields, field{m.kraw.Raw, st.stringObject(keep, env, st.inner)})
			}
		default:
			fields = append(fields, field{m.kraw.Raw, m.val.Raw})
		}
	}
	return st.object(fields, st.inner, st.close), ch
}

// editedKeys names the keys of wrapped entry e that differ from what
// wrapping orig gives now (someone edited the entry after wrap).
func editedKeys(name string, e gjson.Result, orig string) []string {
	cmd := lastVal(e, "command").String()
	re := gjson.Parse(orig)
	want, ch := wrapEntry(name, re, cmd)
	if ch.Action != ActWrapped {
		return nil
	}
	a, b := canonicalFields(e.Raw), canonicalFields(want)
	var out []string
	for k, v := range a {
		if b[k] != v {
			out = append(out, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func canonicalFields(raw string) map[string]string {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(raw), &m) != nil {
		return nil
	}
	out := map[string]string{}
	for k, v := range m {
		var x any
		_ = json.Unmarshal(v, &x)
		b, _ := json.Marshal(x)
		out[k] = string(b)
	}
	return out
}

// EntryNames lists the keys of the mcpServers object at path (only those in
// names, when names is not empty), in file order, without duplicates.
func EntryNames(data []byte, path []string, names []string) []string {
	obj, ok := at(data, path)
	if !ok {
		return nil
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var out []string
	seen := map[string]bool{}
	for _, m := range members(obj) {
		if !seen[m.key] && (len(names) == 0 || want[m.key]) {
			seen[m.key] = true
			out = append(out, m.key)
		}
	}
	return out
}

// mergeEdits applies to the original entry orig the top-level keys in which
// plain (the wrapped entry turned back into a plain one) differs from it,
// editing orig in place with sjson so unchanged keys keep their bytes. It
// returns the keys it changed.
func mergeEdits(orig, plain string) (string, []string, error) {
	o, p := canonicalFields(orig), canonicalFields(plain)
	if o == nil || p == nil {
		return "", nil, fmt.Errorf("not an object")
	}
	ro := gjson.Parse(orig)
	if _, had := o["type"]; !had {
		// Wrap adds no "type" to a stdio entry but rebuild names a remote
		// one's: the implied transport is not an edit.
		implied := transportOf("", lastVal(ro, "command").String(), lastVal(ro, "url").String())
		if p["type"] == jsonString(implied) {
			delete(p, "type")
		}
	}
	if _, had := o["args"]; !had && p["args"] == "[]" {
		delete(p, "args") // wrap added "args" to an entry without any
	}
	out := orig
	var keys []string
	var err error
	for _, m := range members(gjson.Parse(plain)) {
		if _, ok := p[m.key]; !ok || o[m.key] == p[m.key] {
			continue
		}
		if out, err = sjson.SetRaw(out, gjson.Escape(m.key), m.val.Raw); err != nil {
			return "", nil, err
		}
		keys = append(keys, m.key)
	}
	for _, m := range members(ro) {
		if _, ok := p[m.key]; !ok {
			if out, err = sjson.Delete(out, gjson.Escape(m.key)); err != nil {
				return "", nil, err
			}
			keys = append(keys, m.key)
		}
	}
	return out, keys, nil
}
