package state

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestClaimsSwept: a claim a killed owner left (a shim's restart note, a
// hook's context claim) goes once it is older than ClaimLife, at the next
// claim won; a notice told for good (MarkTold) stays.
func TestClaimsSwept(t *testing.T) {
	testenv.UseStateDir(t, testenv.TempDir(t))
	if err := MarkTold("conflict-x"); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"old", "recent"} {
		if won, err := ClaimTold(k); err != nil || !won {
			t.Fatalf("claim %s: %v %v", k, won, err)
		}
	}
	past := time.Now().Add(-ClaimLife - time.Minute)
	for _, name := range []string{claimName("old"), toldName("conflict-x")} {
		if err := os.Chtimes(filepath.Join(ToldDir(), name), past, past); err != nil {
			t.Fatal(err)
		}
	}
	if won, _ := ClaimTold("recent"); won {
		t.Fatal("a claim was won twice")
	}
	if won, err := ClaimTold("new"); err != nil || !won {
		t.Fatalf("claim new: %v %v", won, err)
	}
	if Claimed("old") || !Claimed("recent") || !Claimed("new") || !Told("conflict-x") {
		t.Errorf("after the sweep: old %v (want gone), recent %v, new %v, the notice %v (want kept)", Claimed("old"), Claimed("recent"), Claimed("new"), Told("conflict-x"))
	}
	if err := ForgetClaim("new"); err != nil || Claimed("new") {
		t.Errorf("ForgetClaim: %v", err)
	}
}
