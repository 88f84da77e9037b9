package claudecfg

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	dirs "github.com/mcp-heal/mcp-heal/internal/paths"
)

// ErrTemporaryBuild: the running mcp-heal is a `go run` build, which is
// deleted when it exits, so wrapped entries cannot point at it.
var ErrTemporaryBuild = errors.New("this mcp-heal is a temporary 'go run' build, which wrapped servers cannot point at")

// DefaultShim is the binary wrapped entries run: the stable copy the
// plugin installs (paths.StableBinary, which survives plugin updates) when
// present, else the running binary.
func DefaultShim() (string, error) {
	stable := dirs.Current().StableBinary
	if st, err := os.Stat(stable); err == nil && !st.IsDir() {
		return stable, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the mcp-heal binary: %w", err)
	}
	if strings.Contains(exe, string(filepath.Separator)+"go-build") {
		return "", ErrTemporaryBuild
	}
	return exe, nil
}
