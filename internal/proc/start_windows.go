package proc

import (
	"errors"
	"log/slog"
)

// startChild: the shim does not run stdio servers on Windows yet.
func startChild(Config, string, *slog.Logger) (spawned, error) {
	return spawned{}, errors.New("stdio servers are not supported on Windows yet")
}
