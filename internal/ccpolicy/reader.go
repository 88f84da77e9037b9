package ccpolicy

import (
	"io/fs"
	"os"

	"github.com/mcp-heal/mcp-heal/internal/jsoncheck"
	"github.com/mcp-heal/mcp-heal/internal/regfile"
)

// Reader is every file ccpolicy reads: the config files, whether a file
// is there (a managed-mcp.json, a .git), and a folder's names (the
// managed-settings.d drop-ins). Options.Files injects it, so that a caller
// can cache and report what it reads (claudecfg.Discover) and nothing in
// ccpolicy reaches the file system another way (internal/arch checks it).
// Resolving the project folder (getcwd, symbolic links) is not a read.
type Reader interface {
	// Config is a config file's bytes, and whether it exists and is valid
	// JSON.
	Config(path string) ([]byte, bool)
	// Stat is os.Stat: path's file info, following symbolic links.
	Stat(path string) (fs.FileInfo, error)
	// ReadDir is os.ReadDir: a folder's entries, sorted by name.
	ReadDir(dir string) ([]fs.DirEntry, error)
}

// ConfigReader is a Reader whose config files come from the function (a
// caller's cache); Stat and ReadDir are the system's.
type ConfigReader func(path string) ([]byte, bool)

// Config calls f.
func (f ConfigReader) Config(path string) ([]byte, bool) { return f(path) }

// Stat is os.Stat.
func (ConfigReader) Stat(path string) (fs.FileInfo, error) { return os.Stat(path) }

// ReadDir is os.ReadDir.
func (ConfigReader) ReadDir(dir string) ([]fs.DirEntry, error) { return os.ReadDir(dir) }

// OS is the plain Reader: a config file is a regular file (never a FIFO
// or a device), at most regfile.MaxConfigBytes (the one capped read),
// valid JSON.
var OS Reader = ConfigReader(func(path string) ([]byte, bool) {
	b, err := regfile.ReadConfig(path)
	return b, err == nil && jsoncheck.Valid(b) == nil
})
