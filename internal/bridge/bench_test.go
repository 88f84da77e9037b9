//go:build unix

package bridge

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
)

// rawClient is the floor the bridge is measured against: a plain
// net/http client POSTing the same bytes to the same server and reading
// the JSON or SSE answer, with no framing, routing or recovery.
type rawClient struct {
	c        *http.Client
	url      string
	sid, ver string
}

func (r *rawClient) post(body []byte) ([]byte, error) {
	req, err := http.NewRequest(http.MethodPost, r.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if r.sid != "" {
		req.Header.Set(hSessionID, r.sid)
	}
	if r.ver != "" {
		req.Header.Set(hProtocol, r.ver)
	}
	resp, err := r.c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if s := resp.Header.Get(hSessionID); s != "" && r.sid == "" {
		r.sid = s
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ct != "text/event-stream" {
		return io.ReadAll(resp.Body)
	}
	sr := newSSEReader(resp.Body, jsonrpc.DefaultMaxMessage)
	for {
		ev, err := sr.Next()
		if err != nil {
			return nil, err
		}
		if len(ev.Data) > 0 && gjson.GetBytes(ev.Data, "id").Exists() && !gjson.GetBytes(ev.Data, "method").Exists() {
			return ev.Data, nil
		}
	}
}

func (r *rawClient) init(t testing.TB) {
	res, err := r.post(jsonrpc.NewRequest([]byte("0"), "initialize", []byte(initParams)))
	if err != nil {
		t.Fatal(err)
	}
	r.ver = gjson.GetBytes(res, "result.protocolVersion").Str
	if _, err := r.post([]byte(initialized)); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkRoundTrip: one tools/call round trip to the Go SDK fixture over
// Streamable HTTP on loopback, three ways, interleaved in chunks so that
// they share the machine's noise: a direct HTTP client (the floor), the
// bridge's Conn (what `shim --url` adds on the HTTP side), and the whole
// path through the `mcp-heal shim --url` binary over stdio (what Claude
// Code sees). Reported: µs per call and the ratios to direct.
func BenchmarkRoundTrip(b *testing.B) {
	for _, kind := range []string{goSDKStateful, everythingHTTP} {
		b.Run(kind, func(b *testing.B) { benchRoundTrip(b, kind) })
	}
}

func benchRoundTrip(b *testing.B, kind string) {
	srv := newServer(b, kind)
	tl := echoTool(kind)
	benchCall := fmt.Sprintf(`{"name":%q,"arguments":{%q:"ping"}}`, tl.name, tl.arg)
	raw := &rawClient{c: &http.Client{}, url: srv.URL}
	raw.init(b)
	cl := dialClient(b, newDialer(b, Options{URL: srv.URL}))
	cl.initialize()
	sh := startShim(b, "--name", "bench", "--url", srv.URL)
	sh.initialize()

	ways := []struct {
		name string
		call func(i int) error
	}{
		{"direct", func(i int) error {
			r, err := raw.post(jsonrpc.NewRequest(fmt.Appendf(nil, "%d", i+1), "tools/call", []byte(benchCall)))
			if err == nil && !gjson.GetBytes(r, "result").Exists() {
				err = fmt.Errorf("bad response %s", r)
			}
			return err
		}},
		{"bridge", func(int) error {
			r, err := cl.call("tools/call", benchCall)
			if err == nil && !gjson.GetBytes(r, "result").Exists() {
				err = fmt.Errorf("bad response %s", r)
			}
			return err
		}},
		{"shim", func(int) error {
			_, err := sh.ok("tools/call", benchCall, 30*time.Second)
			return err
		}},
	}
	// Warm up every path (connections, JIT of nothing, caches).
	for _, w := range ways {
		for i := 0; i < 50; i++ {
			if err := w.call(i); err != nil {
				b.Fatal(err)
			}
		}
	}
	const chunk = 50
	samples := make([][]time.Duration, len(ways))
	b.ResetTimer()
	for done := 0; done < b.N; done += chunk {
		n := min(chunk, b.N-done)
		for k, w := range ways {
			start := time.Now()
			for i := 0; i < n; i++ {
				if err := w.call(done + i); err != nil {
					b.Fatal(err)
				}
			}
			samples[k] = append(samples[k], time.Since(start)/time.Duration(n))
		}
	}
	b.StopTimer()
	med := make([]float64, len(ways))
	for k := range ways {
		s := samples[k]
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		med[k] = float64(s[len(s)/2].Nanoseconds()) / 1e3
		b.ReportMetric(med[k], ways[k].name+"-µs/call")
	}
	b.ReportMetric(med[1]/med[0], "bridge/direct")
	b.ReportMetric(med[2]/med[0], "shim/direct")
}

// BenchmarkRecovery: the time from a restarted server accepting
// connections again to the first successful call, for the Go SDK fixture
// (404 on the old session) and server-everything (400). "direct" is the
// floor: a fresh plain HTTP client's handshake and call (the server's own
// cold start); "conn" is the bridge alone (the old Conn notices and dies, a
// new Dial, the handshake, the call); "shim" is the whole
// binary with its default flags, restarts spaced past its 10 s stability
// window so that its crash-loop backoff starts from zero.
func BenchmarkRecovery(b *testing.B) {
	for _, kind := range []string{goSDKStateful, everythingHTTP} {
		tl := echoTool(kind)
		call := fmt.Sprintf(`{"name":%q,"arguments":{%q:"x"}}`, tl.name, tl.arg)
		b.Run(kind+"/direct", func(b *testing.B) {
			srv := newServer(b, kind)
			var total time.Duration
			for i := 0; i < b.N; i++ {
				srv.Restart()
				back := time.Now()
				raw := &rawClient{c: &http.Client{}, url: srv.URL}
				raw.init(b)
				r, err := raw.post(jsonrpc.NewRequest([]byte("1"), "tools/call", []byte(call)))
				if err != nil || !gjson.GetBytes(r, "result").Exists() {
					b.Fatalf("%s %v", r, err)
				}
				total += time.Since(back)
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms-to-first-call")
		})
		b.Run(kind+"/conn", func(b *testing.B) {
			srv := newServer(b, kind)
			d := newDialer(b, Options{URL: srv.URL})
			var total time.Duration
			for i := 0; i < b.N; i++ {
				cl := dialClient(b, d)
				cl.initialize()
				srv.Restart()
				back := time.Now()
				for {
					c, err := d.Dial(context.Background())
					if err != nil {
						time.Sleep(10 * time.Millisecond)
						continue
					}
					cl2 := &client{t: b, c: c}
					cl2.initialize()
					if err := cl2.tool(kind, "x"); err != nil {
						b.Fatal(err)
					}
					c.Close()
					break
				}
				total += time.Since(back)
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms-to-first-call")
		})
		b.Run(kind+"/shim", func(b *testing.B) {
			srv := newServer(b, kind)
			sh := startShim(b, "--name", "recovery", "--url", srv.URL)
			sh.initialize()
			var total time.Duration
			for i := 0; i < b.N; i++ {
				time.Sleep(11 * time.Second)
				srv.Restart()
				back := time.Now()
				if err := sh.echo(echoTool(kind), "x", 60*time.Second); err != nil {
					b.Fatal(err)
				}
				total += time.Since(back)
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms-to-first-call")
		})
	}
}
