//go:build linux

package cfgfile

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/claudecfg/cfgtest"
)

// fullDiskEnv names the directory, a full tmpfs, when the test runs inside
// its own mount namespace.
const fullDiskEnv = "MCP_HEAL_TEST_FULL_DISK"

// TestCommitFullDisk (issue 24 item 5): the disk fills between the backup
// (in the state dir, which has room) and the new config (beside the
// target, on a real tmpfs in a mount namespace of the test's own, filled
// to its last block). Commit fails with the disk's error, the config
// keeps its bytes, and nothing is left beside it: no temporary copy of the
// config, no lock. It used to panic in writeTemp (its named result set to
// nil, then used to remove the copy), leaving the copy behind.
func TestCommitFullDisk(t *testing.T) {
	old := []byte(`{"mcpServers":{"a":{"command":"x"}}}`)
	if dir := os.Getenv(fullDiskEnv); dir != "" {
		cfgtest.StateHome(t)
		path := filepath.Join(dir, ".claude.json")
		_, err := Commit(path, old, bytes.Repeat([]byte(" "), 64<<10))
		if err == nil || !strings.Contains(err.Error(), "no space left on device") {
			t.Fatalf("Commit on a full disk: %v, want the disk's error", err)
		}
		if b, _ := os.ReadFile(path); !bytes.Equal(b, old) {
			t.Errorf("the config now holds %q", b)
		}
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if e.Name() != ".claude.json" && e.Name() != "fill" {
				t.Errorf("left beside the config: %s", e.Name())
			}
		}
		return
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Fatalf("this test needs unshare (util-linux) for a mount namespace: %v", err)
	}
	ns := []string{"-m"}
	if os.Geteuid() != 0 {
		ns = []string{"-r", "-m"} // a user namespace, where mounting a tmpfs is allowed
	}
	dir := t.TempDir()
	const script = `set -e
mount -t tmpfs -o size=64k,nr_inodes=32,mode=0700 tmpfs "$` + fullDiskEnv + `"
printf '%s' "$OLD" >"$` + fullDiskEnv + `/.claude.json"
dd if=/dev/zero of="$` + fullDiskEnv + `/fill" bs=4k 2>/dev/null || true
exec "$@"`
	cmd := exec.Command(unshare, append(ns, "sh", "-c", script, "sh", os.Args[0], "-test.run=^TestCommitFullDisk$", "-test.v", "-test.count=1")...)
	cmd.Env = append(os.Environ(), fullDiskEnv+"="+dir, "OLD="+string(old))
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestCommitFullDisk") {
		t.Fatalf("in the mount namespace: %v\n%s", err, out)
	}
}
