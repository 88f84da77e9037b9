package text

import (
	"regexp"
	"strings"
)

// A server's own words (a stderr line, a remote's HTTP error body, its
// error message) reach the model inside mcp-heal's sentences: in a hook's
// additionalContext, which Claude Code sends as a role "system" block, in a
// deny reason, in a shim's error reply. Whoever writes them there uses
// Quote or Said, the one rule (docs/threat-model.md, "The model's
// context"): the words are put on one line between « and », labelled as
// the server's, capped at QuoteMax bytes, and stripped of whatever could
// pose as mcp-heal's own voice or as structure the model trusts:
//   - "mcp-heal:" (mcp-heal's prefix, any case or dash) becomes "[mcp-heal]";
//   - backticks (mcp-heal's advice quotes the commands to run in them)
//     become ';
//   - « and » (which would end the quote early) become ‹ and ›, and so do
//     < and > (no tags such as <system-reminder>);
//   - control characters, line breaks, bidi controls and invalid UTF-8
//     become visible escapes (Safe), so the words stay on one line.
//
// Whatever a server writes, what lies outside «…» is mcp-heal's.

// QuoteMax caps the quoted words, in bytes, before the closing quote.
const QuoteMax = 160

// mcpHealPrefix matches mcp-heal's prefix as a server might forge it:
// any case, any dash or none, spaces before the colon, a fullwidth colon.
var mcpHealPrefix = regexp.MustCompile(`(?i)mcp[-‐‑‒–—−_ ]?heal\s*[:：﹕]`)

var neutral = strings.NewReplacer(
	"`", "'",
	"«", "‹", "»", "›",
	"<", "‹", ">", "›",
)

// Quote returns s, a server's words, as «…»: one line, neutralised and
// capped by the rule above ("" when s holds nothing but white space).
func Quote(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return ""
	}
	s = Safe(s)
	s = mcpHealPrefix.ReplaceAllString(s, "[mcp-heal]")
	s = neutral.Replace(s)
	return "«" + Clip(s, QuoteMax) + "»"
}

// Said is s attributed to who: `<who> said: «…»` ("" for empty words),
// e.g. Said("the server", body) = `the server said: «…»`.
func Said(who, s string) string {
	q := Quote(s)
	if q == "" {
		return ""
	}
	return who + " said: " + q
}
