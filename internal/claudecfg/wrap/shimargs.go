package wrap

import (
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
)

// The argv of a wrapped entry: what wrap writes. What it means when read
// back (ParseShimArgs) is claudecfg's, as discovery reads wrapped entries.

// StdioShimArgs are the arguments of a wrapped stdio server; flags are
// extra shim flags (e.g. --keep DURATION).
func StdioShimArgs(name, command string, args []string, flags ...string) []string {
	out := append([]string{"shim", "--name", name}, flags...)
	out = append(out, "--", command)
	return append(out, args...)
}

// RemoteShimArgs are the arguments of a wrapped remote server; headers are
// "K: V" lines. A header whose value is exactly ${MCP_HEAL_HEADER_...} (a
// value wrap moved into the entry's env) is written as --header-env K=VAR:
// Claude Code expands ${VAR} in args against its own environment and warns
// about variables it lacks, while the entry's env reaches only the shim.
//
// A url that is exactly ${MCP_HEAL_URL...} (wrap moves every URL into the
// entry's env: any part of it may be a key) is written as --url-env VAR,
// for the same reason.
func RemoteShimArgs(name, url, transport string, headers []string) []string {
	out := []string{"shim", "--name", name, "--url", url, "--transport", transport}
	if m := claudecfg.EnvRef().FindStringSubmatch(url); m != nil && strings.HasPrefix(m[1], claudecfg.URLEnvName) {
		out[3], out[4] = "--url-env", m[1]
	}
	for _, h := range headers {
		k, v := claudecfg.SplitHeader(h)
		if m := claudecfg.EnvRef().FindStringSubmatch(v); m != nil && strings.HasPrefix(m[1], claudecfg.HeaderEnvPrefix) {
			out = append(out, "--header-env", k+"="+m[1])
			continue
		}
		out = append(out, "--header", h)
	}
	return out
}

// Compiled on first use: every mcp-heal process (hooks included) links this
// package, and package-level compiles would slow each start.
var nonEnv = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Z0-9_]+`) })

// headerEnvName is the env variable for header key k, unique among taken.
func headerEnvName(k string, taken map[string]bool) string {
	return envName(claudecfg.HeaderEnvPrefix+strings.Trim(nonEnv().ReplaceAllString(strings.ToUpper(k), "_"), "_"), taken)
}

// envName is base, or base_2, base_3... if taken; it marks it taken.
func envName(base string, taken map[string]bool) string {
	n := base
	for i := 2; taken[n]; i++ {
		n = base + "_" + strconv.Itoa(i)
	}
	taken[n] = true
	return n
}
