package wrap

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
	"github.com/mcp-heal/mcp-heal/internal/cli"
)

func TestRequestComplete(t *testing.T) {
	for _, tc := range []struct {
		name  string
		req   Request
		keep  time.Duration
		usage string // the usage error's message; "" for none
	}{
		{"bad scope", Request{Scope: "global", Project: ProjectLocal, Shim: "/bin/mcp-heal"}, 0, `unknown scope "global"`},
		{"bad mode", Request{Scope: "all", Project: "share", Shim: "/bin/mcp-heal"}, 0, `unknown --project-servers "share"`},
		{"unwrap ignores mode", Request{Unwrap: true, Scope: claudecfg.ScopeUser}, 0, ""},
		{"keep", Request{Scope: claudecfg.ScopeLocal, Project: ProjectSkip, Shim: "bin/mcp-heal"}, 90 * time.Second, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.req
			err := r.Complete(tc.keep)
			var ue *cli.UsageError
			switch {
			case tc.usage != "" && (!errors.As(err, &ue) || ue.Msg != tc.usage):
				t.Fatalf("got %v, want the usage error %q", err, tc.usage)
			case tc.usage == "" && err != nil:
				t.Fatalf("got %v, want no error", err)
			}
			if tc.usage != "" || r.Unwrap {
				return
			}
			if !filepath.IsAbs(r.Shim) {
				t.Errorf("got shim %q, want an absolute path", r.Shim)
			}
			if want := []string{"--keep", "1m30s"}; !slices.Equal(r.Flags, want) {
				t.Errorf("got flags %q, want %q", r.Flags, want)
			}
		})
	}
}

func TestPlanMissingError(t *testing.T) {
	if err := (&Plan{}).MissingError("all"); err != nil {
		t.Errorf("no missing names: got %v, want nil", err)
	}
	var ue *cli.UsageError
	err := (&Plan{Missing: []string{"a", "plugin:x"}}).MissingError("user")
	if !errors.As(err, &ue) || ue.Msg != `no server named "a", "plugin:x" in scope user` || ue.Hint == "" {
		t.Errorf("got %#v, want a usage error naming both, with the plugin hint", err)
	}
}
