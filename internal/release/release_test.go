package main

import (
	"bufio"
	"bytes"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/sha256sums"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

var (
	releaseOnce sync.Once
	releaseDir  string
	releaseErr  error
)

// release builds the marketplace once per test binary (six
// cross-compiles and the Windows launcher).
func release(t *testing.T) string {
	t.Helper()
	testenv.NeedsFull(t, "six cross-compiles")
	releaseOnce.Do(func() {
		d, err := os.MkdirTemp("", "mcp-heal-release-")
		if err != nil {
			releaseErr = err
			return
		}
		releaseDir = filepath.Join(d, "marketplace")
		releaseErr = Build(Options{Root: testenv.ModuleRoot(t), Out: releaseDir})
	})
	if releaseErr != nil {
		t.Fatalf("release: %v", releaseErr)
	}
	return releaseDir
}

// TestBinariesArePlatforms is `file` on the release's binaries: each is an
// executable of the platform its name says (ELF, Mach-O, PE with the right
// machine), and SHA256SUMS lists exactly them with their real hashes.
func TestBinariesArePlatforms(t *testing.T) {
	dir := release(t)
	for _, tg := range Targets {
		path := filepath.Join(dir, "bin", tg.Binary())
		var got string
		switch tg.GOOS {
		case "linux":
			f, err := elf.Open(path)
			if err != nil {
				t.Fatalf("%s: not ELF: %v", tg.Binary(), err)
			}
			got = "linux/" + map[elf.Machine]string{elf.EM_X86_64: "amd64", elf.EM_AARCH64: "arm64"}[f.Machine]
			if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
				got += " (not an executable)"
			}
			if f.Section(".interp") != nil {
				got += " (dynamically linked: cgo crept in)"
			}
			f.Close()
		case "darwin":
			f, err := macho.Open(path)
			if err != nil {
				t.Fatalf("%s: not Mach-O: %v", tg.Binary(), err)
			}
			got = "darwin/" + map[macho.Cpu]string{macho.CpuAmd64: "amd64", macho.CpuArm64: "arm64"}[f.Cpu]
			if f.Type != macho.TypeExec {
				got += " (not an executable)"
			}
			f.Close()
		case "windows":
			f, err := pe.Open(path)
			if err != nil {
				t.Fatalf("%s: not PE: %v", tg.Binary(), err)
			}
			got = "windows/" + map[uint16]string{pe.IMAGE_FILE_MACHINE_AMD64: "amd64", pe.IMAGE_FILE_MACHINE_ARM64: "arm64"}[f.Machine]
			f.Close()
		}
		if got != tg.String() {
			t.Errorf("%s is %s, want %s", tg.Binary(), got, tg)
		}
	}

	f, err := os.Open(filepath.Join(dir, "bin", "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	listed := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q is not sha256sum's format", sc.Text())
		}
		got, err := sha256sums.Sum(filepath.Join(dir, "bin", name))
		if err != nil || got != sum {
			t.Errorf("SHA256SUMS says %s for %s, the file's is %s (%v)", sum, name, got, err)
		}
		listed[name] = true
	}
	for _, tg := range Targets {
		if !listed[tg.Binary()] {
			t.Errorf("SHA256SUMS lacks %s", tg.Binary())
		}
	}
	if len(listed) != len(Targets) {
		t.Errorf("SHA256SUMS lists %d files, want %d", len(listed), len(Targets))
	}
}

// TestReleaseIsReproducible: building again from the same source gives the
// same bytes (what lets anyone check a published binary against the
// source).
func TestReleaseIsReproducible(t *testing.T) {
	dir := release(t)
	again := filepath.Join(testenv.TempDir(t), "again")
	tg := Target{"darwin", "arm64"}
	if err := Build(Options{Root: testenv.ModuleRoot(t), Out: again, Targets: []Target{tg}}); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(filepath.Join(dir, "bin", tg.Binary()))
	b, _ := os.ReadFile(filepath.Join(again, "bin", tg.Binary()))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatalf("two builds of %s differ (%d and %d bytes)", tg, len(a), len(b))
	}
}

// TestReleaseLayout: the marketplace holds the plugin as Claude Code loads
// it, the launcher and the Bash tool's bin/mcp-heal are executable, and
// there is no go.mod nor build.sh (so the launcher never tries to build
// from source).
func TestReleaseLayout(t *testing.T) {
	dir := release(t)
	for _, f := range pluginFiles {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("release lacks %s: %v", f, err)
		}
	}
	// The Windows launcher: a PE for amd64 (arm64 Windows runs it too),
	// where hooks.json's plugin/mcp-heal resolves on Windows.
	for _, l := range []string{WindowsLauncher, WindowsToolsLauncher} {
		if f, err := pe.Open(filepath.Join(dir, l)); err != nil {
			t.Errorf("%s: not PE: %v", l, err)
		} else {
			if f.Machine != pe.IMAGE_FILE_MACHINE_AMD64 {
				t.Errorf("%s: machine %#x, want amd64", l, f.Machine)
			}
			f.Close()
		}
	}
	for _, f := range []string{"plugin/mcp-heal", "bin/mcp-heal"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Mode()&0o111 == 0 {
			t.Errorf("%s not executable: %v %v", f, st, err)
		}
	}
	for _, f := range []string{"go.mod", "plugin/build.sh"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("release holds %s: its launcher would build from source", f)
		}
	}
	if err := Build(Options{Root: testenv.ModuleRoot(t), Out: dir}); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("release into a non-empty directory: got %v, want an error", err)
	}
}
