package demo

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestDemo runs `mcp-heal demo --json` as a user would (the binary
// re-executes itself as shim and example server) and checks its figures.
func TestDemo(t *testing.T) {
	testenv.NeedsFull(t, "a long run (the whole demo)")
	bin := testenv.Binary(t)
	cmd := exec.Command(bin, "demo", "--json", "-q")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("mcp-heal demo: %v\nstderr:\n%s", err, stderr.String())
	}
	var r Report
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("decode report: %v\n%s", err, stdout.String())
	}
	t.Logf("report:\n%s", stdout.String())
	if len(r.Phases) != 3 {
		t.Fatalf("got %d phases, want 3", len(r.Phases))
	}
	if r.Shim.Lost != 0 {
		t.Errorf("through the shim: %d calls lost, want 0", r.Shim.Lost)
	}
	if r.Shim.RanTwice != 0 || r.Direct.RanTwice != 0 {
		t.Errorf("non-idempotent calls ran twice: shim %d, direct %d, want 0", r.Shim.RanTwice, r.Direct.RanTwice)
	}
	for _, p := range r.Phases {
		s := p.Shim
		if s.RecoveryMS < 0 {
			t.Errorf("%s: the shim never recovered", p.Failure)
		}
		if !s.SessionReplayed {
			t.Errorf("%s: the new server lacks the client's log level or subscription", p.Failure)
		}
		if s.NewPID == 0 || s.NewPID == s.OldPID {
			t.Errorf("%s: server pid %d -> %d, want a new process", p.Failure, s.OldPID, s.NewPID)
		}
		// Only non-idempotent calls may fail, and only with -32603.
		for msg, n := range s.Errors {
			if !strings.HasPrefix(msg, "counter_increment: -32603 ") {
				t.Errorf("%s: %d× unexpected error %q", p.Failure, n, msg)
			}
		}
		if s.OK+s.Failed+s.Lost != r.CallsPerPhase {
			t.Errorf("%s: %d+%d+%d outcomes, want %d", p.Failure, s.OK, s.Failed, s.Lost, r.CallsPerPhase)
		}
	}
	// Directly, the first SIGKILL ends the connection for good.
	if d := r.Phases[0].Direct; d.Failed == 0 || d.RecoveryMS >= 0 {
		t.Errorf("direct SIGKILL phase: %+v, want failures and no recovery", d)
	}
	for _, p := range r.Phases[1:] {
		if p.Direct.OK != 0 {
			t.Errorf("direct %s: %d ok after the server died, want 0", p.Failure, p.Direct.OK)
		}
	}
	if r.Shim.OK <= r.Direct.OK {
		t.Errorf("shim answered %d, direct %d: the shim should answer more", r.Shim.OK, r.Direct.OK)
	}
}

func TestWriteTable(t *testing.T) {
	r := &Report{CallsPerPhase: 2, Workers: 1, DurationMS: 1234,
		Phases: []Phase{{Failure: "SIGKILL",
			Shim:   Stats{OK: 1, Failed: 1, Retried: 1, RecoveryMS: 120, OldPID: 10, NewPID: 11, SessionReplayed: true, Errors: map[string]int{"counter_increment: -32603 died": 1}},
			Direct: Stats{OK: 0, Failed: 2, RecoveryMS: -1}}},
		Shim: Totals{Calls: 2, OK: 1, Failed: 1, Retried: 1}, Direct: Totals{Calls: 2, Failed: 2}}
	var b bytes.Buffer
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"through mcp-heal shim", "connected directly", "SIGKILL", "0.12s", "never",
		"server pid 10 replaced by 11", "1× counter_increment: -32603 died", "0 lost"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}
