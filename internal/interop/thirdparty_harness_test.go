//go:build linux

package interop

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The third-party suite's machinery: the two ways to know that a request
// has reached a server that was stopped (SIGSTOP) before it was sent, so
// that the SIGKILL which follows lands while the call is in flight, on any
// server, however fast its tools are. (Its remote servers, which it stops,
// kills and starts again on the same port, are harness_test.go's remote.)

// waitStdinPending waits until the stopped process pid has unread bytes on
// its stdin: the shim has written the request to it. It opens the pipe
// through /proc and asks FIONREAD; nothing is read. It reports false when
// the process is gone meanwhile (a shim that kills a stopped server
// itself).
func waitStdinPending(t *testing.T, pid int) bool {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		fd, err := unix.Open(fmt.Sprintf("/proc/%d/fd/0", pid), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) {
			return false
		}
		if err != nil {
			t.Fatalf("open the stdin of server %d: %v", pid, err)
		}
		n, err := unix.IoctlGetInt(fd, unix.TIOCINQ) // FIONREAD
		unix.Close(fd)
		if err != nil {
			t.Fatalf("FIONREAD on the stdin of server %d: %v", pid, err)
		}
		if n > 0 {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("the request never reached the stdin of server %d within 15s", pid)
	return false
}

// waitTCPPending waits until a connection accepted on port (by the
// kernel: the server is stopped) holds unread bytes: the bridge has sent
// the request. It reads the socket tables in /proc/net.
func waitTCPPending(t *testing.T, port int) {
	t.Helper()
	hexPort := fmt.Sprintf(":%04X", port)
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
			f, err := os.Open(table)
			if err != nil {
				continue
			}
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				// sl local rem st tx_queue:rx_queue ...
				fs := strings.Fields(sc.Text())
				if len(fs) < 5 || !strings.HasSuffix(fs[1], hexPort) || fs[3] != "01" {
					continue
				}
				q := strings.SplitN(fs[4], ":", 2)
				if len(q) == 2 {
					if rx, err := strconv.ParseUint(q[1], 16, 64); err == nil && rx > 0 {
						f.Close()
						return
					}
				}
			}
			f.Close()
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no request reached port %d within 15s", port)
}

// volatile are the parts of an answer that differ between two runs of the
// same server whatever sits between it and the client.
var volatile = []*regexp.Regexp{
	regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`),
	regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?`),
}

// normalize replaces what is volatile in an answer, with the server's own
// patterns, by a placeholder.
func normalize(s string, extra []*regexp.Regexp) string {
	for _, re := range append(append([]*regexp.Regexp(nil), volatile...), extra...) {
		s = re.ReplaceAllString(s, "<volatile>")
	}
	return s
}

// answer renders a reply for comparison: the result, or the error's code
// and message.
func answer(r reply) string {
	if r.OK {
		return string(r.Result)
	}
	if r.Error != nil {
		return fmt.Sprintf("error %d %s", r.Error.Code, r.Error.Message)
	}
	return "no reply"
}

// isError reports whether a tools/call result says isError.
func isError(r reply) bool {
	var res struct {
		IsError bool `json:"isError"`
	}
	json.Unmarshal(r.Result, &res)
	return res.IsError
}

// notResent reports whether an error says the call was not re-sent and
// may have taken effect: checked by its stable words, not its sentence.
func notResent(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "may or may not") || strings.Contains(m, "not re-sent") || strings.Contains(m, "not resent")
}

// short is the first line of s, at most n bytes.
func short(s string, n int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}
