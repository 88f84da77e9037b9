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

func TestPrereqs(t *testing.T) {
	testenv.NPM(t, npmClientPkgs...)
	testenv.NPM(t, npmConformancePkgs...)
	testenv.Node22Bin(t)
	testenv.GoInstall(t, testenv.GoSDKEverything)
}
