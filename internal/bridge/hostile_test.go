//go:build unix

package bridge

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// postOnly is a remote that answers every method but POST with 405 and
// hands serve the body of each POST.
func postOnly(serve func(w http.ResponseWriter, body []byte)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(r.Body)
		serve(w, body)
	}
}

// hostileRemote is a Streamable HTTP server whose tools answer with what
// no well-behaved server sends (arguments.mb megabytes of it):
//
//	bigjson  an application/json response that long
//	bigjsoncl the same, with its Content-Length
//	bigsse   an SSE response whose one data line is that long
//	bigfield an SSE response with a comment and an event name that long,
//	         then the real response ("ok")
func hostileRemote(t *testing.T) *httptest.Server {
	chunk := bytes.Repeat([]byte("x"), 1<<20)
	srv := httptest.NewServer(postOnly(func(w http.ResponseWriter, body []byte) {
		m, err := jsonrpc.Peek(body)
		if err != nil || m.Kind != jsonrpc.KindRequest {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		bw := bufio.NewWriterSize(w, 1<<20)
		defer bw.Flush()
		if m.Method == "initialize" {
			w.Header().Set("Content-Type", "application/json")
			bw.Write(jsonrpc.ResultReply(m.ID, []byte(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"hostile","version":"1"}}`)))
			return
		}
		mb := int(gjson.GetBytes(body, "params.arguments.mb").Int())
		big := func(prefix string) {
			bw.WriteString(prefix)
			for range mb {
				if _, err := bw.Write(chunk); err != nil {
					return // the bridge hung up
				}
			}
		}
		switch gjson.GetBytes(body, "params.name").String() {
		case "bigjson":
			w.Header().Set("Content-Type", "application/json")
			big(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, m.ID))
			bw.WriteString(`"}]}}`)
		case "bigjsoncl":
			// The same, with a Content-Length saying so.
			w.Header().Set("Content-Type", "application/json")
			prefix := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, m.ID)
			w.Header().Set("Content-Length", fmt.Sprint(len(prefix)+mb<<20+len(`"}]}}`)))
			big(prefix)
			bw.WriteString(`"}]}}`)
		case "bigsse":
			w.Header().Set("Content-Type", "text/event-stream")
			big(fmt.Sprintf(`data: {"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, m.ID))
			bw.WriteString("\"}]}}\n\n")
		case "bigfield":
			w.Header().Set("Content-Type", "text/event-stream")
			big(": ")
			big("\nevent: ")
			bw.WriteString("\n\nid: 1\ndata: ")
			bw.Write(jsonrpc.ResultReply(m.ID, []byte(`{"content":[{"type":"text","text":"ok"}]}`)))
			bw.WriteString("\n\n")
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// peakRSS is process pid's peak resident set (VmHWM) in MiB.
func peakRSS(t *testing.T, pid int) int {
	t.Helper()
	kb, err := testenv.StatusKB(pid, "VmHWM")
	if err != nil {
		t.Fatal(err)
	}
	return kb >> 10
}

// TestHostileRemoteMemory: the real shim bridging a server that sends a
// 1 GB JSON body, a 1 GB SSE data line and 300 MB SSE fields keeps its
// peak RSS under 64 MB (issue 9's target), answers the calls whose
// responses it had to drop with a clear error, and keeps serving.
func TestHostileRemoteMemory(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the peak RSS is read from /proc (Linux only)")
	}
	testenv.NeedsFull(t, "a few seconds to move gigabytes through the bridge")
	srv := hostileRemote(t)
	// An 8 MiB ceiling: an endless message is held up to the ceiling
	// before it can be told from a legitimate one.
	sh := startShim(t, "--name", "hostile", "--max-message", "8MiB", "--url", srv.URL+"/mcp")
	if _, err := sh.ok("initialize", initParams, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	sh.write([]byte(initialized))
	t.Logf("peak RSS after initialize: %d MiB", peakRSS(t, sh.cmd.Process.Pid))
	const maxRSS = 64
	for _, tc := range []struct {
		tool string
		mb   int
		ok   bool // the call succeeds (else: a message-too-large error)
	}{
		{"bigjson", 1024, false},
		{"bigsse", 1024, false},
		{"bigfield", 300, true},
		{"bigjson", 4, true}, // within the ceiling: passes whole
		{"bigsse", 4, true},
	} {
		t.Run(fmt.Sprintf("%s %d MB", tc.tool, tc.mb), func(t *testing.T) {
			r, err := sh.call("tools/call", fmt.Sprintf(`{"name":%q,"arguments":{"mb":%d}}`, tc.tool, tc.mb), 120*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if tc.ok {
				want := "ok"
				if tc.tool != "bigfield" {
					want = strings.Repeat("x", tc.mb<<20)
				}
				if gjson.GetBytes(r, "result.content.0.text").Str != want {
					t.Errorf("got %.300s, want %.20s... (%d bytes)", r, want, len(want))
				}
			} else if gjson.GetBytes(r, "error.data.reason").Str != "message-too-large" {
				t.Errorf("got %.300s, want a message-too-large error", r)
			}
			if got := peakRSS(t, sh.cmd.Process.Pid); got >= maxRSS {
				t.Errorf("peak RSS %d MiB after %s, want < %d", got, tc.tool, maxRSS)
			}
		})
	}
	t.Logf("peak RSS of the shim: %d MiB", peakRSS(t, sh.cmd.Process.Pid))
}

// TestHostileRemoteCeiling: at the default ceiling and at 256 MiB, a 1 GB
// JSON body (with and without a Content-Length) and a 1 GB SSE data line
// each fail their call with message-too-large, and the real shim's peak
// RSS stays within the ceiling plus 64 MiB (issue 16: 650-660 MiB at
// 256 MiB, the doubling buffer's two copies and its garbage).
func TestHostileRemoteCeiling(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the peak RSS is read from /proc (Linux only)")
	}
	testenv.NeedsFull(t, "a few seconds to move gigabytes through the bridge")
	srv := hostileRemote(t)
	for _, ceiling := range []int{jsonrpc.DefaultMaxMessage, 256 << 20} {
		t.Run(fmt.Sprintf("ceiling %d KiB", ceiling>>10), func(t *testing.T) {
			args := []string{"--name", "hostile", "--url", srv.URL + "/mcp"}
			if ceiling != jsonrpc.DefaultMaxMessage {
				args = append(args, "--max-message", fmt.Sprint(ceiling))
			}
			sh := startShim(t, args...)
			if _, err := sh.ok("initialize", initParams, 30*time.Second); err != nil {
				t.Fatal(err)
			}
			sh.write([]byte(initialized))
			bound := ceiling>>20 + 64
			for _, tool := range []string{"bigjsoncl", "bigjson", "bigsse", "bigjson", "bigsse"} {
				r, err := sh.call("tools/call", fmt.Sprintf(`{"name":%q,"arguments":{"mb":1024}}`, tool), 120*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				if gjson.GetBytes(r, "error.data.reason").Str != "message-too-large" {
					t.Errorf("%s: got %.300s, want a message-too-large error", tool, r)
				}
				got := peakRSS(t, sh.cmd.Process.Pid)
				t.Logf("%s, 1 GB: peak RSS %d MiB (bound %d MiB)", tool, got, bound)
				if got > bound {
					t.Errorf("peak RSS %d MiB after a 1 GB %s, want at most the ceiling + 64 MiB = %d MiB", got, tool, bound)
				}
			}
			r, err := sh.call("tools/call", `{"name":"bigjson","arguments":{"mb":1}}`, 60*time.Second)
			if err != nil || len(gjson.GetBytes(r, "result.content.0.text").Str) != 1<<20 {
				t.Errorf("a 1 MiB answer after them: got %.200s, %v", r, err)
			}
		})
	}
}

// A server that sends thousands of SSE events that are not JSON gets a
// few log lines, not one each (the shim's log goes to Claude Code's).
func TestJunkEventsRateLimited(t *testing.T) {
	srv := httptest.NewServer(postOnly(func(w http.ResponseWriter, body []byte) {
		m, _ := jsonrpc.Peek(body)
		w.Header().Set("Content-Type", "text/event-stream")
		for range 5000 {
			fmt.Fprint(w, "data: not json\n\n")
		}
		fmt.Fprintf(w, "data: %s\n\n", jsonrpc.ResultReply(m.ID, []byte(`{}`)))
	}))
	defer srv.Close()
	var logs lockedBuffer
	d := newDialer(t, Options{URL: srv.URL + "/mcp", NoServerStream: true, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	cl := dialClient(t, d)
	if _, err := cl.callID([]byte("1"), "initialize", initParams, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(logs.String(), "not JSON"); n == 0 || n > 15 {
		t.Errorf("%d log lines for 5000 junk events, want 1 to 15", n)
	}
}
