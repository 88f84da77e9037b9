package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/ccpolicy"
	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
	"github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/redact"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/text"
)

// Events mcp-heal handles.
const (
	PreToolUse         = "PreToolUse"
	PostToolUseFailure = "PostToolUseFailure"
	SessionStart       = "SessionStart"
)

// Handler answers hook events. Its fields are the outside world, so tests
// can replace them; New fills in the real ones.
type Handler struct {
	Getenv func(string) string
	Now    func() time.Time
	Log    *slog.Logger
	// Discover lists the configured servers (claudecfg.Discover).
	Discover func(claudecfg.Options) ([]claudecfg.Server, error)
	// Signal sends sig to one process.
	Signal func(pid int, sig syscall.Signal) error
	// Procs lists running processes (to find a hung server by its parent).
	Procs func() ([]Proc, error)
}

// New returns a Handler wired to the real system.
func New(getenv func(string) string, log *slog.Logger) *Handler {
	return &Handler{
		Getenv:   getenv,
		Now:      time.Now,
		Log:      log,
		Discover: claudecfg.Discover,
		Signal:   state.NudgeShim,
		Procs:    listProcs,
	}
}

// output is the JSON a hook prints.
type output struct {
	SystemMessage      string    `json:"systemMessage,omitempty"`
	HookSpecificOutput *specific `json:"hookSpecificOutput,omitempty"`
}

type specific struct {
	HookEventName            string `json:"hookEventName"`
	AdditionalContext        string `json:"additionalContext,omitempty"`
	PermissionDecision       string `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
}

// encode is the one way a reply leaves a hook, so the text, which quotes
// servers' answers and stderr, goes through the one redaction rule and the
// one quoting rule here: it lands in the model's context, and
// systemMessage on the user's terminal.
func encode(o output) []byte {
	o.SystemMessage = quoted(o.SystemMessage)
	if s := o.HookSpecificOutput; s != nil {
		c := *s
		c.AdditionalContext, c.PermissionDecisionReason = quoted(c.AdditionalContext), quoted(c.PermissionDecisionReason)
		o.HookSpecificOutput = &c
	}
	b, _ := json.Marshal(o)
	return append(b, '\n')
}

// quoted is s redacted, each of its lines quoted by text.Safe: the line
// breaks are mcp-heal's own, what is inside a line may be a server's.
func quoted(s string) string {
	return strings.Join(text.SafeAll(strings.Split(redact.String(s), "\n")), "\n")
}

func contextReply(event, text string) []byte {
	return encode(output{HookSpecificOutput: &specific{HookEventName: event, AdditionalContext: text}})
}

// Handle answers one hook event: the reply to print, or nil for none. It
// never fails: whatever goes wrong is logged and the hook stays silent, so
// a broken mcp-heal never blocks a tool call.
func (h *Handler) Handle(ctx context.Context, event string, payload []byte) (reply []byte) {
	defer func() {
		if p := recover(); p != nil {
			h.Log.Error("hook panicked", "event", event, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			reply = nil
		}
	}()
	in, err := Parse(payload)
	if err != nil {
		h.Log.Warn("ignoring hook input", "event", event, "err", err, "bytes", len(payload))
		return nil
	}
	if in.Event != "" && in.Event != event {
		h.Log.Warn("ignoring hook input for another event", "event", event, "payload_event", in.Event)
		return nil
	}
	switch event {
	case PreToolUse:
		return h.withCancelNews(in, h.preToolUse(in))
	case PostToolUseFailure:
		return h.postToolUseFailure(ctx, in)
	case SessionStart:
		return h.sessionStart(in)
	}
	h.Log.Warn("ignoring unknown hook event", "event", event)
	return nil
}

// claudePID is the Claude Code process (hooks get CLAUDE_PID); 0 if unknown.
func (h *Handler) claudePID() int {
	pid, _ := strconv.Atoi(h.Getenv("CLAUDE_PID"))
	return pid
}

// headless reports whether this session is `claude -p` or the Agent SDK
// (health.Headless), where advice must not ask for `/mcp reconnect`.
func (h *Handler) headless() bool { return health.Headless(h.Getenv) }

// options says where Claude Code's config for this session is.
func (h *Handler) options(in *Input) claudecfg.Options {
	o, _ := ccpolicy.FromEnv(h.Getenv, "", in.Cwd) // no working directory: the user's home and config still apply
	return o
}

// configured finds server in the config Claude Code loaded for this
// session: the entry of that name it loads (claudecfg.Lookup: never a
// project server the user has not approved, nor one Claude Code's policy
// blocks), of the scope the payload names (mcp_server.source). A server
// the session runs from a source mcp-heal does not read (--mcp-config,
// a plugin, managed-mcp.json) has no entry here: another entry of its
// name is not the one running (ccpolicy.Source).
func (h *Handler) configured(in *Input, server string) (claudecfg.Server, bool) {
	if _, ours := ccpolicy.Source(in.ServerSource); !ours {
		return claudecfg.Server{}, false
	}
	all, err := h.Discover(h.options(in))
	if err != nil {
		h.Log.Warn("reading MCP config", "err", err)
	}
	s, ok := claudecfg.Lookup(all, server)
	if ok && in.ServerSource != "" && s.Scope != in.ServerSource {
		return claudecfg.Server{}, false
	}
	return s, ok
}

// maxPayload bounds what a hook reads: payloads carry tool input and
// error strings, which can be large, but not unbounded.
const maxPayload = 64 << 20

// stdinTimeout bounds the wait for stdin, so a hook never blocks a
// session if its stdin is never closed.
const stdinTimeout = 10 * time.Second

// ReadPayload reads a hook's stdin: at most maxPayload bytes, within
// stdinTimeout. On a
// timeout the reading goroutine is abandoned; the process exits soon after.
func ReadPayload(r io.Reader) ([]byte, error) {
	limit, timeout := int64(maxPayload), stdinTimeout
	type result struct {
		b   []byte
		err error
	}
	ch := make(chan result, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(r, limit+1))
		ch <- result{b, err}
	}()
	select {
	case res := <-ch:
		if res.err == nil && int64(len(res.b)) > limit {
			return nil, fmt.Errorf("payload larger than %d bytes", limit)
		}
		return res.b, res.err
	case <-time.After(timeout):
		return nil, errors.New("timed out reading stdin")
	}
}
