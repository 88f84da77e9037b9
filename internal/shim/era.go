package shim

import (
	"context"
	"fmt"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/text"
)

// The shim's rules for the stateless era (2026-07-28, SEP-2575): every
// request carries its protocol version in _meta, there is no session to
// replay and no ping.

// metaVersionPath is where a stateless-era request carries its protocol
// version.
var metaVersionPath = "params._meta." + gjson.Escape("io.modelcontextprotocol/protocolVersion")

// statelessRequest reports whether the request line belongs to the
// stateless era: it carries a per-request protocol version of 2026-07-28
// or later (the versions are dates, so they order as strings).
func statelessRequest(line []byte) bool {
	v := gjson.GetBytes(line, metaVersionPath)
	return v.Type == gjson.String && v.Str >= stateless
}

// answerPingLocally reports whether a ping that arrives while the server
// is down is answered by the shim itself, so that a handshake-era client
// does not conclude the connection is dead. The stateless era removed ping
// (a server must answer -32601, over HTTP 404), so there the ping waits for
// the server like any other request and gets the server's own answer: an
// empty result from the shim would be a lie about the server. Called with
// mu held.
func (s *Shim) answerPingLocally(line []byte) bool {
	return s.sess.era != EraStateless && !statelessRequest(line)
}

// rediscover brings a respawned server of the stateless era to the
// client's session. There is no handshake to replay, but the new server
// must still be able to serve the client: the client's own server/discover
// is sent to it (the answer never reaches the client) before the queued
// requests are. A server that cannot answer it is a failed start, so a
// call that is not safe to re-send is never sent to a server that dies at
// once; a server that no longer supports the client's protocol version is
// used anyway, and the state record says why calls may fail.
func (s *Shim) rediscover(ctx context.Context, r *run, ss session, dead <-chan struct{}) error {
	if ss.discoverLine == nil {
		return nil
	}
	resp, err := s.reinject(ctx, r, "server/discover", ss.discoverLine, dead)
	if err != nil {
		return err
	}
	supported := false
	gjson.GetBytes(resp, "result.supportedVersions").ForEach(func(_, v gjson.Result) bool {
		supported = v.Str == ss.version
		return !supported
	})
	if !supported {
		msg := fmt.Sprintf("restarted server does not list protocol version %q in server/discover (it lists %s)", ss.version, text.Quote(gjson.GetBytes(resp, "result.supportedVersions").Raw))
		s.log.Warn(msg)
		s.mu.Lock()
		s.lastErr = msg
		s.mu.Unlock()
	}
	s.event("rediscovered", "version", ss.version, "supported", supported)
	return nil
}

// A multi round-trip call of the stateless era (SEP-2322) is several
// requests: the server answers the first with an input-required result
// (resultType "input_required": an elicitation, a sampling, a roots list it
// needs), which the shim forwards as the success it is, and the client sends
// the request again with inputResponses and the server's requestState. Each
// round is its own request for the retry policy: a round the server died
// under is re-sent as is, requestState included (a stateless server keeps
// the call's progress there, so a new server can continue it) when the
// tool's annotations allow, and otherwise gets the one error that says to
// start the call again.
//
// A round the client sends after a restart, with the dead process's
// requestState, goes to the new process as is, never refused by the
// shim: the specification makes each round self-contained (the server
// processing the retry needs nothing beyond what the retry carries), and
// the Go SDK v1.8.0 hands requestState to the tool's handler untouched
// (mcp/mrtr.go keeps no table of states a new process would lack), so a
// server that encodes its state there carries on with the call; one that
// cannot use it must reject it, and the client gets that refusal quoted
// in one error of mcp-heal's that says the server was restarted and to
// start again from the first round (tasks.go, health.StateGoneError).

// continuation reports whether a request continues a multi round-trip call:
// it carries the inputResponses or requestState of an input-required
// result.
func continuation(line []byte) bool {
	p := gjson.GetBytes(line, "params")
	return p.Get("inputResponses").Exists() || p.Get("requestState").Exists()
}

// continuationAdvice is the advice in the error of a continuation that
// was not re-sent: the client must start the call again (without the
// server's requestState, which the new server may not accept).
func continuationAdvice(e *entry) string {
	if !continuation(e.line) {
		return ""
	}
	return health.ContinuationAdvice(e.method)
}
