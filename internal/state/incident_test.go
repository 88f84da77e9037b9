//go:build unix

package state

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestTornIncidentLine: an append that failed half-way (a full disk) left
// a line without its newline; the next incident starts a line of its own
// and is read back, where it used to be glued to the torn one and both
// were lost.
func TestTornIncidentLine(t *testing.T) {
	useTempState(t)
	if err := AppendIncident(Incident{Server: "a", Class: "not-connected"}); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(IncidentsPath(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"time":"2026-11-26T00:00:00Z","server":"torn","cla`)
	f.Close()
	if err := AppendIncident(Incident{Server: "b", Class: "connection-closed"}); err != nil {
		t.Fatal(err)
	}
	all, err := ReadIncidents(MaxIncidentBytes, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, in := range all {
		got = append(got, in.Server)
	}
	if strings.Join(got, ",") != "a,b" {
		t.Fatalf("read back %v, want [a b]: the incident after a torn line is lost", got)
	}
}

// TestIncidentsFIFONoHang: a FIFO planted as incidents.jsonl is refused at
// once by every reader and writer of the log (issue 16 item 7), where the
// hooks used to wait for a writer until Claude Code's timeout.
func TestIncidentsFIFONoHang(t *testing.T) {
	useTempState(t)
	plantFIFO(t, IncidentsPath())
	if err := within(t, "ReadIncidents", func() error { _, err := ReadIncidents(tailBytesForTest, time.Time{}); return err }); err == nil {
		t.Error("ReadIncidents of a FIFO: no error")
	}
	if err := within(t, "AppendIncident", func() error { return AppendIncident(Incident{Server: "a"}) }); err == nil {
		t.Error("AppendIncident to a FIFO: no error")
	}
}

const tailBytesForTest = 64 << 10

// TestReadTailBounded: a log far larger than the tail asked for costs the
// tail: whole lines only, the cut one dropped.
func TestReadTailBounded(t *testing.T) {
	useTempState(t)
	if err := EnsureDir(Dir()); err != nil {
		t.Fatal(err)
	}
	line := `{"server":"s","class":"x","error":"` + strings.Repeat("e", 100) + `"}` + "\n"
	if err := os.WriteFile(IncidentsPath(), []byte(strings.Repeat(line, 10000)), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := ReadTail(IncidentsPath(), 1000, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 1000 || len(b)%len(line) != 0 || len(b) == 0 {
		t.Fatalf("tail of %d bytes, want whole lines within 1000", len(b))
	}
	// Not modified since: nothing read.
	if b, err := ReadTail(IncidentsPath(), 1000, time.Now().Add(time.Hour)); err != nil || b != nil {
		t.Fatalf("tail of an unchanged log: %d bytes, %v", len(b), err)
	}
}

// TestIncidentOpenRule: the one rule, per session: a failure is open until
// an ok or a later call of its session, the window, or the end of its
// session's Claude Code; another session's call or ok says nothing.
func TestIncidentOpenRule(t *testing.T) {
	useTempState(t)
	now := time.Now()
	ended := exec.Command("true")
	if err := ended.Run(); err != nil {
		t.Fatal(err)
	}
	fail := func(session string, ago time.Duration, pid int) Incident {
		return Incident{Session: session, Server: "ex", Class: "not-connected", Time: now.Add(-ago), ClaudePID: pid}
	}
	for _, tt := range []struct {
		name string
		log  []Incident
		mark string // a session whose call to ex is marked now
		want []string
	}{
		{"open", []Incident{fail("s1", time.Minute, os.Getpid())}, "", []string{"s1"}},
		{"aged out", []Incident{fail("s1", 2*time.Hour, 0)}, "", nil},
		{"session ended", []Incident{fail("s1", time.Minute, ended.Process.Pid)}, "", nil},
		{"ok since", []Incident{fail("s1", time.Minute, 0), {Session: "s1", Server: "ex", Class: ClassOK, Time: now}}, "", nil},
		{"another session's ok", []Incident{fail("s1", time.Minute, 0), {Session: "s2", Server: "ex", Class: ClassOK, Time: now}}, "", []string{"s1"}},
		{"answered by a later call", []Incident{fail("s1", time.Minute, 0)}, "s1", nil},
		{"another session's call", []Incident{fail("s1", time.Minute, 0)}, "s2", []string{"s1"}},
		{"two sessions", []Incident{fail("s1", 2*time.Minute, 0), fail("s2", time.Minute, 0)}, "", []string{"s1", "s2"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			useTempState(t)
			if tt.mark != "" {
				if err := MarkCalled(tt.mark, "ex", now); err != nil {
					t.Fatal(err)
				}
			}
			var got []string
			for _, in := range OpenIncidents(tt.log, "ex", "", now) {
				got = append(got, in.Session)
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Fatalf("open in sessions %v, want %v", got, tt.want)
			}
		})
	}
}
