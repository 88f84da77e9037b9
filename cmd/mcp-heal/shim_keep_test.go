package main

import (
	"bytes"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/keep"
	"github.com/mcp-heal/mcp-heal/internal/proc"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestStdioDialerKeep: `shim --keep` keeps the server where the keeper
// exists; on Windows it says in one line that it cannot and runs the
// server unkept (issue 20), and without --keep nothing is said.
func TestStdioDialerKeep(t *testing.T) {
	rt, err := os.MkdirTemp("", "kd") // short: a socket path must stay under 104 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(rt) })
	t.Setenv("XDG_RUNTIME_DIR", rt)
	t.Setenv("XDG_STATE_HOME", testenv.TempDir(t))
	pc := proc.Config{Path: "server", Guardian: []string{"/opt/mcp-heal", "guardian"}}
	for _, tc := range []struct {
		goos   string
		window time.Duration
		kept   bool
		warn   string
	}{
		{"windows", 10 * time.Minute, false, "--keep is not supported on Windows: the server runs unkept"},
		{"windows", 0, false, ""},
		{"linux", 10 * time.Minute, true, ""},
		{"darwin", 10 * time.Minute, true, ""},
		{"linux", 0, false, ""},
	} {
		if tc.kept && runtime.GOOS == "windows" {
			continue // keep.NewDialer makes a unix socket's directory
		}
		var logBuf bytes.Buffer
		log := slog.New(slog.NewTextHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelWarn}))
		d := stdioDialer(tc.goos, pc, "mem", tc.window, nil, log)
		_, isKept := d.(*keep.Dialer)
		_, isProc := d.(*proc.Dialer)
		if isKept != tc.kept || isKept == isProc {
			t.Errorf("%s --keep %v: dialer %T", tc.goos, tc.window, d)
		}
		lines := strings.Split(strings.TrimSpace(logBuf.String()), "\n")
		switch {
		case tc.warn == "" && logBuf.Len() != 0:
			t.Errorf("%s --keep %v logged %q", tc.goos, tc.window, logBuf.String())
		case tc.warn != "" && (len(lines) != 1 || !strings.Contains(lines[0], tc.warn)):
			t.Errorf("%s --keep %v logged %q, want one line saying %q", tc.goos, tc.window, logBuf.String(), tc.warn)
		}
	}
}
