// Package healthy answers `mcp-heal hook PreToolUse` on its healthy path
// (an empty attention directory: nothing to do, state.AttentionDir) before
// Go initialises the rest of the binary (issue 25).
//
// Go runs a package's initialiser after those of everything it imports,
// and otherwise in the order of import paths: while a package the hook
// needs waits, every ready package whose path sorts before it goes first.
// internal/hook needs path/filepath, reflect, log/slog, gjson and adrg/xdg,
// so its initialiser ran after 78 others (crypto's, compress, encoding/json
// among them). This package imports only what os needs, so its initialiser
// runs right after os's, after 19 (a minimal Go program's main runs after
// 12); the binary then exits as the plugin's launcher does on this path
// (plugin/mcp-heal), without reading stdin.
//
// It has no path rule of its own (adrg/xdg, in internal/paths, is the
// one rule, and its imports come late): the launcher tells it the
// attention directory in MCP_HEAL_ATTENTION, from its record of what
// `mcp-heal paths` printed, as it runs the binary for PreToolUse. Without
// it, internal/hook decides as before. TestHealthyImportsEarly keeps its
// imports early.
package healthy

import (
	"io"
	"os"
	"runtime"
	"syscall"
)

func init() {
	if len(os.Args) != 3 || os.Args[1] != "hook" || os.Args[2] != "PreToolUse" {
		return
	}
	getenv := os.Getenv
	if env, ok := procEnviron(); ok {
		getenv = env.get
	}
	if Empty(getenv("MCP_HEAL_ATTENTION")) {
		os.Exit(0)
	}
}

// environ is this process's environment as /proc/self/environ gives it:
// NUL-terminated NAME=value entries.
type environ string

// procEnviron reads /proc/self/environ (Linux; false elsewhere, or when
// the environment is larger than it reads). The first os.Getenv builds a
// map of the whole environment, which cost this path as much as all of its
// own work (issue 25); the two variables it needs are found by a scan.
func procEnviron() (environ, bool) {
	if runtime.GOOS != "linux" {
		return "", false
	}
	fd, err := syscall.Open("/proc/self/environ", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return "", false
	}
	defer syscall.Close(fd)
	buf := make([]byte, 32<<10)
	n := 0
	for n < len(buf) {
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return "", false
		}
		if m == 0 {
			return environ(buf[:n]), true
		}
		n += m
	}
	return "", false
}

// get is the value of the first entry named name, as os.Getenv gives it.
func (e environ) get(name string) string {
	for len(e) > 0 {
		end := 0
		for end < len(e) && e[end] != 0 {
			end++
		}
		if kv := e[:end]; len(kv) > len(name) && kv[len(name)] == '=' && string(kv[:len(name)]) == name {
			return string(kv[len(name)+1:])
		}
		if end < len(e) {
			end++
		}
		e = e[end:]
	}
	return ""
}

// Empty reports whether dir is known to hold nothing: it exists and is
// empty, or it does not exist (the launcher's `"$attention"/*` matches
// nothing then too). "" or a directory that cannot be read is not known
// to be empty.
func Empty(dir string) bool {
	if dir == "" {
		return false
	}
	f, err := os.Open(dir)
	if err != nil {
		return os.IsNotExist(err)
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	return len(names) == 0 && err == io.EOF
}
