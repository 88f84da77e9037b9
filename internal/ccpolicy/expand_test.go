package ccpolicy

import "testing"

// TestExpandVars: ${VAR} and ${VAR:-default}, as Claude Code expands them
// in a command and its serverCommand rules before comparing (the states
// "deny command - entry var ..." of TestPolicyMatchesClaude).
func TestExpandVars(t *testing.T) {
	env := map[string]string{"A": "val", "EMPTY": ""}
	get := func(k string) string { return env[k] }
	for in, want := range map[string]string{
		"${A}":             "val",
		"x${A}y":           "xvaly",
		"${UNSET}":         "${UNSET}",
		"${UNSET:-dflt}":   "dflt",
		"${A:-dflt}":       "val",
		"${EMPTY:-dflt}":   "dflt",
		"$A":               "$A",
		"${1A}":            "${1A}",
		"${A}/${UNSET:-d}": "val/d",
	} {
		if got := expandVars(in, get); got != want {
			t.Errorf("expandVars(%q) = %q, want %q", in, got, want)
		}
	}
}
