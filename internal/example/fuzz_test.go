package example

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
)

// FuzzHandleLine feeds arbitrary lines to a server: whatever the client
// sends, the server must not panic.
func FuzzHandleLine(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`,
		`{"jsonrpc":"2.0","id":"a","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":"x"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"example://echo/hi"}}`,
		`{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"greet","arguments":{"name":1}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":[1]}}`,
		`{"jsonrpc":"2.0","id":5,"method":"logging/setLevel","params":{"level":null}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":6,"result":{}}`,
		"\xff\xfe",
		`{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{"notifications":null}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		s := &server{
			opts:    Options{Era: EraBoth, Name: "fuzz", Logger: slog.New(slog.DiscardHandler)},
			out:     jsonrpc.NewWriter(io.Discard),
			stderr:  io.Discard,
			exit:    make(chan *ExitError, 1),
			calls:   map[string]context.CancelFunc{},
			subs:    map[string]bool{},
			listens: map[string]listen{},
			values:  map[string]string{},
		}
		ctx, cancel := context.WithCancel(context.Background())
		// Make slow/delayed tool calls and listen streams end at once.
		cancel()
		s.handleLine(ctx, line)
		// Initialized, then again, so method handlers past the
		// initialize check run too.
		s.mu.Lock()
		s.version = "2025-11-25"
		s.mu.Unlock()
		s.handleLine(ctx, line)
		s.wg.Wait()
	})
}
