package proc

import (
	"errors"
	"log/slog"

	"github.com/mcp-heal/mcp-heal/internal/guardian"
)

// startChild: the shim does not run stdio servers on Windows yet.
func startChild(Config, string, *slog.Logger, *guardian.Guardian) (spawned, error) {
	return spawned{}, errors.New("stdio servers are not supported on Windows yet")
}

// StartUnder: kept servers need the guardian, which Windows lacks.
func StartUnder(Config, *guardian.Guardian) (*Process, error) {
	return nil, guardian.ErrUnsupported
}

// Adopt is never reached on Windows: guardian.Attach, which hands out the
// child to adopt, always fails there.
func Adopt(Config, *guardian.Child, []byte) *Process { return nil }
