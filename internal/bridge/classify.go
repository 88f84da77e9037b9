package bridge

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/jsoncheck"
	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
	"github.com/mcp-heal/mcp-heal/internal/text"
)

// CodeSessionNotFound is the JSON-RPC code the TypeScript SDK (and servers
// built on it) put in the body of a refused stale-session request.
const CodeSessionNotFound = -32001

// sessionWords match bodies that say the session is gone: server-everything
// ("Bad Request: No valid session ID provided"), the TypeScript SDK
// ("Session not found", "Bad Request: Server not initialized"), the Go SDK
// ("session not found"), the legacy SSE transports ("No transport found for
// sessionId", "Could not find session").
//
// Compiled on first use: the hook subcommands share this binary and pay
// for every package-level initialisation at each start.
var sessionWords = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(session[ _-]?(id)?\b.{0,40}\b(not found|unknown|invalid|expired|terminated|closed|missing|required|does not exist|is closing)|(no|invalid|unknown) (valid )?(session|transport)|not initiali[sz]ed|could not find session|no transport found)`)
})

// sessionLost reports whether an HTTP answer to a request that carried a
// session means the server no longer knows that session. The spec says
// 404 (2025-03-26 and later, Streamable HTTP, "Session Management"); many
// servers answer 400 with an explanatory body instead, and some a -32001
// "Session not found" error. 401/403 are authorization, never session
// loss, and a 404 carrying -32601 is an unknown method.
//
// stateless says the request was of the stateless era (2026-07-28), which
// has no sessions: there -32001 alone is no evidence either way (it was
// the draft's HeaderMismatch, now -32020, and the TypeScript SDK treats it
// so); only the status and the body's words count.
func sessionLost(status int, body []byte, stateless bool) bool {
	if status < 400 || status >= 500 || status == http.StatusUnauthorized || status == http.StatusForbidden {
		return false
	}
	b := bodyText(body)
	if jsoncheck.Valid(body) == nil {
		code := gjson.GetBytes(body, "error.code")
		if code.Exists() {
			switch code.Int() {
			case CodeSessionNotFound:
				if !stateless {
					return true
				}
			case -32601, -32602, -32600, -32700:
				// A method or params problem, not the session
				// (SEP-2575 maps -32601 to 404).
				if !sessionWords().MatchString(b) {
					return false
				}
			}
		}
	}
	if status == http.StatusNotFound {
		return true
	}
	return sessionWords().MatchString(b)
}

// httpStatus is how mcp-heal words an HTTP error answer: "HTTP 503", then
// what the body said, quoted and attributed by the one rule for a
// server's words (text.Said): the body is the server's, never mcp-heal's
// advice, wherever the line goes (a call's error, a state record, a hook's
// context).
func httpStatus(code int, body []byte) string {
	s := fmt.Sprintf("HTTP %d", code)
	if said := text.Said("the server", bodyText(body)); said != "" {
		s += ", " + said
	}
	return s
}

// bodySaid is "; the server said: «…»" for an error body, or "".
func bodySaid(body []byte) string {
	if said := text.Said("the server", bodyText(body)); said != "" {
		return "; " + said
	}
	return ""
}

// bodyText is the human part of an error body: a JSON-RPC error message,
// or the text itself, trimmed to one short line. It is the server's words:
// for matching (sessionLost) and logs; a message quotes it (httpStatus).
func bodyText(body []byte) string {
	s := ""
	if jsoncheck.Valid(body) == nil {
		if m := gjson.GetBytes(body, "error.message"); m.Type == gjson.String {
			s = m.Str
		} else if m := gjson.GetBytes(body, "message"); m.Type == gjson.String {
			s = m.Str
		}
	}
	if s == "" {
		s = stripTags(string(body))
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		n := 200
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "..."
	}
	return s
}

// unavailable reports a status that means the server (or the gateway in
// front of it) is down rather than refusing the request.
func unavailable(status int) bool {
	return status == http.StatusBadGateway || status == http.StatusServiceUnavailable || status == http.StatusGatewayTimeout
}

// describeErr turns a transport error into one line without the URL (which
// may hold secrets in its query); callers add the redacted target.
func describeErr(err error) string {
	// *url.Error prints the whole URL; keep only what it wraps.
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	switch {
	case ConnRefused(err):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset by peer"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed by the server"
	case errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timed out"
	}
	return err.Error()
}

// notSent reports whether err happened before any byte of the request
// could reach a server: a refused or failed dial.
func notSent(err error) bool {
	if ConnRefused(err) {
		return true
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns)
}

// permanent reports whether a failed request failed for a reason that
// retrying will not fix soon: TLS verification (an unknown authority, a
// name mismatch, an expired certificate), a host name that does not exist
// (NXDOMAIN, not a resolver that timed out), a redirect the bridge refused.
func permanent(err error) bool {
	var (
		cv  *tls.CertificateVerificationError
		ua  x509.UnknownAuthorityError
		hn  x509.HostnameError
		ci  x509.CertificateInvalidError
		dns *net.DNSError
		re  *redirectError
		rhe tls.RecordHeaderError
	)
	switch {
	case errors.As(err, &cv), errors.As(err, &ua), errors.As(err, &hn), errors.As(err, &ci), errors.As(err, &re):
		return true
	case errors.As(err, &rhe):
		// An http server on the https port.
		return true
	case errors.As(err, &dns):
		return dns.IsNotFound
	}
	return false
}

// stripTags keeps the text of an HTML error page (express, nginx) so
// that "Cannot POST /sse" is what the error says.
func stripTags(s string) string {
	if !strings.HasPrefix(strings.TrimSpace(s), "<") {
		return s
	}
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
			b.WriteByte(' ')
		case r == '>':
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isResponseTo reports whether msg is a JSON-RPC response whose id equals
// the raw id want (compared as JSON values, so "1" and 1 differ but
// escapes do not matter).
func isResponseTo(msg, want []byte) bool {
	if len(want) == 0 {
		return false
	}
	m, err := jsonrpc.PeekAnyText(msg) // validates it whole (depth-bounded): no other pass before it
	if err != nil || m.Kind != jsonrpc.KindResponse {
		return false
	}
	return idEqual(m.ID, want)
}

func idEqual(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	ra, rb := gjson.ParseBytes(a), gjson.ParseBytes(b)
	if ra.Type != rb.Type {
		return false
	}
	if ra.Type == gjson.String {
		return ra.Str == rb.Str
	}
	return ra.Raw == rb.Raw
}
