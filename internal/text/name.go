package text

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// A server's name is the user's, or a cloned repository's, or a plugin's:
// Claude Code accepts any string, newlines, terminal escapes and
// "mcp-heal:" included, and mcp-heal prints it in the monitor's lines, the
// hooks' context and the user's line, status, doctor, wrap, unwrap and
// logs. Name and QuotedName are the one rule for printing it:
//   - a plain name (letters, digits and _ . : @ / + -, at most NameMax
//     bytes, not posing as mcp-heal's prefix) prints as it is (Name) or
//     between double quotes (QuotedName), as it always did;
//   - any other name prints between double quotes, escaped to printable
//     ASCII: \" and \\, \n \r \t, \xNN for other control bytes, invalid
//     UTF-8 and ` $ < >, \uNNNN for every other non-ASCII rune (« »,
//     U+2028, bidi controls, fullwidth colons), cut after NameMax bytes
//     with "…". Between double quotes a shell expands nothing of it (no $
//     and no backtick is left): the advice may name it in a command the
//     model runs with the Bash tool.
//
// So a name is always one line, and no line mcp-heal prints starts with,
// or holds outside quotes, anything the name chose.

// NameMax caps a printed name, in bytes of its escaped form.
const NameMax = 64

// Name returns name fit to print: as it is when plain, else quoted and
// escaped (the rule above).
func Name(name string) string {
	if plainName(name) {
		return name
	}
	return quotedName(name)
}

// QuotedName is Name between double quotes: "gh" for gh, what %q gave for
// a plain name.
func QuotedName(name string) string {
	if plainName(name) {
		return `"` + name + `"`
	}
	return quotedName(name)
}

func plainName(s string) bool {
	if s == "" || len(s) > NameMax || mcpHealPrefix.MatchString(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("_.:@/+-", c) >= 0) {
			return false
		}
	}
	return true
}

func quotedName(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		var e string
		switch {
		case r == utf8.RuneError && n == 1:
			e = fmt.Sprintf(`\x%02x`, s[i])
		case r == '"' || r == '\\':
			e = `\` + string(r)
		case r == '\n':
			e = `\n`
		case r == '\r':
			e = `\r`
		case r == '\t':
			e = `\t`
		case r == '`' || r == '$' || r == '<' || r == '>' || r < 0x20 || r == 0x7f:
			e = fmt.Sprintf(`\x%02x`, r)
		case r < 0x80:
			e = string(r)
		case r <= 0xffff:
			e = fmt.Sprintf(`\u%04x`, r)
		default:
			e = fmt.Sprintf(`\U%08x`, r)
		}
		if b.Len()-1+len(e) > NameMax {
			b.WriteString("…")
			break
		}
		b.WriteString(e)
		i += n
	}
	b.WriteByte('"')
	return b.String()
}
