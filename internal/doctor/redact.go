package doctor

import (
	"encoding/json"

	"github.com/mcp-heal/mcp-heal/internal/redact"
)

// Redacted returns copies of reports fit to print, as text or JSON: every
// string in them (the server's command line and URL, findings with the
// server's own stderr and error text, actions, advice, records and
// incidents) has gone through the one rule (redact.JSON: URL tokens and
// passwords, bearer tokens, secret-named values). Env and header values are
// never serialised at all. doctor and heal print these, as status does.
func Redacted(reports []*Report) []*Report {
	out := make([]*Report, 0, len(reports))
	for _, r := range reports {
		b, err := json.Marshal(r)
		var c Report
		if err != nil || json.Unmarshal(redact.JSON(b), &c) != nil {
			// Cannot happen for these types; print only the name.
			c = Report{Server: r.Server.Redacted(), Findings: []Finding{{Severity: Error, Message: "cannot print this report safely"}}}
		}
		out = append(out, &c)
	}
	return out
}
