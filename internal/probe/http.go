package probe

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/tidwall/gjson"
)

// httpTransport speaks Streamable HTTP (2025-03-26+): every message is a
// POST; a response comes back as JSON or as an SSE stream.
type httpTransport struct {
	client  *http.Client
	url     string
	headers map[string]string
	session string // Mcp-Session-Id, once assigned
	version string // MCP-Protocol-Version, once negotiated
}

func (h *httpTransport) post(ctx context.Context, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, v := range h.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if h.session != "" {
		req.Header.Set("Mcp-Session-Id", h.session)
	}
	if h.version != "" {
		req.Header.Set("MCP-Protocol-Version", h.version)
	}
	return h.client.Do(req)
}

func (h *httpTransport) notify(ctx context.Context, method string, params any) error {
	resp, err := h.post(ctx, notification(method, params))
	if err != nil {
		return err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		return &statusError{code: resp.StatusCode}
	}
	return nil
}

func (h *httpTransport) call(ctx context.Context, id int, method string, params any) (json.RawMessage, error) {
	resp, err := h.post(ctx, request(id, method, params))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, &statusError{code: resp.StatusCode, body: strings.TrimSpace(string(b))}
	}
	if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
		h.session = s
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		events := readSSE(resp.Body)
		for ev := range events {
			if res, err, ok := response([]byte(ev.data), id); ok {
				go func() {
					for range events {
					}
				}()
				return res, err
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("the SSE stream ended without an answer to %s", method)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	b = bytes.TrimSpace(b)
	if !gjson.ValidBytes(b) {
		return nil, fmt.Errorf("the answer to %s is not JSON: %q", method, snippet(string(b)))
	}
	if len(b) > 0 && b[0] == '[' {
		for _, m := range gjson.ParseBytes(b).Array() {
			if res, err, ok := response([]byte(m.Raw), id); ok {
				return res, err
			}
		}
	}
	if res, err, ok := response(b, id); ok {
		return res, err
	}
	return nil, fmt.Errorf("no answer to %s in %q", method, snippet(string(b)))
}

func (h *httpTransport) close() {
	if h.session == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, h.url, nil)
	if err != nil {
		return
	}
	for k, v := range h.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Mcp-Session-Id", h.session)
	if resp, err := h.client.Do(req); err == nil {
		resp.Body.Close()
	}
}

// sseTransport speaks the legacy HTTP+SSE transport (2024-11-05): a GET
// stream whose first "endpoint" event names where to POST messages;
// answers arrive as "message" events on the stream.
type sseTransport struct {
	client  *http.Client
	post    string
	headers map[string]string
	events  <-chan sseEvent
}

func (s *sseTransport) send(ctx context.Context, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.post, bytes.NewReader(body))
	if err != nil {
		return err
	}
	for k, v := range s.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		return &statusError{code: resp.StatusCode}
	}
	return nil
}

func (s *sseTransport) notify(ctx context.Context, method string, params any) error {
	return s.send(ctx, notification(method, params))
}

func (s *sseTransport) call(ctx context.Context, id int, method string, params any) (json.RawMessage, error) {
	if err := s.send(ctx, request(id, method, params)); err != nil {
		return nil, err
	}
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case ev, ok := <-s.events:
			if !ok {
				return nil, fmt.Errorf("the SSE stream closed before the answer to %s", method)
			}
			if res, err, ok := response([]byte(ev.data), id); ok {
				return res, err
			}
			if reply := answerServerRequest([]byte(ev.data)); reply != nil && gjson.Get(ev.data, "method").Exists() {
				_ = s.send(ctx, reply)
			}
		}
	}
}

type sseEvent struct{ name, data string }

// readSSE parses an event stream until it ends; the channel closes then.
// The goroutine ends when body is closed or ends.
func readSSE(body io.Reader) <-chan sseEvent {
	ch := make(chan sseEvent, 4)
	go func() {
		defer close(ch)
		br := bufio.NewReaderSize(body, 64<<10)
		var ev sseEvent
		var data []string
		for {
			line, err := br.ReadString('\n')
			line = strings.TrimRight(line, "\r\n")
			if line == "" && (len(data) > 0 || ev.name != "") {
				ev.data = strings.Join(data, "\n")
				ch <- ev
				ev, data = sseEvent{}, nil
			}
			if k, v, ok := strings.Cut(line, ":"); ok && k != "" {
				v = strings.TrimPrefix(v, " ")
				switch k {
				case "event":
					ev.name = v
				case "data":
					data = append(data, v)
				}
			}
			if err != nil {
				return
			}
		}
	}()
	return ch
}

type statusError struct {
	code int
	body string
}

func (e *statusError) Error() string {
	if e.body != "" {
		return fmt.Sprintf("HTTP %d: %s", e.code, snippet(e.body))
	}
	return fmt.Sprintf("HTTP %d", e.code)
}

func probeHTTP(ctx context.Context, t Target, timeout time.Duration) Result {
	missing := map[string]bool{}
	raw := expand(t.URL, missing)
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fail(BadConfig, fmt.Sprintf("%q is not an http(s) URL", t.URL), "fix the server's \"url\" in the MCP config")
	}
	headers := map[string]string{}
	for k, v := range t.Headers {
		headers[k] = expand(v, missing)
	}
	client := &http.Client{Timeout: timeout}
	var r Result
	if t.Transport == "sse" {
		r, err = probeSSE(ctx, client, raw, headers)
	} else {
		ht := &httpTransport{client: client, url: raw, headers: headers}
		r, err = handshake(ctx, ht)
		ht.close()
	}
	if err == nil {
		return r
	}
	p := httpFailure(t, u, err, timeout)
	if len(missing) > 0 && (p.Problem.Kind == Unauthorized || p.Problem.Kind == Forbidden || p.Problem.Kind == BadConfig) {
		for n := range missing {
			p.Problem.Kind = MissingEnv
			p.Problem.Hint = fmt.Sprintf("the config uses ${%s}, which is not set: export it before starting Claude Code", n)
			break
		}
	}
	return p
}

func probeSSE(ctx context.Context, client *http.Client, raw string, headers map[string]string) (Result, error) {
	// The stream lives as long as the probe: no client timeout on it.
	streamClient := &http.Client{Transport: client.Transport}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return Result{}, err
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := streamClient.Do(req)
	if err != nil {
		return Result{}, err
	}
	defer resp.Body.Close() // ends readSSE's goroutine
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return Result{}, &statusError{code: resp.StatusCode, body: strings.TrimSpace(string(b))}
	}
	events := readSSE(resp.Body)
	var endpoint string
	for endpoint == "" {
		select {
		case <-ctx.Done():
			return Result{}, ctx.Err()
		case ev, ok := <-events:
			if !ok {
				return Result{}, errors.New("the SSE stream closed before its endpoint event")
			}
			if ev.name == "endpoint" {
				endpoint = strings.TrimSpace(ev.data)
			}
		}
	}
	base, _ := url.Parse(raw)
	ep, err := base.Parse(endpoint)
	if err != nil {
		return Result{}, fmt.Errorf("bad endpoint event %q: %w", endpoint, err)
	}
	return handshake(ctx, &sseTransport{client: client, post: ep.String(), headers: headers, events: events})
}

func httpFailure(t Target, u *url.URL, err error, timeout time.Duration) Result {
	host := u.Host
	var se *statusError
	var re *rpcError
	var dns *net.DNSError
	var certErr *tls.CertificateVerificationError
	switch {
	case errors.As(err, &se):
		switch se.code {
		case http.StatusUnauthorized:
			return fail(Unauthorized, "the server answered 401 Unauthorized", "it needs credentials: set an Authorization header under \"headers\" in the MCP config, or authenticate in Claude Code with /mcp")
		case http.StatusForbidden:
			return fail(Forbidden, "the server answered 403 Forbidden", "the credentials in the config are refused or lack access: check the token and its scopes")
		case http.StatusNotFound:
			return fail(HTTPStatus, "no MCP endpoint at "+u.Path+" (HTTP 404)", "check the URL's path (often /mcp; legacy SSE servers use /sse with \"type\": \"sse\")")
		case http.StatusMethodNotAllowed:
			return fail(HTTPStatus, "the URL does not accept POST (HTTP 405)", "if this is a legacy SSE server, set \"type\": \"sse\" in the MCP config")
		}
		return fail(HTTPStatus, "the server answered "+se.Error(), "check the server's logs")
	case errors.As(err, &re):
		return fail(RPCError, "the server answered initialize with an error: "+re.Message, "check the server's configuration")
	case errors.Is(err, syscall.ECONNREFUSED):
		return fail(Refused, fmt.Sprintf("connection refused: nothing listens on %s", host), "start the server, or fix the host and port in the URL")
	case errors.As(err, &dns):
		return fail(Network, fmt.Sprintf("cannot resolve %s", dns.Name), "check the host name in the URL and the network")
	case errors.As(err, &certErr):
		return fail(Network, "TLS certificate rejected: "+certErr.Err.Error(), "check the URL's host and the server's certificate")
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return fail(Timeout, fmt.Sprintf("no answer from %s within %s", host, timeout), "the server may be hung or overloaded")
	}
	return fail(Network, err.Error(), "check that the server is running and reachable")
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
