package main

import (
	"context"
	"errors"
)

// runShim is a placeholder until its owner lands it.
func runShim(ctx context.Context, env *Env, args []string) error {
	return errors.New("not implemented yet")
}
