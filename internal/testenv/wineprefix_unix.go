//go:build unix

package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Wine is a Wine installation and a prefix (its C: drive and registry)
// ready to run Go's Windows test binaries.
type Wine struct {
	Bin    string // the wine loader
	Prefix string // WINEPREFIX
}

// Env is the environment a Windows program gets under w: only what Wine
// and the tests need, so nothing from the Unix side (XDG_*, GOFLAGS, ...)
// steers a Windows process.
func (w Wine) Env(extra ...string) []string {
	env := []string{
		"WINEPREFIX=" + w.Prefix,
		"WINEDEBUG=-all",
		// No Mono or Gecko install prompt: the tests need neither.
		"WINEDLLOVERRIDES=mscoree,mshtml=",
		"LANG=C.UTF-8",
	}
	for _, k := range []string{"PATH", "HOME", "USER", "TMPDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return append(env, extra...)
}

// WindowsPath is the path a Windows program under Wine sees for the Unix
// path p: Wine maps the Unix root to drive Z:.
func WindowsPath(p string) string {
	return `Z:` + strings.ReplaceAll(p, "/", `\`)
}

// WinePrefix returns Wine and a prefix prepared once per Wine release and
// stub source in the test cache: wineboot's first run, then the stub
// bcryptprimitives.dll (testdata/wine/processprng.c, built with MinGW) in
// its system32, without which a Go >= 1.22 .exe dies at start on Wine 8.0.
// It fails the test when Wine or MinGW is missing.
func WinePrefix(tb testing.TB) Wine {
	tb.Helper()
	NeedsFull(tb, "Wine and MinGW")
	const hint = " (.ci/run installs them from Debian: apt-get install --no-install-recommends wine wine64 gcc-mingw-w64-x86-64-win32)"
	wine, err := exec.LookPath("wine")
	if err != nil {
		tb.Fatalf("testenv: wine is required for the Windows test run%s: %v", hint, err)
	}
	gcc, err := exec.LookPath("x86_64-w64-mingw32-gcc")
	if err != nil {
		tb.Fatalf("testenv: MinGW's x86_64-w64-mingw32-gcc is required for the Windows test run%s: %v", hint, err)
	}
	version, err := exec.Command(wine, "--version").Output()
	if err != nil {
		tb.Fatalf("testenv: wine --version: %v", err)
	}
	src := filepath.Join(ModuleRoot(tb), "testdata", "wine", "processprng.c")
	code, err := os.ReadFile(src)
	if err != nil {
		tb.Fatalf("testenv: %v", err)
	}
	w := Wine{Bin: wine, Prefix: filepath.Join(CacheDir(), "wine", key([]string{string(version), string(code)}))}
	done := filepath.Join(w.Prefix, ".installed")
	if _, err := os.Stat(done); err == nil {
		return w
	}
	unlock := lock(tb, w.Prefix+".lock")
	defer unlock()
	if _, err := os.Stat(done); err == nil {
		return w
	}
	// A prefix left half-made by an interrupted run starts over.
	if err := os.RemoveAll(w.Prefix); err != nil {
		tb.Fatalf("testenv: %v", err)
	}
	if err := os.MkdirAll(w.Prefix, 0o700); err != nil {
		tb.Fatalf("testenv: %v", err)
	}
	run := func(name string, args ...string) {
		tb.Helper()
		cmd := exec.Command(name, args...)
		cmd.Env = w.Env()
		if out, err := cmd.CombinedOutput(); err != nil {
			tb.Fatalf("testenv: %s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
	}
	run(wine, "wineboot", "--init")
	// wineboot returns before the prefix is written out; the server
	// exits once it is.
	run(filepath.Join(filepath.Dir(wine), "wineserver"), "--wait")
	dll := filepath.Join(w.Prefix, "drive_c", "windows", "system32", "bcryptprimitives.dll")
	run(gcc, "-shared", "-O2", "-s", "-o", dll, src, "-ladvapi32")
	if err := os.WriteFile(done, version, 0o600); err != nil {
		tb.Fatalf("testenv: %v", err)
	}
	return w
}
