package main

import (
	"context"
	"fmt"
	"runtime/debug"
)

// version is set by -ldflags "-X main.version=..." in releases.
var version = "0.1.0-dev"

func versionString() string {
	v := version
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += "+" + s.Value[:12]
			}
		}
	}
	return v
}

func runVersion(ctx context.Context, env *Env, args []string) error {
	fs := newFlags("version")
	if err := parseFlags(env, fs, "version", "Print the version of mcp-heal.", args); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "mcp-heal %s\n", versionString())
	return nil
}
