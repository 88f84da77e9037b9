//go:build unix

package interop

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/example"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestGoFixtureBothErasThroughShim opens a session with the Go SDK fixture
// server through the shim in each protocol era (the stateless 2026-07-28
// era negotiated by server/discover, as Claude Code 2.1.328 probes first;
// and the initialize handshake, 2025-11-25), kills the server with SIGKILL
// while idle and checks the next calls work on the new process. The
// conformance suite has no 2026-07-28 scenarios; this covers that era.
func TestGoFixtureBothErasThroughShim(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	fixture := goFixture(t)
	for _, era := range []string{"stateless", "handshake"} {
		t.Run(era, func(t *testing.T) {
			t.Parallel()
			eraSession(t, era, shimmed(t, "fixture", fixture), "test_simple_text", nil)
		})
	}
}

// TestExampleServerBothErasThroughShim does the same with the built-in
// example server, which speaks both eras too.
func TestExampleServerBothErasThroughShim(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	bin := testenv.Binary(t)
	for _, era := range []string{"stateless", "handshake"} {
		t.Run(era, func(t *testing.T) {
			t.Parallel()
			eraSession(t, era, shimmed(t, "example", bin, "example-server"), example.ToolEcho, map[string]any{"text": "hi"})
		})
	}
}

// openSession starts cmdline (a shim) with XDG_STATE_HOME of its own,
// opens the session in era ("stateless": server/discover answered;
// "handshake": initialize only; "probe": server/discover refused, then
// initialize) and returns the client, the shim and its XDG_STATE_HOME.
func openSession(t *testing.T, era string, cmdline []string) (*example.Client, *stdioProc, string) {
	t.Helper()
	xdg := t.TempDir()
	p := startStdio(t, "shim", []string{"XDG_STATE_HOME=" + xdg}, cmdline...)
	c := example.NewClient(p.out, p.in)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	switch era {
	case "stateless":
		got, err := c.Initialize(ctx, "2025-11-25")
		if err != nil || got != "stateless" {
			t.Fatalf("server/discover through the shim: era %q, %v; want stateless", got, err)
		}
	case "probe":
		got, err := c.Initialize(ctx, "2025-11-25")
		if err != nil || got != "handshake" {
			t.Fatalf("server/discover probe, then initialize, through the shim: era %q, %v; want handshake", got, err)
		}
	default:
		if err := c.Handshake(ctx, "2025-11-25"); err != nil {
			t.Fatalf("initialize through the shim: %v", err)
		}
	}
	return c, p, xdg
}

// eraSession opens a session through cmdline (a shim) in era (see
// openSession), calls tool, kills the server and calls tool again.
func eraSession(t *testing.T, era string, cmdline []string, tool string, args map[string]any) {
	c, shim, xdg := openSession(t, era, cmdline)
	t.Cleanup(func() {
		if !shim.stop() {
			t.Errorf("shim did not exit within 10s of stdin closing")
		}
	})
	ctx := testCtx(t, 30*time.Second)
	if r, err := c.Call(ctx, "tools/list", nil); err != nil || r.Error != nil || !strings.Contains(string(r.Result), tool) {
		t.Fatalf("tools/list: %v %s", err, r.Raw)
	}
	callOK := func(what string) {
		t.Helper()
		r, err := c.CallTool(ctx, tool, args)
		if err != nil || r.Error != nil {
			t.Fatalf("%s: %v %s", what, err, r.Raw)
		}
		var res struct {
			IsError bool `json:"isError"`
		}
		json.Unmarshal(r.Result, &res)
		if res.IsError {
			t.Fatalf("%s: tool error %s", what, r.Raw)
		}
	}
	callOK("first call")
	// Killed while idle, as when a server dies between two of Claude
	// Code's calls: the next call comes after the shim has noticed. (A call
	// written in the very instant of the kill is in flight for the shim,
	// and these tools carry no annotations, so it would rightly get
	// -32603; the npm tests cover calls in flight.)
	respawn(t, xdg, shim.pid())
	callOK("call after kill -9")
	callOK("second call after kill -9")
}

// TestEverythingProbeFallbackThroughShim opens the session the way Claude
// Code 2.1.328 does (server/discover, then initialize 2025-11-25 on the
// same process when that fails) against server-everything, which predates
// the stateless era, and survives a kill.
func TestEverythingProbeFallbackThroughShim(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	eraSession(t, "probe", shimmed(t, "everything", tsEverything(t)), "echo", map[string]any{"message": "hi"})
}
