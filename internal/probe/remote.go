package probe

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/bridge"
	"github.com/mcp-heal/mcp-heal/internal/redact"
	"github.com/mcp-heal/mcp-heal/internal/text"
)

// probeHTTP opens a session with the bridge, as `mcp-heal shim --url`
// does (Streamable HTTP, or the legacy HTTP+SSE transport when the config
// says "sse"), and runs the handshake over it.
func probeHTTP(ctx context.Context, t Target, timeout time.Duration) Result {
	missing := map[string]bool{}
	raw := expand(t.URL, missing)
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fail(BadConfig, "the \"url\" is not an http(s) URL", "fix the server's \"url\" in the MCP config")
	}
	header := http.Header{}
	for k, v := range t.Headers {
		header.Set(k, expand(v, missing))
	}
	transport := bridge.TransportHTTP
	if t.Transport == "sse" {
		transport = bridge.TransportSSE
	}
	r, err := remoteHandshake(ctx, bridge.Options{URL: raw, Transport: transport, Header: header, ProbeTimeout: timeout, PostTimeout: timeout})
	if err == nil {
		return r
	}
	p := httpFailure(u, err, timeout)
	// Whatever the error quotes of the URL (Go's TLS and DNS errors name
	// the host) is hidden: no part of it is ever shown (redact.URL).
	var red redact.Values
	red.AddURL(raw)
	p.Problem.Summary = red.String(p.Problem.Summary)
	if len(missing) > 0 && (p.Problem.Kind == Unauthorized || p.Problem.Kind == Forbidden || p.Problem.Kind == BadConfig) {
		for n := range missing {
			p.Problem.Kind = MissingEnv
			p.Problem.Hint = fmt.Sprintf("export %s before starting Claude Code: the config uses ${%[1]s}, which is not set", n)
			break
		}
	}
	return p
}

func remoteHandshake(ctx context.Context, o bridge.Options) (Result, error) {
	d, err := bridge.New(o)
	if err != nil {
		return Result{}, err
	}
	c, err := d.Dial(ctx)
	if err != nil {
		return Result{}, err
	}
	defer c.Close() // ends the session (DELETE) and the streams
	r, err := handshake(ctx, &connTransport{c: c})
	if errors.Is(err, errExited) {
		// The session died under the probe: Exit says why.
		err = errors.New(c.Exit().Reason)
	}
	return r, err
}

// statusCoder is an error that may carry the HTTP status the server
// answered with: an initialize the bridge saw refused (statusError), or a
// bridge.DialError (0 when the server never answered).
type statusCoder interface{ StatusCode() int }

func httpFailure(u *url.URL, err error, timeout time.Duration) Result {
	var sc statusCoder
	var re *rpcError
	var dns *net.DNSError
	var certErr *tls.CertificateVerificationError
	switch {
	case errors.As(err, &sc) && sc.StatusCode() > 0:
		switch sc.StatusCode() {
		case http.StatusUnauthorized:
			return fail(Unauthorized, "the server answered 401 Unauthorized", "authenticate with /mcp, or add an Authorization header: it needs credentials (the header goes under \"headers\" in the MCP config)")
		case http.StatusForbidden:
			return fail(Forbidden, "the server answered 403 Forbidden", "check the token and its scopes: the credentials in the config are refused or lack access")
		case http.StatusNotFound:
			return fail(HTTPStatus, "no MCP endpoint at the URL's path (HTTP 404)", "check the URL's path: often /mcp; legacy SSE servers use /sse with \"type\": \"sse\"")
		case http.StatusMethodNotAllowed:
			return fail(HTTPStatus, "the URL does not accept POST (HTTP 405)", "set \"type\": \"sse\" in the MCP config if this is a legacy SSE server")
		}
		// The error names the server and its status ("remote MCP server
		// [URL hidden] answered HTTP 500 ..."); say it once, keeping what
		// follows (the server's own words, quoted).
		head := fmt.Sprintf("answered HTTP %d %s", sc.StatusCode(), http.StatusText(sc.StatusCode()))
		_, rest, _ := strings.Cut(err.Error(), head)
		return fail(HTTPStatus, "the server "+head+rest, "check the server's logs")
	case errors.As(err, &re):
		return fail(RPCError, "the server answered initialize with an error; "+text.Said("the server", re.Message), "check the server's configuration")
	case bridge.ConnRefused(err):
		return fail(Refused, "connection refused: nothing listens on the URL's host and port", "start the server, or fix the host and port in the URL")
	case errors.As(err, &dns):
		return fail(Network, "cannot resolve the URL's host", "check the host name in the URL and the network")
	case errors.As(err, &certErr):
		return fail(Network, "TLS certificate rejected: "+certErr.Err.Error(), "check the URL's host and the server's certificate")
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return fail(Timeout, fmt.Sprintf("no answer from the server within %s", timeout), "check that the server runs and answers: it may be hung or overloaded")
	}
	return fail(Network, strings.TrimPrefix(err.Error(), "mcp-heal: "), "check that the server is running and reachable")
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
