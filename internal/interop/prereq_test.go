//go:build unix

package interop

import (
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// npmClientPkgs are installed together so the client script (testdata)
// resolves @modelcontextprotocol/sdk through NODE_PATH beside the servers.
var npmClientPkgs = []string{testenv.ServerEverything, testenv.ServerMemory, testenv.TSSDK}

// npmConformancePkgs are the conformance suite and the stdio->HTTP relay.
var npmConformancePkgs = []string{testenv.Conformance, testenv.Supergateway}

// npmConformanceNextPkgs are the newest conformance suite (requirement
// sets, the 2026-07-28 era) and the same relay.
var npmConformanceNextPkgs = []string{testenv.ConformanceNext, testenv.Supergateway}

func TestPrereqs(t *testing.T) {
	fullSuiteOnly(t)
	testenv.NPM(t, npmClientPkgs...)
	testenv.NPM(t, npmConformancePkgs...)
	testenv.NPM(t, npmConformanceNextPkgs...)
	testenv.Node22Bin(t)
	goFixture(t)
}
