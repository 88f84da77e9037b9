package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/hook"
)

const hookHelp = `Handle one Claude Code hook event. The payload is read from stdin; the
reply (one JSON object, or nothing) is written to stdout. Events:
PreToolUse, PostToolUse, PostToolUseFailure, PostToolBatch, SessionStart.

A hook never fails: whatever goes wrong is logged to the state directory
(hook.log) and the hook exits 0 without output, so the tool call goes on.

--rewake is for hooks Claude Code runs with asyncRewake (in the background,
waking the model only when the hook exits 2): the reply's context is
written to stderr as plain text and the hook exits 2; nothing to say is
exit 0.`

// maxHookPayload bounds what a hook reads: PostToolBatch carries tool
// results, which can be large, but not unbounded.
const maxHookPayload = 64 << 20

// hookStdinTimeout bounds the wait for stdin, so a hook never blocks a
// session if its stdin is never closed.
const hookStdinTimeout = 10 * time.Second

func runHook(ctx context.Context, env *Env, args []string) error {
	fs := newFlags("hook")
	rewake := fs.Bool("rewake", false, "say the reply's context on stderr and exit 2 (asyncRewake hooks)")
	if err := parseFlags(env, fs, "hook <event>", hookHelp, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return &usageError{msg: "hook needs exactly one event name", hint: "run 'mcp-heal hook --help'"}
	}
	log := hook.NewLogger()
	payload, err := readStdin(env.Stdin, maxHookPayload, hookStdinTimeout)
	if err != nil {
		log.Warn("reading hook stdin", "event", fs.Arg(0), "err", err)
		return nil
	}
	reply := hook.New(env.Getenv, log).Handle(ctx, fs.Arg(0), payload)
	if *rewake {
		return rewakeReply(env, reply)
	}
	if reply != nil {
		if _, err := env.Stdout.Write(reply); err != nil {
			log.Warn("writing hook reply", "err", err)
		}
	}
	return nil
}

// readStdin reads all of r, at most limit bytes, within timeout. On a
// timeout the reading goroutine is abandoned; the process exits soon after.
func readStdin(r io.Reader, limit int64, timeout time.Duration) ([]byte, error) {
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

// rewakeReply turns a hook reply into what an asyncRewake hook says:
// Claude Code 2.1.328 wakes the model when such a hook exits 2 and shows it
// the hook's stderr (stdout when stderr is empty) in a system reminder.
func rewakeReply(env *Env, reply []byte) error {
	var r struct {
		HookSpecificOutput struct {
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if reply == nil || json.Unmarshal(reply, &r) != nil || r.HookSpecificOutput.AdditionalContext == "" {
		return nil
	}
	fmt.Fprintln(env.Stderr, r.HookSpecificOutput.AdditionalContext)
	return &exitError{code: 2}
}
