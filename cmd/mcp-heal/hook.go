package main

import (
	"context"
	"errors"
)

// runHook is a placeholder until its owner lands it.
func runHook(ctx context.Context, env *Env, args []string) error {
	return errors.New("not implemented yet")
}
