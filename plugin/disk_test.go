//go:build linux

package plugin_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// brokenDisk says how the file system holding HOME (the plugin data dir,
// the stable copy, the state dir) is broken: a real tmpfs in a mount
// namespace of the launcher's own, made read-only (EROFS) or filled until
// neither a block nor an inode is left (ENOSPC).
type brokenDisk string

const (
	readOnly brokenDisk = "read-only"
	diskFull brokenDisk = "full"
)

// setup is the shell that mounts the tmpfs on $HOME, lays out what an
// earlier session left (the data dir's bin/, an attention marker, so that
// PreToolUse goes past its fast path), breaks the file system and runs the
// launcher. `true >` rather than `: >`: a failed redirection of the special
// builtin `:` would end this script.
const setup = `set -e
mount -t tmpfs -o size=256k,nr_inodes=64,mode=0700 tmpfs "$HOME"
mkdir -p -m 0700 "$HOME/plugin-data/bin" "$HOME/.local/state/mcp-heal/attention"
true >"$HOME/.local/state/mcp-heal/attention/shim-1"
set +e
case $DISK in
read-only) mount -o remount,ro "$HOME" ;;
full)
	dd if=/dev/zero of="$HOME/fill" bs=4k 2>/dev/null
	i=0
	while true 2>/dev/null >"$HOME/f$i"; do i=$((i + 1)); done
	if true 2>/dev/null >"$HOME/one-more" || printf x 2>/dev/null >>"$HOME/fill"; then
		echo "the tmpfs is not full" >&2
		exit 99
	fi
	;;
esac
exec "$@"
`

// runOnDisk runs the launcher of the plugin at root with args, as Claude
// Code runs a hook, on a HOME that is a broken disk, and returns its exit
// code and output. path is its PATH.
func runOnDisk(t *testing.T, disk brokenDisk, root, path, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Fatalf("this test needs unshare (util-linux) for a mount namespace: %v", err)
	}
	home := t.TempDir()
	ns := []string{"-m"}
	if os.Geteuid() != 0 {
		ns = []string{"-r", "-m"} // a user namespace, where mounting a tmpfs is allowed
	}
	cmd := exec.Command(unshare, append(append(ns, "sh", "-c", setup, "setup", filepath.Join(root, "plugin", "mcp-heal")), args...)...)
	cmd.Env = append(hookEnv(withPath(claudeEnv(home), path), root, home), "DISK="+string(disk))
	cmd.Dir = "/"
	cmd.Stdin = strings.NewReader(stdin)
	code, stdout, stderr = testenv.RunCode(t, cmd)
	if code == 99 || strings.Contains(stderr, "unshare:") || strings.Contains(stderr, "mount:") {
		t.Fatalf("setting up the %s disk: %s", disk, stderr)
	}
	return code, stdout, stderr
}

// TestLauncherExitsZeroOnBrokenDisk is issue 16 item 4: with the data dir
// read-only or full (a real tmpfs, EROFS and ENOSPC), every hook and the
// command exit 0: exit 2 would block the MCP call (PreToolUse, with an
// attention marker present) or feed an error to the model. Before, the
// first hook of a released plugin ended the shell with status 2 on the
// failed `: >"$marker"`. A released plugin whose cache cannot hold the
// checked copy checks the bundled binary where it is, so the hooks still
// answer.
func TestLauncherExitsZeroOnBrokenDisk(t *testing.T) {
	unixOnly(t, shLauncher)
	root, _ := releasedPlugin(t)
	runs := []struct {
		name, stdin string
		args        []string
	}{
		{"SessionStart", payload(t, "SessionStart.json"), []string{"hook", "SessionStart"}},
		{"PreToolUse", payload(t, "PreToolUse.mcp.json"), []string{"hook", "PreToolUse"}},
		{"PostToolUseFailure", payload(t, "PostToolUseFailure.stdio-not-connected.json"), []string{"hook", "PostToolUseFailure"}},
		{"/mcp-heal", "", []string{"command", "status"}},
	}
	for _, disk := range []brokenDisk{readOnly, diskFull} {
		for _, r := range runs {
			t.Run(string(disk)+"/"+r.name, func(t *testing.T) {
				code, out, errOut := runOnDisk(t, disk, root, "/usr/bin:/bin", r.stdin, r.args...) // no Go
				if code != 0 {
					t.Fatalf("exit %d, want 0\nstdout: %s\nstderr: %s", code, out, errOut)
				}
				if r.args[0] == "hook" {
					checkReply(t, r.name, out)
				}
				if r.name == "PostToolUseFailure" && !strings.Contains(out, "/mcp reconnect tiny") {
					t.Errorf("the hook did not answer (the checked bundled binary should run): stdout %q stderr %q", out, errOut)
				}
			})
		}
	}
}

// TestLauncherSaysOncePerSessionOnReadOnlyDisk: a source checkout whose
// data dir cannot be written cannot build its binary: SessionStart says so
// (the marker that would make it "once per version" cannot be written, so
// once a session), the other hooks stay silent, and all exit 0.
func TestLauncherSaysOncePerSessionOnReadOnlyDisk(t *testing.T) {
	unixOnly(t, shLauncher)
	root := testenv.ModuleRoot(t)
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("this test needs go on PATH: %v", err)
	}
	path := filepath.Dir(goBin) + ":/usr/bin:/bin"
	code, out, errOut := runOnDisk(t, readOnly, root, path, payload(t, "SessionStart.json"), "hook", "SessionStart")
	if code != 0 || !strings.Contains(out, "cannot build its binary") {
		t.Fatalf("SessionStart: exit %d stdout %q stderr %q, want exit 0 and one line saying why", code, out, errOut)
	}
	code, out, errOut = runOnDisk(t, readOnly, root, path, payload(t, "PostToolUseFailure.stdio-not-connected.json"), "hook", "PostToolUseFailure")
	if code != 0 || out != "" {
		t.Fatalf("PostToolUseFailure: exit %d stdout %q stderr %q, want exit 0 and nothing", code, out, errOut)
	}
}
