package wrap

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from the golden file (go test -update rewrites it):\n%s", name, Diff(name, want, got))
	}
}

// TestGoldenWrap pins what wrap writes for a typical ~/.claude.json and the
// diff --dry-run prints.
func TestGoldenWrap(t *testing.T) {
	orig, err := os.ReadFile(filepath.Join("testdata", "claude.json"))
	if err != nil {
		t.Fatal(err)
	}
	ps := [][]string{{"mcpServers"}, {"projects", "/home/ūser/src/项目", "mcpServers"}}
	data := orig
	var log strings.Builder
	for _, p := range ps {
		var ch []Change
		data, ch, err = Wrap(data, p, nil, "/home/ūser/.local/share/mcp-heal/bin/mcp-heal")
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range ch {
			fmt.Fprintf(&log, "%s: %s %s\n", c.Name, c.Action, c.Detail)
		}
	}
	golden(t, "claude.json.wrapped", data)
	golden(t, "claude.json.diff", []byte(Diff("~/.claude.json", orig, data)))
	golden(t, "claude.json.changes", []byte(log.String()))
	back := data
	for _, p := range ps {
		back, _, _ = Unwrap(back, p, nil)
	}
	if !bytes.Equal(back, orig) {
		t.Fatalf("unwrap:\n%s", Diff("claude.json", orig, back))
	}
}

// TestDiffApplies: the hunks Diff prints turn the old text into the new.
func TestDiffApplies(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	for i := 0; i < 200; i++ {
		var a []string
		for j := 0; j < r.Intn(300); j++ {
			a = append(a, fmt.Sprintf("line %d\n", r.Intn(20)))
		}
		b := append([]string(nil), a...)
		for k := 0; k < r.Intn(6); k++ {
			pos := 0
			if len(b) > 0 {
				pos = r.Intn(len(b))
			}
			switch r.Intn(3) {
			case 0:
				b = append(b[:pos], append([]string{"new " + strconv.Itoa(k) + "\n"}, b[pos:]...)...)
			case 1:
				if len(b) > 0 {
					b = append(b[:pos], b[pos+1:]...)
				}
			case 2:
				if len(b) > 0 {
					b[pos] = "changed\n"
				}
			}
		}
		old, new := strings.Join(a, ""), strings.Join(b, "")
		d := Diff("f", []byte(old), []byte(new))
		if got := applyDiff(t, old, d); got != new {
			t.Fatalf("case %d: patch gives\n%q\nwant\n%q\ndiff:\n%s", i, got, new, d)
		}
	}
}

// applyDiff applies a unified diff made by Diff.
func applyDiff(t *testing.T, old, d string) string {
	if d == "" {
		return old
	}
	a := splitLines(old)
	var out []string
	pos := 0
	lines := strings.SplitAfter(d, "\n")
	for i := 2; i < len(lines); i++ {
		l := lines[i]
		if l == "" {
			continue
		}
		switch l[0] {
		case '@':
			var as, al, bs, bl int
			if _, err := fmt.Sscanf(strings.ReplaceAll(l, ",", " "), "@@ -%d %d +%d %d @@", &as, &al, &bs, &bl); err != nil {
				// single-number ranges
				f := strings.Fields(l)
				as, _ = strconv.Atoi(strings.Split(f[1][1:], ",")[0])
				if !strings.Contains(f[1], ",") {
					al = 1
				}
			}
			start := as - 1
			if al == 0 {
				start = as
			}
			out = append(out, a[pos:start]...)
			pos = start
		case ' ':
			out = append(out, a[pos])
			pos++
		case '-':
			pos++
		case '+':
			out = append(out, l[1:])
		case '\\':
			if n := len(out) - 1; n >= 0 {
				out[n] = strings.TrimSuffix(out[n], "\n")
			}
		}
	}
	out = append(out, a[pos:]...)
	return strings.Join(out, "")
}
