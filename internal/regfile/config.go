package regfile

// MaxConfigBytes bounds a Claude Code config file mcp-heal reads
// (~/.claude.json, .mcp.json, settings, plugin manifests, credentials).
// A real one is a few KiB to a few MiB (~/.claude.json keeps history per
// project); one over 16 MiB is refused (docs/limits.md).
const MaxConfigBytes = 16 << 20

// ReadConfig is the one way a config file is read, by the readers
// (claudecfg) and by the writer (cfgfile), which both sit above this
// package. A cloned repository decides what its .mcp.json is: a symbolic
// link to /dev/zero or a FIFO would make a plain read grow without end or
// wait forever. A link is followed (dotfile managers link config files
// into place), but only a regular file is read, never blocking, and at
// most MaxConfigBytes of it.
func ReadConfig(path string) ([]byte, error) { return ReadFile(path, MaxConfigBytes) }
