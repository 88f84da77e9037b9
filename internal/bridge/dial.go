package bridge

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/upstream"
)

// Dialer opens sessions with one remote MCP server. It implements
// upstream.Dialer; Dial may be called again after a session dies.
type Dialer struct {
	o      Options
	u      *url.URL
	red    *redactor
	target string

	mu       sync.Mutex
	detected string // the transport auto detection settled on

	params paramHeaders
	lost   lostIDs // reissue.go
}

var _ upstream.Dialer = (*Dialer)(nil)

// New checks o and returns a Dialer. It opens no connection.
func New(o Options) (*Dialer, error) {
	o.defaults()
	switch o.Transport {
	case TransportAuto, TransportHTTP, TransportSSE:
	default:
		return nil, fmt.Errorf("unknown transport %q (want auto, http or sse)", o.Transport)
	}
	u, err := ParseURL(o.URL)
	if err != nil {
		return nil, err
	}
	if o.Header == nil {
		o.Header = http.Header{}
	}
	return &Dialer{o: o, u: u, red: newRedactor(u, o.Header), target: RedactURL(u)}, nil
}

// Target is the URL without credentials or query values.
func (d *Dialer) Target() string { return d.target }

// Mode is state.ModeRemote.
func (d *Dialer) Mode() string { return state.ModeRemote }

// Transport is the transport in use: the configured one, or what auto
// detection found ("" before the first successful Dial in auto mode).
func (d *Dialer) Transport() string {
	if d.o.Transport != TransportAuto {
		return d.o.Transport
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.detected
}

// Dial opens a new session. It does not send initialize (the shim replays
// the client's own), but it does reach the server first: a GET on the URL
// (the legacy transport's stream, or a Streamable HTTP endpoint's optional
// stream, which a server answers at once with 400/405 when there is no
// session). So a server that is down fails Dial quickly with a descriptive
// error (connection refused, reset, 502/503/504), and the shim backs off.
//
// In auto mode the same GET tells the transports apart: a legacy server
// answers with an SSE stream whose first event is "endpoint". (The spec's
// fallback POSTs initialize first and GETs on a 4xx; Dial has no
// initialize to POST, and the answer to the GET is the same evidence.)
// What it finds is kept for later dials.
func (d *Dialer) Dial(ctx context.Context) (upstream.Conn, error) {
	mode := d.Transport()
	if mode == "" {
		mode = TransportAuto
	}
	// The probe is bounded by ctx and ProbeTimeout; a legacy stream it
	// opens lives on under pctx, which becomes that connection's.
	pctx, cancel := context.WithCancel(context.Background())
	ok := false
	defer func() {
		if !ok {
			cancel()
		}
	}()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	// The wait for the answer's headers has its own bound: a server that
	// accepts connections and never answers is reported as such, at once,
	// rather than retried until the shim's deadline (which equals Claude
	// Code's own connect timeout, so the user would see only that).
	var connected, headerWait atomic.Bool
	timer := time.AfterFunc(min(d.o.HeaderTimeout, d.o.ProbeTimeout), func() {
		headerWait.Store(connected.Load())
		cancel()
	})
	defer timer.Stop()
	tctx := httptrace.WithClientTrace(pctx, &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { connected.Store(true) }})

	req, err := http.NewRequestWithContext(tctx, http.MethodGet, d.u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", d.target, redactURLError(err))
	}
	req.Header = d.o.Header.Clone()
	req.Header.Set("Accept", "text/event-stream")
	resp, err := d.o.Client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if headerWait.Load() {
			return nil, d.dialError(true, "%s accepted the connection but sent no response headers within %s", d.target, min(d.o.HeaderTimeout, d.o.ProbeTimeout))
		}
		return nil, d.dialError(permanent(err), "cannot reach %s: %s", d.target, describeErr(err)).because(err, 0)
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	sse := resp.StatusCode == http.StatusOK && ct == "text/event-stream"
	if !sse {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			// The headers are the user's configuration: the same ones
			// will be refused again.
			return nil, d.dialError(true, "%s refused the request: %s (check the credentials given with --header or --header-env)", d.target, httpStatus(resp.StatusCode, body)).because(nil, resp.StatusCode)
		}
		if unavailable(resp.StatusCode) {
			return nil, d.dialError(false, "%s is unavailable: %s", d.target, httpStatus(resp.StatusCode, body)).because(nil, resp.StatusCode)
		}
		if mode == TransportSSE {
			return nil, d.dialError(false, "%s is not a legacy SSE endpoint: GET answered %s", d.target, httpStatus(resp.StatusCode, body)).because(nil, resp.StatusCode)
		}
		return d.streamable(), nil
	}
	if mode == TransportHTTP {
		resp.Body.Close()
		return d.streamable(), nil
	}
	// An SSE stream: a legacy server's session, if its first event is
	// "endpoint", which legacy servers send at once. A Streamable HTTP
	// server that allows a sessionless GET stream sends nothing: do not
	// wait long for it (only the first dial does; the finding is kept).
	timer.Reset(min(d.o.ProbeTimeout, 3*time.Second))
	r := newSSEReader(resp.Body, d.o.MaxMessage)
	var first *event
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		if ev.Name == "" && len(ev.Data) == 0 {
			continue // a priming event or keep-alive
		}
		first = &ev
		break
	}
	if first != nil && first.Name == "endpoint" {
		timer.Stop()
		c, err := d.openLegacy(pctx, cancel, resp, first, r)
		if err != nil {
			resp.Body.Close()
			return nil, err
		}
		ok = true
		d.setDetected(TransportSSE)
		return c, nil
	}
	resp.Body.Close()
	if mode == TransportSSE {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("legacy SSE server %s sent no endpoint event", d.target)
	}
	return d.streamable(), nil
}

// DialError is a Dial that failed. Its text names the target (without
// secrets) and the cause.
type DialError struct {
	msg       string
	permanent bool
	cause     error // the transport error, when there was one
	status    int   // the HTTP status the server answered, when it did
}

func (e *DialError) Error() string { return e.msg }

// Permanent reports a cause that retrying will not fix soon: a
// certificate that does not verify, a host name that does not exist,
// refused credentials, a redirect the bridge will not follow, a server
// that accepts connections and never answers. The shim answers calls at
// once with it instead of holding them until its deadline (and keeps
// trying in the background).
func (e *DialError) Permanent() bool { return e.permanent }

// Unwrap is the transport error behind the failure (connection refused,
// a DNS or TLS error), for callers that explain it, such as the probe.
// Error never shows it: its text may hold the URL's secrets.
func (e *DialError) Unwrap() error { return e.cause }

// StatusCode is the HTTP status the server refused Dial with, or 0.
func (e *DialError) StatusCode() int { return e.status }

func (d *Dialer) dialError(permanent bool, format string, a ...any) *DialError {
	return &DialError{msg: d.red.String(fmt.Sprintf(format, a...)), permanent: permanent}
}

// because records what e came from.
func (e *DialError) because(cause error, status int) *DialError {
	e.cause, e.status = cause, status
	return e
}

// streamable returns a Streamable HTTP session (the probe's context is
// cancelled on return: the connection has its own).
func (d *Dialer) streamable() *httpConn {
	d.setDetected(TransportHTTP)
	return newHTTPConn(d)
}

func (d *Dialer) setDetected(t string) {
	if d.o.Transport != TransportAuto {
		return
	}
	d.mu.Lock()
	if d.detected != t {
		d.o.Logger.Info("remote transport detected", "transport", t)
	}
	d.detected = t
	d.mu.Unlock()
}
