package cli

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// UsageError is a mistake in the command line (the command exits 2): an
// internal package that turns flag values into its options returns one, and
// cmd/mcp-heal prints Msg and Hint the house way.
type UsageError struct{ Msg, Hint string }

func (e *UsageError) Error() string { return e.Msg }

// ByteSize is a flag value in bytes, written as a number with an optional
// KiB/MiB/GiB (or K/M/G, KB/MB/GB: all powers of 1024) suffix.
type ByteSize int

func (b *ByteSize) String() string {
	switch n := int(*b); {
	case n > 0 && n%(1<<30) == 0:
		return strconv.Itoa(n>>30) + "GiB"
	case n > 0 && n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + "MiB"
	case n > 0 && n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + "KiB"
	default:
		return strconv.Itoa(n)
	}
}

// Type names the value in --help.
func (b *ByteSize) Type() string { return "size" }

// Set parses s; sizes run from 1 byte to 4GiB.
func (b *ByteSize) Set(s string) error {
	t, shift := strings.TrimSpace(s), 0
	for _, u := range []struct {
		suffix string
		shift  int
	}{{"GIB", 30}, {"MIB", 20}, {"KIB", 10}, {"GB", 30}, {"MB", 20}, {"KB", 10}, {"G", 30}, {"M", 20}, {"K", 10}, {"B", 0}} {
		if strings.HasSuffix(strings.ToUpper(t), u.suffix) {
			t, shift = t[:len(t)-len(u.suffix)], u.shift
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
	if err != nil || n <= 0 || n > (1<<32)>>shift || n<<shift > math.MaxInt {
		return fmt.Errorf("want a size from 1 byte to 4GiB such as 65536, 512KiB or 64MiB, not %q", s)
	}
	*b = ByteSize(n << shift)
	return nil
}

// EnvValue is a flag naming an environment variable whose value goes to
// *Dest, read when the flag is parsed (e.g. --url-env VAR: a URL's query
// often carries an API key, and argv is readable by every user on the
// machine through ps; the environment is not).
type EnvValue struct {
	Dest   *string
	Getenv func(string) string
	name   string
}

func (f *EnvValue) String() string { return f.name }

// Type names the value in --help.
func (f *EnvValue) Type() string { return "VAR" }

// Set reads the variable v; unset or empty is an error.
func (f *EnvValue) Set(v string) error {
	if !IsEnvName(v) {
		return fmt.Errorf("want the name of an environment variable, not %q", v)
	}
	u := f.Getenv(v)
	if u == "" {
		return fmt.Errorf("environment variable %s is not set", v)
	}
	f.name, *f.Dest = v, u
	return nil
}

// IsEnvName reports whether s is a valid environment variable name.
func IsEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// NewFlags returns a flag set that returns errors instead of printing or
// exiting; ParseFlags prints --help.
func NewFlags(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.SortFlags = false
	return fs
}

// ParseFlags parses args; --help prints "Usage: mcp-heal <synopsis>", the
// description and the flags to stdout and returns pflag.ErrHelp; a parse
// error becomes a *UsageError.
func ParseFlags(stdout io.Writer, fs *pflag.FlagSet, synopsis, description string, args []string) error {
	err := fs.Parse(args)
	if errors.Is(err, pflag.ErrHelp) {
		fmt.Fprintf(stdout, "Usage: mcp-heal %s\n\n%s\n", synopsis, strings.TrimSpace(description))
		if fs.HasAvailableFlags() {
			fmt.Fprintf(stdout, "\nFlags:\n%s", fs.FlagUsages())
		}
		return pflag.ErrHelp
	}
	if err != nil {
		return &UsageError{Msg: err.Error(), Hint: "run 'mcp-heal " + fs.Name() + " --help'"}
	}
	return nil
}
