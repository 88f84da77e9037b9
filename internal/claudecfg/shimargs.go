package claudecfg

import (
	"regexp"
	"strings"
	"sync"
)

// HeaderEnvPrefix starts the names of the env variables a wrapped remote
// entry carries its header values in: the values are secrets and stay out of
// the shim's argv (visible in ps); --header names them as ${VAR}, which the
// shim expands from its environment (Claude Code passes an entry's env to
// the process it starts).
const HeaderEnvPrefix = "MCP_HEAL_HEADER_"

// URLEnvName is the env variable a wrapped remote entry carries its URL in
// (any part of a URL may be a key: the path, the query, the userinfo, the
// host): the shim reads it with --url-env instead of --url, so the URL
// stays out of argv, as header values do.
const URLEnvName = "MCP_HEAL_URL"

// ShimInvocation is what a wrapped entry's shim arguments say about the real
// server.
type ShimInvocation struct {
	Name      string   // --name
	Command   string   // stdio: the real command (after --)
	Args      []string // stdio: its arguments
	URL       string   // remote: --url, or "${VAR}" for --url-env VAR
	Transport string   // remote: --transport (auto, http, sse)
	Headers   []string // remote: --header values, "K: V" (V usually ${VAR})
}

// IsShim reports whether command and args launch `mcp-heal shim`. The
// command's base name is taken after the last / or \ whatever this
// platform's separator: a config written on Windows
// (C:\...\mcp-heal.exe) reads the same everywhere.
func IsShim(command string, args []string) bool {
	base := command[strings.LastIndexAny(command, `/\`)+1:]
	return len(args) > 0 && args[0] == "shim" && strings.HasPrefix(base, "mcp-heal")
}

// ParseShimArgs reads the arguments of `mcp-heal shim` (args[0] is "shim").
// Flags it does not know are skipped; for stdio everything after "--" is
// the real command line.
func ParseShimArgs(args []string) (ShimInvocation, bool) {
	var s ShimInvocation
	if len(args) == 0 || args[0] != "shim" {
		return s, false
	}
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			if i+1 < len(args) {
				s.Command = args[i+1]
				if len(args) > i+2 {
					s.Args = append([]string{}, args[i+2:]...)
				}
			}
			break
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") {
			continue
		}
		switch name {
		case "name", "url", "url-env", "transport", "header", "header-env":
		default:
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				break
			}
			i++
			val = args[i]
		}
		switch name {
		case "name":
			s.Name = val
		case "url":
			s.URL = val
		case "url-env":
			// Seen by the rest of the package as the equivalent --url.
			s.URL = "${" + val + "}"
		case "transport":
			s.Transport = val
		case "header":
			s.Headers = append(s.Headers, val)
		case "header-env":
			// Seen by the rest of the package as the equivalent --header.
			if k, v, ok := strings.Cut(val, "="); ok {
				s.Headers = append(s.Headers, k+": ${"+v+"}")
			}
		}
	}
	if s.Command == "" && s.URL == "" {
		return s, false
	}
	return s, true
}

// FromEnv resolves v when it is exactly ${VAR} with VAR one of wrap's own
// variables (prefix) present in env; ok is false otherwise.
func FromEnv(v string, env map[string]string, prefix string) (value, name string, ok bool) {
	m := EnvRef().FindStringSubmatch(v)
	if m == nil || !strings.HasPrefix(m[1], prefix) {
		return "", "", false
	}
	value, ok = env[m[1]]
	return value, m[1], ok
}

var EnvRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$`) })

// SplitHeader splits "K: V" into K and V.
func SplitHeader(h string) (k, v string) {
	k, v, _ = strings.Cut(h, ":")
	return strings.TrimSpace(k), strings.TrimSpace(v)
}
