package main

import "context"

// runUnwrap undoes wrap; the work is shared with it (runRewrite in wrap.go).
func runUnwrap(ctx context.Context, env *Env, args []string) error {
	return runRewrite(env, args, true)
}
