// Command gosdk-server is a go-sdk v1.8.0 MCP server on stdio for the
// end-to-end suite (TestScenario15GoSDKEra): it answers server/discover
// and serves the 2026-07-28 era as the SDK does, and initialize for the
// handshake era. Every message it reads is appended to the file -log
// names as "<pid> read: <json>", so a test can tell which era the client
// negotiated with each process.
//
// Tools: echo (readOnlyHint; text, delay_ms) answers "<text> pid <pid>";
// counter_increment (no annotations; delay_ms) adds one to the number in
// the file -counter names, after the delay, and answers the new value.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoIn struct {
	Text    string `json:"text,omitempty"`
	DelayMS int    `json:"delay_ms,omitempty"`
}

type counterIn struct {
	DelayMS int `json:"delay_ms,omitempty"`
}

// pidWriter prefixes each write (one message, LoggingTransport writes it
// whole) with the pid, and writes it to the log under a lock.
type pidWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *pidWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !strings.HasPrefix(string(b), "read: ") {
		return len(b), nil
	}
	if _, err := fmt.Fprintf(p.w, "%d %s", os.Getpid(), b); err != nil {
		return 0, err
	}
	return len(b), nil
}

func wait(ctx context.Context, ms int) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Duration(ms) * time.Millisecond):
		return nil
	}
}

func main() {
	logPath := flag.String("log", "", "append every message read to this file")
	counter := flag.String("counter", "", "the counter_increment state file")
	flag.Parse()
	srv := mcp.NewServer(&mcp.Implementation{Name: "gosdk-e2e", Version: "1.0.0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echoes text", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			if err := wait(ctx, in.DelayMS); err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s pid %d", in.Text, os.Getpid())}}}, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "counter_increment", Description: "Adds one to a counter"},
		func(ctx context.Context, _ *mcp.CallToolRequest, in counterIn) (*mcp.CallToolResult, any, error) {
			if err := wait(ctx, in.DelayMS); err != nil {
				return nil, nil, err
			}
			b, _ := os.ReadFile(*counter)
			n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			n++
			if err := os.WriteFile(*counter, []byte(strconv.Itoa(n)+"\n"), 0o600); err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.Itoa(n)}}}, nil, nil
		})
	var t mcp.Transport = &mcp.StdioTransport{}
	if *logPath != "" {
		f, err := os.OpenFile(*logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		t = &mcp.LoggingTransport{Transport: t, Writer: &pidWriter{w: f}}
	}
	if err := srv.Run(context.Background(), t); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
