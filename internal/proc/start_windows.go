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

// StartUnder: the shim does not run stdio servers on Windows yet.
func StartUnder(Config, *guardian.Guardian) (*Process, error) {
	return nil, errors.New("stdio servers are not supported on Windows yet")
}

// Adopt is never called on Windows (there are no kept servers).
func Adopt(cfg Config, _ *guardian.Child, _ []byte) *Process { return nil }
