package main

import (
	"context"
	"errors"
)

// runExampleServer is a placeholder until its owner lands it.
func runExampleServer(ctx context.Context, env *Env, args []string) error {
	return errors.New("not implemented yet")
}
