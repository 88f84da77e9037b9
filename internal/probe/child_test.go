package probe_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/probe"
)

// TestMain lets the test binary stand in for a broken stdio server
// ($PROBE_TEST_SERVER names how it breaks), so the probe's tests need no
// shell and run on Windows too.
func TestMain(m *testing.M) {
	switch os.Getenv("PROBE_TEST_SERVER") {
	case "":
		os.Exit(m.Run())
	case "exit3":
		fmt.Fprintln(os.Stderr, "starting")
		fmt.Fprintln(os.Stderr, "fatal: cannot open database")
		os.Exit(3)
	case "no-token":
		fmt.Fprintln(os.Stderr, "Error: GITHUB_TOKEN is not set")
		os.Exit(1)
	case "secret":
		fmt.Fprintln(os.Stderr, "auth failed for api_key=sk-live1234567890abcdef")
		os.Exit(1)
	case "exit1":
		os.Exit(1)
	case "junk":
		fmt.Println("Server listening on stdio")
		time.Sleep(30 * time.Second)
	case "hang":
		time.Sleep(30 * time.Second)
	}
	os.Exit(0)
}

// server is a probe target running this test binary as a server that
// breaks the named way (see TestMain).
func server(how string, env ...string) probe.Target {
	e := map[string]string{"PROBE_TEST_SERVER": how}
	for i := 0; i+1 < len(env); i += 2 {
		e[env[i]] = env[i+1]
	}
	return probe.Target{Command: os.Args[0], Env: e}
}
