package ccpolicy

import (
	"os"
	"regexp"
)

// envRef is a ${VAR} or ${VAR:-default} reference, as Claude Code
// expands it in an entry's command, arguments and URL and in a
// serverCommand or serverUrl rule before comparing them (read in the
// 2.1.328 and 2.1.332 binaries, checked by TestPolicyMatchesClaude).
var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}`)

// expandVars replaces each reference in s: the variable's value when set,
// else the default when one is given, else the reference stays as
// written. An empty value counts as unset here (getenv cannot tell them
// apart; Claude Code would expand it to "").
func expandVars(s string, getenv func(string) string) string {
	return envRef.ReplaceAllStringFunc(s, func(m string) string {
		sm := envRef.FindStringSubmatch(m)
		if v := getenv(sm[1]); v != "" {
			return v
		}
		if len(m) > len("${"+sm[1]+"}") {
			return sm[2]
		}
		return m
	})
}

func (o Options) getenv() func(string) string {
	if o.Getenv != nil {
		return o.Getenv
	}
	return os.Getenv
}

// expand is e with ${VAR} expanded in its command, arguments and URL:
// Claude Code matches a serverCommand or serverUrl rule against the entry
// as written and as expanded.
func (p *Policy) expand(e Entry) Entry {
	get := p.o.getenv()
	e.Command = expandVars(e.Command, get)
	e.URL = expandVars(e.URL, get)
	args := make([]string, len(e.Args))
	for i, a := range e.Args {
		args[i] = expandVars(a, get)
	}
	e.Args = args
	return e
}
