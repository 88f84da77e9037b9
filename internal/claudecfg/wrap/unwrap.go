package wrap

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
)

func unwrapEntry(name string, e gjson.Result) (string, Change) {
	ch := Change{Name: name, Action: ActNotWrapped}
	if !e.IsObject() {
		return "", ch
	}
	command := claudecfg.LastVal(e, "command")
	args, ok := claudecfg.StringArray(claudecfg.LastVal(e, "args"))
	if command.Type != gjson.String || !ok || !claudecfg.IsShim(command.String(), args) {
		if claudecfg.LastVal(e, claudecfg.MarkerKey).Exists() {
			ch.Action = ActSkipped
			ch.Detail = fmt.Sprintf("fix or remove its %q key: the entry has it but does not run the shim (edited by hand?)", claudecfg.MarkerKey)
		}
		return "", ch
	}
	orig := claudecfg.LastVal(claudecfg.LastVal(e, claudecfg.MarkerKey), "original")
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
			inv, ok := claudecfg.ParseShimArgs(args)
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
	inv, ok := claudecfg.ParseShimArgs(args)
	if !ok {
		ch.Action, ch.Detail = ActSkipped, "cannot read the shim's arguments"
		return "", ch
	}
	return rebuild(name, e, inv)
}

// rebuild turns an entry wrapped by hand (no marker) back into a plain one.
func rebuild(name string, e gjson.Result, inv claudecfg.ShimInvocation) (string, Change) {
	st := detectStyle(e)
	ch := Change{Name: name, Action: ActUnwrapped, Detail: "rebuilt from the shim's arguments"}
	var fields []field
	if inv.URL == "" {
		for _, m := range claudecfg.Members(e) {
			switch m.Key {
			case "command":
				fields = append(fields, field{m.KRaw.Raw, claudecfg.JSONString(inv.Command)})
			case "args":
				fields = append(fields, field{m.KRaw.Raw, st.strings(inv.Args, st.inner)})
			case claudecfg.MarkerKey:
			default:
				fields = append(fields, field{m.KRaw.Raw, m.Val.Raw})
			}
		}
		return st.object(fields, st.inner, st.close), ch
	}
	transport := inv.Transport
	if transport == "" || transport == "auto" {
		transport = "http"
	}
	env, envKeys := claudecfg.StringMap(claudecfg.LastVal(e, "env"))
	hm := map[string]string{}
	var hkeys []string
	used := map[string]bool{}
	realURL := inv.URL
	if v, name, ok := claudecfg.FromEnv(realURL, env, claudecfg.URLEnvName); ok {
		realURL, used[name] = v, true
	}
	for _, h := range inv.Headers {
		k, v := claudecfg.SplitHeader(h)
		if m := claudecfg.EnvRef().FindStringSubmatch(v); m != nil && strings.HasPrefix(m[1], claudecfg.HeaderEnvPrefix) {
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
	if !claudecfg.LastVal(e, "type").Exists() {
		fields = append(fields, field{`"type"`, claudecfg.JSONString(transport)})
	}
	for _, m := range claudecfg.Members(e) {
		switch m.Key {
		case "type":
			fields = append(fields, field{m.KRaw.Raw, claudecfg.JSONString(transport)})
		case "command":
			fields = append(fields, field{`"url"`, claudecfg.JSONString(realURL)})
			if len(hkeys) > 0 {
				fields = append(fields, field{`"headers"`, st.stringObject(hkeys, hm, st.inner)})
			}
		case "args", claudecfg.MarkerKey:
		case "env":
			if len(keep) > 0 {
				fields = append(fields, field{m.KRaw.Raw, st.stringObject(keep, env, st.inner)})
			}
		default:
			fields = append(fields, field{m.KRaw.Raw, m.Val.Raw})
		}
	}
	return st.object(fields, st.inner, st.close), ch
}

// editedKeys names the keys of wrapped entry e that differ from what
// wrapping orig gives now (someone edited the entry after wrap).
func editedKeys(name string, e gjson.Result, orig string) []string {
	cmd := claudecfg.LastVal(e, "command").String()
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
		implied := claudecfg.TransportOf("", claudecfg.LastVal(ro, "command").String(), claudecfg.LastVal(ro, "url").String())
		if p["type"] == claudecfg.JSONString(implied) {
			delete(p, "type")
		}
	}
	if _, had := o["args"]; !had && p["args"] == "[]" {
		delete(p, "args") // wrap added "args" to an entry without any
	}
	out := orig
	var keys []string
	var err error
	for _, m := range claudecfg.Members(gjson.Parse(plain)) {
		if _, ok := p[m.Key]; !ok || o[m.Key] == p[m.Key] {
			continue
		}
		if out, err = sjson.SetRaw(out, gjson.Escape(m.Key), m.Val.Raw); err != nil {
			return "", nil, err
		}
		keys = append(keys, m.Key)
	}
	for _, m := range claudecfg.Members(ro) {
		if _, ok := p[m.Key]; !ok {
			if out, err = sjson.Delete(out, gjson.Escape(m.Key)); err != nil {
				return "", nil, err
			}
			keys = append(keys, m.Key)
		}
	}
	return out, keys, nil
}
