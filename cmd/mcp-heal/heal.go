package main

import (
	"context"
	"errors"
)

// runHeal is a placeholder until its owner lands it.
func runHeal(ctx context.Context, env *Env, args []string) error {
	return errors.New("not implemented yet")
}
