package wrap

import (
	"strings"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
)

// ActURLMoved is wrap of a remote entry an older mcp-heal wrapped with its
// URL in the shim's args (--url): the URL moves into the entry's env.
const ActURLMoved = "rewrapped"

// urlMovedWords is the detail of ActURLMoved.
const urlMovedWords = "its URL now reaches the shim through the entry's env (" + claudecfg.URLEnvName + "), not its command line, which every local user can read"

// shimValueFlags are the shim's flags a wrapped remote entry may carry
// that take a value (the next argument).
var shimValueFlags = map[string]bool{"--name": true, "--transport": true, "--header": true, "--header-env": true, "--url-env": true, "--deadline": true, "--max-message": true, "--header-timeout": true}

// urlArgAt is the index of --url (or --url=VALUE) in a wrapped entry's
// shim args, -1 when there is none.
func urlArgAt(args []string) int {
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return -1
		case a == "--url" || strings.HasPrefix(a, "--url="):
			return i
		case shimValueFlags[a]:
			i++
		}
	}
	return -1
}

// moveURL rewrites wrapped entry e whose shim args carry the URL (--url
// U, what wrap wrote before every URL moved) the way wrap writes it now:
// --url-env MCP_HEAL_URL in args, U in env, the shim path set. Members
// other than command, args and env keep their bytes, and so does the
// marker: unwrap still restores the original byte for byte. ok is false
// when e has no --url, or an env that is not an object of strings (left
// alone rather than half-moved).
func moveURL(e gjson.Result, args []string, shimPath string) (string, bool) {
	i := urlArgAt(args)
	if i < 0 {
		return "", false
	}
	u, rest := "", args[i+1:]
	if v, ok := strings.CutPrefix(args[i], "--url="); ok {
		u = v
	} else if len(rest) > 0 {
		u, rest = rest[0], rest[1:]
	} else {
		return "", false
	}
	ev := claudecfg.LastVal(e, "env")
	env, envKeys := claudecfg.StringMap(ev)
	if ev.Exists() && (!ev.IsObject() || len(claudecfg.Members(ev)) != len(envKeys)) {
		return "", false
	}
	if env == nil {
		env = map[string]string{}
	}
	taken := map[string]bool{}
	for _, k := range envKeys {
		taken[k] = true
	}
	v := envName(claudecfg.URLEnvName, taken)
	env[v] = u
	envKeys = append(envKeys, v)
	newArgs := append(append(append([]string{}, args[:i]...), "--url-env", v), rest...)

	st := detectStyle(e)
	envRaw := st.stringObject(envKeys, env, st.inner)
	var fields []field
	for _, m := range claudecfg.Members(e) {
		switch m.Key {
		case "command":
			fields = append(fields, field{m.KRaw.Raw, claudecfg.JSONString(shimPath)})
		case "args":
			fields = append(fields, field{m.KRaw.Raw, st.strings(newArgs, st.inner)})
			if !ev.Exists() {
				fields = append(fields, field{`"env"`, envRaw})
			}
		case "env":
			fields = append(fields, field{m.KRaw.Raw, envRaw})
		default:
			fields = append(fields, field{m.KRaw.Raw, m.Val.Raw})
		}
	}
	return st.object(fields, st.inner, st.close), true
}
