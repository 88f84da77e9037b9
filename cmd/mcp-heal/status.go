package main

import (
	"context"
	"errors"
)

// runStatus is a placeholder until its owner lands it.
func runStatus(ctx context.Context, env *Env, args []string) error {
	return errors.New("not implemented yet")
}
