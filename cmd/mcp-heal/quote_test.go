//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/state"
)

// hostileText is what a hostile or careless server may write to stderr or
// put in an error: OSC 52 (writes the user's clipboard), OSC 0 (retitles
// the window), ESC[2J (clears the screen), a C1 CSI and a bidi override.
const hostileText = "boom \x1b]52;c;cm0gLXJmIH4=\x07 \x1b]0;pwned\x07 \x1b[2J \u009b31m \u202eexe.txt"

func assertQuoted(t *testing.T, what, out string) {
	t.Helper()
	for _, bad := range []string{"\x1b", "\x07", "\u009b", "\u202e"} {
		if strings.Contains(out, bad) {
			t.Errorf("%s prints %q raw:\n%q", what, bad, out)
		}
	}
	if !strings.Contains(out, `\x1b]52;c;`) {
		t.Errorf("%s does not show the escape quoted (\\x1b]52;c;...):\n%s", what, out)
	}
}

// TestServerTextIsQuoted: status, doctor and logs print what a server
// wrote (stderr, exit reason, error text) through one quoting rule; no
// terminal escape reaches the terminal.
func TestServerTextIsQuoted(t *testing.T) {
	args, _ := json.Marshal([]string{"-c", `printf '%s\n' "$1" >&2; exit 3`, "sh", hostileText})
	c := newHealCLI(t, `{"evil":{"command":"/bin/sh","args":`+string(args)+`}}`)
	c.vars["CLAUDE_CODE_SESSION_ID"] = "s1"
	// doctor runs the server: its stderr is the hostile text.
	_, out, errOut := c.run("", "doctor", "evil", "--timeout", "10s")
	if !strings.Contains(out, "exited with code 3") {
		t.Fatalf("doctor did not run the server:\n%s\n%s", out, errOut)
	}
	assertQuoted(t, "doctor", out)

	now := time.Now().UTC()
	code := 3
	rec := &state.Record{Server: "evil", Session: "s1", ShimPID: os.Getpid(), Mode: state.ModeStdio, State: state.Failed, Restarts: 5,
		LastExit:   &state.Exit{Code: &code, Reason: "exited with code 3; " + hostileText, At: now},
		LastError:  hostileText,
		StderrTail: []string{hostileText},
		Started:    now.Add(-time.Minute)}
	if err := state.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := state.AppendIncident(state.Incident{Time: now, Session: "s1", Server: "evil", Event: "PostToolUseFailure", Class: "connection-closed", Error: hostileText}); err != nil {
		t.Fatal(err)
	}
	_, out, _ = c.run("", "status")
	assertQuoted(t, "status", out)

	f, err := state.OpenLog("evil")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "%s\n", hostileText)
	fmt.Fprintf(f, `{"time":%q,"event":"exit","reason":"\u001b]52;c;eA==\u0007","stderr":"\u202eabc"}`+"\n", now.Format(time.RFC3339Nano))
	fmt.Fprintf(f, `{"time":%q,"event":"exit","reason":"a b \u001b]52;c;eA==\u0007"}`+"\n", now.Format(time.RFC3339Nano))
	f.Close()
	_, out, _ = c.run("", "logs", "evil")
	assertQuoted(t, "logs", out)
}
