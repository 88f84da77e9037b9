package main

import (
	"context"
	"errors"
)

// runLogs is a placeholder until its owner lands it.
func runLogs(ctx context.Context, env *Env, args []string) error {
	return errors.New("not implemented yet")
}
