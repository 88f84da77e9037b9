package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

func main() {
	out := flag.String("o", "", "the directory to create the marketplace in (required)")
	version := flag.String("version", "", "the version to stamp (default: .claude-plugin/plugin.json's)")
	only := flag.String("targets", "", "comma-separated os/arch list to build (default: every release target)")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "Usage: go run ./internal/release -o DIR [-version V]\n\nBuilds the plugin with binaries for %s\nand their SHA256SUMS into DIR, a ready Claude Code marketplace.\n\n", targetList())
		flag.PrintDefaults()
	}
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	targets, err := parseTargets(*only)
	if err != nil {
		fmt.Fprintf(os.Stderr, "release: error: %v\n", err)
		os.Exit(2)
	}
	root, err := moduleRoot()
	if err == nil {
		err = Build(Options{Root: root, Out: *out, Version: *version, Targets: targets, Log: os.Stderr})
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "release: error: %v\n", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "release: %s is ready: claude plugin marketplace add %s\n", *out, *out)
}

func targetList() string {
	var s []string
	for _, t := range Targets {
		s = append(s, t.String())
	}
	return strings.Join(s, ", ")
}

// moduleRoot is the directory of the main module's go.mod.
func moduleRoot() (string, error) {
	b, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(b))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("run it inside the mcp-heal repository")
	}
	return filepath.Dir(gomod), nil
}

// parseTargets reads "linux/amd64,darwin/arm64"; empty means every target.
func parseTargets(s string) ([]Target, error) {
	if s == "" {
		return nil, nil
	}
	var out []Target
	for _, f := range strings.Split(s, ",") {
		goos, goarch, ok := strings.Cut(strings.TrimSpace(f), "/")
		if !ok || goos == "" || goarch == "" {
			return nil, fmt.Errorf("target %q is not os/arch", f)
		}
		out = append(out, Target{goos, goarch})
	}
	return out, nil
}
