package main

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcp-heal/mcp-heal/internal/bridge"
	"github.com/mcp-heal/mcp-heal/internal/upstream"
)

// remoteOptions are the shim's flags for bridging a remote server (--url).
// Owned by the bridge; shim.go registers them with addRemoteFlags and, when
// URL is set, builds its upstream with newRemoteDialer.
type remoteOptions struct {
	URL       string
	Transport string        // auto, http or sse
	Headers   []string      // "K: V"; values may use ${VAR} from the environment
	HeaderEnv []string      // "K=VAR": header K's value is environment variable VAR
	Deadline  time.Duration // how long calls wait while the server is down
}

func addRemoteFlags(fs *pflag.FlagSet, env *Env) *remoteOptions {
	o := &remoteOptions{}
	fs.StringVar(&o.URL, "url", "", "bridge the remote MCP server at `URL` (http or https) instead of running a command")
	fs.Var(&urlEnvFlag{o: o, getenv: env.Getenv}, "url-env", "like --url, with the URL in environment variable `VAR` (what wrap writes when the URL holds a token, so it stays out of argv)")
	fs.StringVar(&o.Transport, "transport", "auto", "remote transport: auto, http (Streamable HTTP) or sse (legacy HTTP+SSE)")
	fs.StringArrayVar(&o.Headers, "header", nil, "add an HTTP header `'K: V'` to every request (repeatable; ${VAR} expands from the environment)")
	fs.StringArrayVar(&o.HeaderEnv, "header-env", nil, "add an HTTP header `K=VAR` whose value is environment variable VAR (repeatable; what wrap writes, so Claude Code does not try to expand it)")
	fs.DurationVar(&o.Deadline, "deadline", 30*time.Second, "how long calls wait for a remote server that is down before failing")
	return o
}

// newRemoteDialer builds the upstream for --url. Errors are usage
// mistakes (bad URL, transport or header); none carries a header value.
func newRemoteDialer(o *remoteOptions, env *Env, log *slog.Logger) (upstream.Dialer, error) {
	if o.Deadline <= 0 {
		return nil, &usageError{msg: fmt.Sprintf("--deadline must be positive, not %s", o.Deadline)}
	}
	specs := append([]string(nil), o.Headers...)
	for _, he := range o.HeaderEnv {
		k, v, ok := strings.Cut(he, "=")
		if !ok || !isEnvName(v) {
			return nil, &usageError{msg: fmt.Sprintf("--header-env %q: want NAME=VAR", k), hint: "e.g. --header-env Authorization=MY_TOKEN_VAR"}
		}
		// ParseHeaders expands ${VAR} and names a missing one.
		specs = append(specs, k+": ${"+v+"}")
	}
	h, err := bridge.ParseHeaders(specs, env.Getenv)
	if err != nil {
		return nil, &usageError{msg: "--header: " + err.Error(), hint: "write --header 'Authorization: Bearer ${TOKEN}' and export TOKEN"}
	}
	d, err := bridge.New(bridge.Options{
		URL:       o.URL,
		Transport: o.Transport,
		Header:    h,
		Logger:    log,
	})
	if err != nil {
		return nil, &usageError{msg: "--url: " + err.Error()}
	}
	return d, nil
}

// urlEnvFlag is --url-env VAR: --url with the value of VAR, read when the
// flag is parsed. A URL's query often carries an API key, and argv is
// readable by every user on the machine (ps); the environment is not.
type urlEnvFlag struct {
	o      *remoteOptions
	getenv func(string) string
	name   string
}

func (f *urlEnvFlag) String() string { return f.name }
func (f *urlEnvFlag) Type() string   { return "VAR" }

func (f *urlEnvFlag) Set(v string) error {
	if !isEnvName(v) {
		return fmt.Errorf("want the name of an environment variable, not %q", v)
	}
	u := f.getenv(v)
	if u == "" {
		return fmt.Errorf("environment variable %s is not set", v)
	}
	f.name, f.o.URL = v, u
	return nil
}

// isEnvName reports whether s is a valid environment variable name.
func isEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
