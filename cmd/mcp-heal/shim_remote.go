package main

import (
	"errors"
	"log/slog"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcp-heal/mcp-heal/internal/upstream"
)

// remoteOptions are the shim's flags for bridging a remote server (--url).
// Owned by the bridge; shim.go registers them with addRemoteFlags and, when
// URL is set, builds its upstream with newRemoteDialer.
type remoteOptions struct {
	URL       string
	Transport string        // auto, http or sse
	Headers   []string      // "K: V"; values may use ${VAR} from the environment
	Deadline  time.Duration // how long calls wait while the server is down
}

func addRemoteFlags(fs *pflag.FlagSet) *remoteOptions {
	o := &remoteOptions{}
	fs.StringVar(&o.URL, "url", "", "bridge the remote MCP server at `URL` (http or https) instead of running a command")
	fs.StringVar(&o.Transport, "transport", "auto", "remote transport: auto, http (Streamable HTTP) or sse (legacy HTTP+SSE)")
	fs.StringArrayVar(&o.Headers, "header", nil, "add an HTTP header `'K: V'` to every request (repeatable; ${VAR} expands from the environment)")
	fs.DurationVar(&o.Deadline, "deadline", 30*time.Second, "how long calls wait for a remote server that is down before failing")
	return o
}

// newRemoteDialer builds the upstream for --url. Placeholder until the
// bridge lands.
func newRemoteDialer(o *remoteOptions, env *Env, log *slog.Logger) (upstream.Dialer, error) {
	return nil, errors.New("remote servers (--url) are not supported yet")
}
