package main

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcp-heal/mcp-heal/internal/bridge"
	"github.com/mcp-heal/mcp-heal/internal/cli"
	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
)

// remoteFlags are `mcp-heal shim`'s flags for bridging a remote server
// (--url): Register adds them to the shim's flag set and, when URL is set,
// Dialer builds the upstream. They live here, not in internal/bridge, so
// that the shim's packages link no flag parsing (internal/arch's
// TestImportGraph). Secrets (header values, a URL's token) arrive through
// the environment (--header-env, --url-env, ${VAR}), never argv, because
// argv is readable by every user on the machine.
type remoteFlags struct {
	URL       string
	Transport string        // auto, http or sse
	Headers   []string      // "K: V"; values may use ${VAR} from the environment
	HeaderEnv []string      // "K=VAR": header K's value is environment variable VAR
	Deadline  time.Duration // how long calls wait while the server is down
	// MaxMessage is the ceiling on one message from the server (stdio or
	// remote); HeaderTimeout bounds the wait for a remote's answer to the
	// connection probe. See docs/limits.md.
	MaxMessage    cli.ByteSize
	HeaderTimeout time.Duration
}

// Register adds the flags to fs; getenv serves --url-env.
func (o *remoteFlags) Register(fs *pflag.FlagSet, getenv func(string) string) {
	fs.StringVar(&o.URL, "url", "", "bridge the remote MCP server at `URL` (http or https) instead of running a command")
	fs.Var(&cli.EnvValue{Dest: &o.URL, Getenv: getenv}, "url-env", "like --url, with the URL in environment variable `VAR` (what wrap writes when the URL holds a token, so it stays out of argv)")
	fs.StringVar(&o.Transport, "transport", "auto", "remote transport: auto, http (Streamable HTTP) or sse (legacy HTTP+SSE)")
	fs.StringArrayVar(&o.Headers, "header", nil, "add an HTTP header `'K: V'` to every request (repeatable; ${VAR} expands from the environment)")
	fs.StringArrayVar(&o.HeaderEnv, "header-env", nil, "add an HTTP header `K=VAR` whose value is environment variable VAR (repeatable; what wrap writes, so Claude Code does not try to expand it)")
	fs.DurationVar(&o.Deadline, "deadline", 30*time.Second, "how long calls wait for a remote server that is down before failing")
	o.MaxMessage = jsonrpc.DefaultMaxMessage
	fs.Var(&o.MaxMessage, "max-message", "drop a message from the server or the client longer than `SIZE` (e.g. 8MiB; the call gets an error; the default is the longest Claude Code takes)")
	fs.DurationVar(&o.HeaderTimeout, "header-timeout", 10*time.Second, "give up on a remote server that accepts the connection but sends no response headers within this long")
}

// Dialer builds the upstream for --url. Its errors are *cli.UsageError
// (bad URL, transport or header); none carries a header value.
func (o *remoteFlags) Dialer(getenv func(string) string, log *slog.Logger) (*bridge.Dialer, error) {
	if o.Deadline <= 0 {
		return nil, &cli.UsageError{Msg: fmt.Sprintf("--deadline must be positive, not %s", o.Deadline)}
	}
	if o.HeaderTimeout <= 0 {
		return nil, &cli.UsageError{Msg: fmt.Sprintf("--header-timeout must be positive, not %s", o.HeaderTimeout)}
	}
	specs := append([]string(nil), o.Headers...)
	for _, he := range o.HeaderEnv {
		k, v, ok := strings.Cut(he, "=")
		if !ok || !cli.IsEnvName(v) {
			return nil, &cli.UsageError{Msg: fmt.Sprintf("--header-env %q: want NAME=VAR", k), Hint: "e.g. --header-env Authorization=MY_TOKEN_VAR"}
		}
		// ParseHeaders expands ${VAR} and names a missing one.
		specs = append(specs, k+": ${"+v+"}")
	}
	h, err := bridge.ParseHeaders(specs, getenv)
	if err != nil {
		return nil, &cli.UsageError{Msg: "--header: " + err.Error(), Hint: "write --header 'Authorization: Bearer ${TOKEN}' and export TOKEN"}
	}
	d, err := bridge.New(bridge.Options{
		URL:       o.URL,
		Transport: o.Transport,
		Header:    h,
		Logger:    log,

		MaxMessage:    int(o.MaxMessage),
		HeaderTimeout: o.HeaderTimeout,
	})
	if err != nil {
		return nil, &cli.UsageError{Msg: "--url: " + err.Error()}
	}
	return d, nil
}
