package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// Golden compares got with the golden file at path, after writing got
// there when update is set (go test -update). A difference fails tb,
// naming what changed, with got in full.
func Golden(tb testing.TB, path, got string, update bool, what string) {
	tb.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (go test -update writes it)", err)
	}
	if string(want) != got {
		tb.Errorf("%s changed; if on purpose, go test -update, and read the diff of %s\n%s", what, path, got)
	}
}
