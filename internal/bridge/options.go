package bridge

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
	"github.com/mcp-heal/mcp-heal/internal/redact"
)

// Transports the bridge speaks.
const (
	TransportAuto = "auto" // Streamable HTTP, or legacy HTTP+SSE if the server answers like one
	TransportHTTP = "http" // Streamable HTTP (2025-03-26 and later, and the 2026-07-28 stateless era)
	TransportSSE  = "sse"  // legacy HTTP+SSE (2024-11-05)
)

// Options configure a Dialer.
type Options struct {
	// URL is the server's MCP endpoint (Streamable HTTP) or SSE URL
	// (legacy). Only http and https are accepted.
	URL string
	// Transport is TransportAuto (default), TransportHTTP or TransportSSE.
	Transport string
	// Header is added to every request. Its values are secrets: they never
	// appear in Target, logs or errors.
	Header http.Header
	// Logger receives lifecycle lines; nil discards.
	Logger *slog.Logger
	// Client sends every request; nil uses a client of the bridge's own.
	Client *http.Client
	// ProbeTimeout bounds Dial (the reachability probe and, for the legacy
	// transport, the wait for the endpoint event). Default 10s.
	ProbeTimeout time.Duration
	// PostTimeout bounds a legacy-transport POST and a Streamable HTTP POST
	// of a notification or response (requests are unbounded: a tool may run
	// for minutes). server-everything never answers a legacy POST for a
	// session it does not know, so this is what notices. Default 10s.
	PostTimeout time.Duration
	// Grace is how long a dying connection waits for POSTs still in flight
	// (to learn which of them the server refused) before cancelling them.
	// Default 1s.
	Grace time.Duration
	// NoServerStream skips the optional GET stream (for servers whose GET
	// misbehaves, and for tests of what a POST alone notices).
	NoServerStream bool
	// ReconnectDelay is the wait before reopening a dropped SSE stream when
	// the server sent no retry: field. Default 500ms.
	ReconnectDelay time.Duration
	// MaxMessage is the ceiling on one message from the server (a JSON
	// body or the data of one SSE event); a longer one is discarded as it
	// streams and the request it answered gets an error. Default
	// jsonrpc.DefaultMaxMessage.
	MaxMessage int
	// HeaderTimeout bounds the wait for the response headers of the
	// connection probe (Dial's GET), apart from ProbeTimeout: a server
	// that accepts connections but never answers is reported as such.
	// Default 10s.
	HeaderTimeout time.Duration
}

func (o *Options) defaults() {
	if o.Transport == "" {
		o.Transport = TransportAuto
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.ProbeTimeout <= 0 {
		o.ProbeTimeout = 10 * time.Second
	}
	if o.PostTimeout <= 0 {
		o.PostTimeout = 10 * time.Second
	}
	if o.Grace <= 0 {
		o.Grace = time.Second
	}
	if o.ReconnectDelay <= 0 {
		o.ReconnectDelay = 500 * time.Millisecond
	}
	if o.MaxMessage <= 0 {
		o.MaxMessage = jsonrpc.DefaultMaxMessage
	}
	if o.HeaderTimeout <= 0 {
		o.HeaderTimeout = 10 * time.Second
	}
	if o.Client == nil {
		o.Client = newClient()
	}
}

func newClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = dialChecked
	// HTTP/1.1 only: what a failed write on a pooled connection means
	// (see dialChecked) is well defined there, and one POST per
	// connection is what MCP servers expect anyway.
	t.ForceAttemptHTTP2 = false
	t.Protocols = new(http.Protocols)
	t.Protocols.SetHTTP1(true)
	// Concurrent tool calls each hold a POST open.
	t.MaxIdleConnsPerHost = 32
	t.ResponseHeaderTimeout = 0
	return &http.Client{
		Transport:     t,
		CheckRedirect: checkRedirect,
	}
}

// checkRedirect follows a redirect only within the origin of the first
// request (RFC 6454: scheme, host and port). The standard client copies
// every custom header to any target and Authorization to any port of the
// same host, and follows https to http: the user's credentials would reach
// a server they did not name, or cross the network in clear text. MCP
// endpoints do not redirect in practice; one that moved is named anew.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 5 {
		return errors.New("stopped after 5 redirects")
	}
	from, to := via[0].URL, req.URL
	if from.Scheme == "https" && to.Scheme != "https" {
		return &redirectError{fmt.Sprintf("the server redirected from https to http (%s); mcp-heal never downgrades https, so it did not follow it", origin(to))}
	}
	if origin(from) != origin(to) {
		return &redirectError{fmt.Sprintf("the server redirected to another origin (%s); mcp-heal does not send its headers to another origin, so it did not follow it (give --url the new address if you trust it)", origin(to))}
	}
	return nil
}

// redirectError is a redirect the bridge refused.
type redirectError struct{ msg string }

func (e *redirectError) Error() string { return e.msg }

// origin is u's scheme://host:port, with the default port made explicit.
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return u.Scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// ParseURL checks that raw is an absolute http or https URL.
func ParseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("invalid URL: %v", redactURLError(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("URL scheme must be http or https, not %q", u.Scheme)
	}
	if u.Host == "" {
		return nil, errors.New("URL has no host")
	}
	return u, nil
}

func redactURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// RedactURL is what logs, errors and the state record say for u: no part
// of it (redact.URL, the one rule).
func RedactURL(u *url.URL) string { return redact.URL(u.String()) }

var varRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`) })

// reserved headers are the transport's own; a flag may not set them.
var reserved = []string{"Accept", "Content-Type", "Content-Length", "Mcp-Session-Id", "Mcp-Protocol-Version", "Last-Event-Id", "Mcp-Method", "Mcp-Name", "Host", "Connection", "Transfer-Encoding"}

// ParseHeaders turns "Name: value" flags into a header, expanding ${VAR}
// from getenv (nil means os.Getenv). An unset or empty variable is an
// error that names the variable, never a value.
func ParseHeaders(specs []string, getenv func(string) string) (http.Header, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	h := http.Header{}
	for i, s := range specs {
		name, value, ok := strings.Cut(s, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			// Not echoed: a malformed flag may be a bare secret.
			return nil, fmt.Errorf("header #%d: want 'Name: value'", i+1)
		}
		if !validHeaderName(name) {
			return nil, fmt.Errorf("header %q: invalid name", name)
		}
		if slices.ContainsFunc(reserved, func(r string) bool { return strings.EqualFold(r, name) }) {
			return nil, fmt.Errorf("header %q is set by the transport and cannot be overridden", name)
		}
		var missing []string
		value = varRef().ReplaceAllStringFunc(strings.TrimSpace(value), func(ref string) string {
			v := getenv(ref[2 : len(ref)-1])
			if v == "" {
				missing = append(missing, ref[2:len(ref)-1])
			}
			return v
		})
		if len(missing) > 0 {
			return nil, fmt.Errorf("header %q uses ${%s}, which is not set in the environment", name, missing[0])
		}
		if strings.ContainsAny(value, "\r\n\x00") {
			return nil, fmt.Errorf("header %q: value contains a line break", name)
		}
		h.Add(name, value)
	}
	return h, nil
}

func validHeaderName(s string) bool {
	for _, r := range s {
		if !isTChar(r) {
			return false
		}
	}
	return s != ""
}

func isTChar(c rune) bool {
	switch {
	case c >= '0' && c <= '9', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		return true
	}
	return strings.ContainsRune("!#$%&'*+-.^_`|~", c)
}

// redactor removes secrets (header values, URL credentials and query
// values) from text the bridge writes to logs, errors and the state
// record, whatever the server echoed back, then applies the one rule.
type redactor = redact.Values

func newRedactor(u *url.URL, h http.Header) *redactor {
	r := &redactor{}
	for _, vs := range h {
		for _, v := range vs {
			r.Add(v)
			// "Bearer abc": the token alone may be echoed too.
			if _, tok, ok := strings.Cut(v, " "); ok {
				r.Add(strings.TrimSpace(tok))
			}
		}
	}
	// Every part of the URL (its host, path, userinfo, query, fragment)
	// may hold the key; Go's errors and servers echo them.
	r.AddURL(u.String())
	for _, vs := range u.Query() {
		r.Add(vs...)
	}
	return r
}
