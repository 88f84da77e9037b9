package main

import (
	"context"
	"errors"
)

// runUnwrap is a placeholder until its owner lands it.
func runUnwrap(ctx context.Context, env *Env, args []string) error {
	return errors.New("not implemented yet")
}
