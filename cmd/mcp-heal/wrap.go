package main

import (
	"context"
	"errors"
)

// runWrap is a placeholder until its owner lands it.
func runWrap(ctx context.Context, env *Env, args []string) error {
	return errors.New("not implemented yet")
}
