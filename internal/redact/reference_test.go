package redact

import (
	"regexp"
	"strings"
	"testing"
)

// The rules as regular expressions: what the scanners of scan.go must do,
// byte for byte.
var (
	refHTTPURL = regexp.MustCompile(`\bhttps?://[^\s"'<>\\]+`)
	refCreds   = regexp.MustCompile(`://[^/\s:@"'\\]+:[^/\s@"'\\]+@`)
	refBearer  = regexp.MustCompile(`(?i)\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{6,}`)
	refPrefix  = regexp.MustCompile(`\b(?:sk-|sk_live_|ghp_|gho_|ghs_|github_pat_|glpat-|xox[abpr]-|AKIA|AIza)[A-Za-z0-9_-]{8,}`)
	refKV      = regexp.MustCompile(`(?i)([A-Za-z0-9_.-]*(?:token|secret|password|passwd|pwd|api[_-]?key|apikey|authorization|credential|private[_-]?key|access[_-]?key|cookie)[A-Za-z0-9_.-]*)(\\*["']?\s*[:=]\s*\\*["']?)([^\s"'\\,&;{}\[\]]+)`)
)

func reference(s string) string {
	if strings.Contains(s, "://") {
		s = refHTTPURL.ReplaceAllStringFunc(s, textURL)
		s = refCreds.ReplaceAllString(s, "://"+Mark+"@")
	}
	s = refBearer.ReplaceAllString(s, "$1 "+Mark)
	s = refPrefix.ReplaceAllString(s, Mark)
	return refKV.ReplaceAllStringFunc(s, func(m string) string {
		sub := refKV.FindStringSubmatch(m)
		if strings.HasSuffix(strings.ToLower(sub[1]), "progresstoken") || sub[3] == urlMark {
			return m
		}
		return sub[1] + sub[2] + Mark
	})
}

// FuzzScannersMatchRegexps: String (hand-written scanners) gives exactly
// what the regular expressions give, on any text.
func FuzzScannersMatchRegexps(f *testing.F) {
	for _, s := range []string{
		`Authorization: Bearer abcdef123456`, `{"api_key":"xyz123","name":"n"}`, `PASSWORD=hunter2 ok`,
		`https://user:pw@example.com/x`, `key sk-abcdefghijklmnop sk_live_abcdefgh1`, `{"progressToken":5}`,
		`"text":"{\"api_key\":\"abcd1234efgh\",\"n\":1}"`, `GET https://api.example.com/mcp?key=abc123&v=2 failed`,
		`postgres://app:hunter2@db/x`, `xhttps://a.b/?c=d hhttp://x`, `TOKEN   abcdefghi basic QWxhZGRpbjpvcGVu`,
		`x.my-token.y = 'v' ; cookie:\\\"c\\\"`, `AKIAABCDEFGHIJKL xoxb-123456789012 ghp_`, `tokentoken=1 pwdx:[x]`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := String(s), reference(s); got != want {
			t.Fatalf("String(%q)\n got %q\nwant %q", s, got, want)
		}
	})
}
