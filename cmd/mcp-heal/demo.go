package main

import (
	"context"
	"errors"
)

// runDemo is a placeholder until its owner lands it.
func runDemo(ctx context.Context, env *Env, args []string) error {
	return errors.New("not implemented yet")
}
