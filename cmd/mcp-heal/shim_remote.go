package main

import (
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcp-heal/mcp-heal/internal/bridge"
	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
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
	// MaxMessage is the ceiling on one message from the server (stdio or
	// remote); HeaderTimeout bounds the wait for a remote's answer to the
	// connection probe. See docs/limits.md.
	MaxMessage    byteSize
	HeaderTimeout time.Duration
}

func addRemoteFlags(fs *pflag.FlagSet, env *Env) *remoteOptions {
	o := &remoteOptions{}
	fs.StringVar(&o.URL, "url", "", "bridge the remote MCP server at `URL` (http or https) instead of running a command")
	fs.Var(&urlEnvFlag{o: o, getenv: env.Getenv}, "url-env", "like --url, with the URL in environment variable `VAR` (what wrap writes when the URL holds a token, so it stays out of argv)")
	fs.StringVar(&o.Transport, "transport", "auto", "remote transport: auto, http (Streamable HTTP) or sse (legacy HTTP+SSE)")
	fs.StringArrayVar(&o.Headers, "header", nil, "add an HTTP header `'K: V'` to every request (repeatable; ${VAR} expands from the environment)")
	fs.StringArrayVar(&o.HeaderEnv, "header-env", nil, "add an HTTP header `K=VAR` whose value is environment variable VAR (repeatable; what wrap writes, so Claude Code does not try to expand it)")
	fs.DurationVar(&o.Deadline, "deadline", 30*time.Second, "how long calls wait for a remote server that is down before failing")
	o.MaxMessage = jsonrpc.DefaultMaxMessage
	fs.Var(&o.MaxMessage, "max-message", "drop a message from the server longer than `SIZE` (e.g. 64MiB; the call gets an error)")
	fs.DurationVar(&o.HeaderTimeout, "header-timeout", 10*time.Second, "give up on a remote server that accepts the connection but sends no response headers within this long")
	return o
}

// newRemoteDialer builds the upstream for --url. Errors are usage
// mistakes (bad URL, transport or header); none carries a header value.
func newRemoteDialer(o *remoteOptions, env *Env, log *slog.Logger) (upstream.Dialer, error) {
	if o.Deadline <= 0 {
		return nil, &usageError{msg: fmt.Sprintf("--deadline must be positive, not %s", o.Deadline)}
	}
	if o.HeaderTimeout <= 0 {
		return nil, &usageError{msg: fmt.Sprintf("--header-timeout must be positive, not %s", o.HeaderTimeout)}
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

		MaxMessage:    int(o.MaxMessage),
		HeaderTimeout: o.HeaderTimeout,
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

// byteSize is a flag value in bytes, written as a number with an optional
// KiB/MiB/GiB (or K/M/G, KB/MB/GB: all powers of 1024) suffix.
type byteSize int

func (b *byteSize) String() string {
	switch n := int(*b); {
	case n > 0 && n%(1<<30) == 0:
		return strconv.Itoa(n>>30) + "GiB"
	case n > 0 && n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + "MiB"
	case n > 0 && n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + "KiB"
	default:
		return strconv.Itoa(n)
	}
}

func (b *byteSize) Type() string { return "size" }

func (b *byteSize) Set(s string) error {
	t, shift := strings.TrimSpace(s), 0
	for _, u := range []struct {
		suffix string
		shift  int
	}{{"GIB", 30}, {"MIB", 20}, {"KIB", 10}, {"GB", 30}, {"MB", 20}, {"KB", 10}, {"G", 30}, {"M", 20}, {"K", 10}, {"B", 0}} {
		if strings.HasSuffix(strings.ToUpper(t), u.suffix) {
			t, shift = t[:len(t)-len(u.suffix)], u.shift
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
	if err != nil || n <= 0 || n > (1<<32)>>shift || n<<shift > math.MaxInt {
		return fmt.Errorf("want a size from 1 byte to 4GiB such as 65536, 512KiB or 64MiB, not %q", s)
	}
	*b = byteSize(n << shift)
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
