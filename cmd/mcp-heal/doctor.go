package main

import (
	"context"
	"errors"
)

// runDoctor is a placeholder until its owner lands it.
func runDoctor(ctx context.Context, env *Env, args []string) error {
	return errors.New("not implemented yet")
}
