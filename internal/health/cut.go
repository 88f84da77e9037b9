package health

import "fmt"

// CutError is the one account of a call whose answer the server was
// sending when it ended (issue 30): n bytes of the answer had reached the
// client as they came, cut there (a line Claude Code skips, keeping the
// connection: docs/claude-code-behaviour.md), c is how the server ended,
// restarted whether mcp-heal is starting it again at once (false: it is
// in a crash loop, started again at longer intervals). The call was not re-sent: the server ended under it.
// No restart note follows it: this is the news of the restart.
func CutError(server string, c Cause, n int64, restarted bool) string {
	st, then := restarting(c.Remote, false), stateGone(c.Remote)
	if !restarted {
		st, then = "is failing (crash loop)", "mcp-heal keeps starting it again, at longer intervals"
	}
	return sentence(server, st, fmt.Sprintf("after %d bytes of this call's answer, %s", n, c.Clause()),
		"the answer is lost (what reached the client was cut short)",
		Outcome{Kind: OutcomeNotResent, Effect: true}.sentence(c.Remote), then)
}
