// Package probe checks whether an MCP server works right now, the way
// Claude Code would start it: spawn the command (or POST initialize to the
// URL) with a timeout, complete the handshake, list the tools, and explain a
// failure in terms a user can act on (command not found, exited with code N
// and this stderr, missing environment variable, timed out, connection
// refused, 401/403, non-JSON on stdout).
package probe

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/ccpolicy"
	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
	"github.com/mcp-heal/mcp-heal/internal/health"
)

// ProtocolVersion is the handshake-era version the probe offers; Claude
// Code 2.1.328 falls back to it after server/discover.
const ProtocolVersion = "2025-11-25"

// StatelessVersion is the stateless-era version used with server/discover.
const StatelessVersion = "2026-07-28"

// DefaultTimeout bounds one probe (spawn or connect, handshake, tools/list).
const DefaultTimeout = 15 * time.Second

// Target is what to probe: a command (stdio) or a URL (http, sse).
type Target struct {
	Name      string
	Transport string // "stdio", "http" or "sse"; "" infers from URL
	Command   string
	Args      []string
	Env       map[string]string // added to the inherited environment; ${VAR} expands
	Dir       string
	URL       string
	Headers   map[string]string // ${VAR} expands
	// Unapproved is the approval (claudecfg.Pending or Rejected) of a
	// project server the user has not approved: Run refuses to start it.
	Unapproved string
	// Blocked says why Claude Code's policy keeps the server from
	// running (ccpolicy): Run refuses to start it.
	Blocked string
}

// FromServer builds a Target from a configured server (for a wrapped entry,
// the real server the shim runs).
func FromServer(s claudecfg.Server, dir string) Target {
	t := Target{Name: s.Name, Transport: s.Transport, Command: s.Command, Args: s.Args, Env: s.Env, Dir: dir, URL: s.URL, Headers: s.Headers}
	if s.Unapproved() {
		t.Unapproved = s.Approval
	}
	if s.Policy != nil {
		t.Blocked = s.Policy.Why
	}
	return t
}

// Failure kinds.
const (
	NotFound      = "not-found"      // command not found
	NotExecutable = "not-executable" // permission denied and the like
	Exited        = "exited"         // process exited before answering
	MissingEnv    = "missing-env"    // an environment variable the server needs is unset
	Timeout       = "timeout"        // no answer in time
	NonJSON       = "non-json"       // stdout carried something that is not JSON-RPC
	RPCError      = "rpc-error"      // initialize answered with an error
	Refused       = "refused"        // connection refused
	Unauthorized  = "unauthorized"   // HTTP 401
	Forbidden     = "forbidden"      // HTTP 403
	HTTPStatus    = "http-status"    // another unexpected HTTP status
	Network       = "network"        // DNS, TLS, reset...
	BadConfig     = "bad-config"     // nothing to probe
	NotApproved   = "not-approved"   // a project server the user has not approved: never run
	Blocked       = "blocked"        // Claude Code's policy keeps it from running: never run
)

// Problem explains why a probe failed.
type Problem struct {
	Kind     string   `json:"kind"`
	Summary  string   `json:"summary"` // one line: what happened
	Hint     string   `json:"hint"`    // one line: what to do
	ExitCode *int     `json:"exit_code,omitempty"`
	Stderr   []string `json:"stderr,omitempty"` // last lines, redacted
}

// Result is the outcome of one probe.
type Result struct {
	OK              bool          `json:"ok"`
	Era             string        `json:"era,omitempty"` // "handshake" or "stateless"
	ProtocolVersion string        `json:"protocol_version,omitempty"`
	ServerName      string        `json:"server_name,omitempty"`
	ServerVersion   string        `json:"server_version,omitempty"`
	Tools           []string      `json:"tools,omitempty"`
	Elapsed         time.Duration `json:"elapsed_ns"`
	Problem         *Problem      `json:"problem,omitempty"`
	Warnings        []string      `json:"warnings,omitempty"` // worth fixing, yet the server works
}

// Line is a one-line description of r for humans and the model.
func (r Result) Line() string {
	if r.OK {
		who := r.ServerName
		if who == "" {
			who = "the server"
		}
		return fmt.Sprintf("%s answered in %s with %d tools", who, r.Elapsed.Round(time.Millisecond), len(r.Tools))
	}
	if r.Problem == nil {
		return "probe failed"
	}
	return r.Problem.Summary
}

// Run probes t within timeout (DefaultTimeout when <= 0).
func Run(ctx context.Context, t Target, timeout time.Duration) Result {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	var r Result
	switch {
	case t.Blocked != "":
		r = fail(Blocked, "not run: "+t.Blocked, "nothing to run: Claude Code does not run it either, so doctor does not probe it")
	case t.Unapproved != "":
		// The last line of defence: whoever picked the server, a
		// command the user did not approve is not run (nor its URL
		// sent the user's headers).
		r = fail(NotApproved, ccpolicy.NotApproved(t.Unapproved), health.ApproveFirst)
	case t.URL != "" && t.Transport != "stdio":
		r = probeHTTP(ctx, t, timeout)
	case t.Command != "":
		r = probeStdio(ctx, t, timeout)
	default:
		r = fail(BadConfig, "no command or URL is configured", "fix the server's entry in the MCP config")
	}
	r.Elapsed = time.Since(start)
	if r.OK {
		sort.Strings(r.Tools)
	}
	return r
}

func fail(kind, summary, hint string) Result {
	return Result{Problem: &Problem{Kind: kind, Summary: summary, Hint: hint}}
}

// reVar is a ${VAR} or ${VAR:-default} reference: the only form Claude
// Code expands in MCP config values ($VAR and $$ stay as they are).
var reVar = lazyRegexp(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}`)

// expand replaces ${VAR} and ${VAR:-default} from the environment the way
// Claude Code expands MCP config values, and records variables that are
// unset and have no default in missing.
func expand(s string, missing map[string]bool) string {
	if !strings.Contains(s, "${") {
		return s
	}
	return reVar().ReplaceAllStringFunc(s, func(ref string) string {
		m := reVar().FindStringSubmatch(ref)
		if v, ok := os.LookupEnv(m[1]); ok {
			return v
		}
		if strings.Contains(ref, ":-") {
			return m[2]
		}
		if missing != nil {
			missing[m[1]] = true
		}
		return ""
	})
}

// reEnvComplaint finds the name of an environment variable a server's
// stderr complains about: "API_KEY is not set", "missing environment
// variable FOO", "KeyError: 'FOO'".
var reEnvComplaint = lazyRegexp(`(?:[Ee]nv(?:ironment)?(?: [Vv]ariable)?s?\b[^A-Z\n]{0,20}\b([A-Z][A-Z0-9_]{2,})\b|\b([A-Z][A-Z0-9_]{2,})\b[^\n]{0,30}?\b(?:is (?:not set|missing|required|undefined|empty)|not set|missing|required|must be set|undefined)|KeyError: '([A-Z][A-Z0-9_]{2,})')`)

// notVars are upper-case words stderr lines use that are not variables.
var notVars = map[string]bool{"MCP": true, "JSON": true, "HTTP": true, "HTTPS": true, "URL": true, "ERROR": true, "ERR": true, "WARN": true, "WARNING": true, "INFO": true, "DEBUG": true, "FATAL": true, "PANIC": true, "API": true}

func envComplaint(lines []string, env map[string]string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		m := reEnvComplaint().FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		for _, name := range m[1:] {
			if name == "" || notVars[name] {
				continue
			}
			if _, set := env[name]; set {
				continue
			}
			if _, set := os.LookupEnv(name); set {
				continue
			}
			return name
		}
	}
	return ""
}
