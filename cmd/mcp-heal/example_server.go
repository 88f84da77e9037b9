package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/mcp-heal/mcp-heal/internal/example"
)

const exampleServerHelp = `
Runs the built-in example MCP server on stdin/stdout. It speaks both protocol
eras (server/discover, 2026-07-28, and initialize, 2024-11-05..2025-11-25) and
is the server 'mcp-heal demo' heals and the fixture the tests use.

Tools (annotations decide what the shim may retry):
  echo {text}              readOnlyHint
  add {a, b}               readOnlyHint
  counter_increment        not idempotent; counts in --state-file
  set_value {key, value}   idempotentHint
  slow {ms}                readOnlyHint; sends progress when asked
  crash {code}             the process exits while the call runs
  hang                     the server stops answering (pings included)
  session_info             readOnlyHint; pid, protocol version, log level, subscriptions
Every tool takes delay_ms: wait that long before acting.
Resources example://hello, example://counter (subscribable), example://session;
prompt greet; logging/setLevel; ping.
--catalog-file FILE adds tools, prompts and resources (lines 'tool NAME',
'prompt NAME', 'resource URI'); editing it makes the server send
notifications/{tools,prompts,resources}/list_changed, as a server whose
catalog changes from outside does.
`

func runExampleServer(ctx context.Context, env *Env, args []string) error {
	fs := newFlags("example-server")
	var o example.Options
	fs.StringVar(&o.Era, "era", example.EraBoth, "protocol eras to speak: both, handshake (-32601 to server/discover) or stateless")
	fs.StringVar(&o.Name, "name", "mcp-heal-example", "serverInfo name")
	fs.StringVar(&o.StateFile, "state-file", "", "file holding counter_increment's counter (default: in memory)")
	fs.StringVar(&o.CallLog, "call-log", "", "append one line per executed tools/call to this file")
	fs.IntVar(&o.FailStarts, "fail-starts", 0, "fail (exit 1, message on stderr) the first N starts, counted in --fail-file")
	fs.StringVar(&o.FailFile, "fail-file", "", "file counting starts for --fail-starts")
	fs.BoolVar(&o.JunkStdout, "junk-stdout", false, "write non-JSON lines to stdout at start and before each tool result")
	fs.DurationVar(&o.StartDelay, "start-delay", 0, "wait this long before reading stdin (a slow cold start)")
	fs.StringVar(&o.CatalogFile, "catalog-file", "", "extra tools, prompts, resources ('tool NAME' lines...): re-read every 50 ms, changes announced with list_changed")
	fs.StringVar(&o.HangFile, "hang-file", "", "a tools/call arriving while this file exists removes it and hangs the server (no answers, pings included)")
	fs.BoolVar(&o.CrashOnDiscover, "crash-on-discover", false, "exit 1 on server/discover, like servers that die on unknown methods")
	fs.BoolVar(&o.Faults.TestTools, "test-tools", false, "add the tools a proxy's tests call (badtext: an answer holding invalid UTF-8 and lone surrogates; cutshort; ...)")
	if err := parseFlags(env, fs, "example-server [flags]", exampleServerHelp, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &usageError{msg: fmt.Sprintf("unexpected argument %q", fs.Arg(0)), hint: "run 'mcp-heal example-server --help'"}
	}
	switch o.Era {
	case example.EraBoth, example.EraHandshake, example.EraStateless:
	default:
		return &usageError{msg: fmt.Sprintf("unknown --era %q", o.Era), hint: "use both, handshake or stateless"}
	}
	if o.FailStarts > 0 && o.FailFile == "" {
		return &usageError{msg: "--fail-starts needs --fail-file", hint: "the file counts starts across processes"}
	}
	err := example.Run(ctx, o, env.Stdin, env.Stdout, env.Stderr)
	var ee *example.ExitError
	if errors.As(err, &ee) {
		// A simulated failure: the message is already on stderr. Exit at
		// once, in the middle of whatever else was running.
		// Exiting here rather than through main is deliberate: the crash
		// tool must take the process down mid-call, with other calls still
		// running.
		os.Exit(ee.Code)
	}
	return err
}
