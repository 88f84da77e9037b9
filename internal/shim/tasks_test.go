package shim

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/state"
)

// TestTaskIDsBounded: the task ids the shim remembers stay at most
// maxTasks per run and maxTasks gone, however many tasks a server hands
// out and however many runs end; both handle shapes are noted, and a
// result that only mentions a taskId is not a handle.
func TestTaskIDsBounded(t *testing.T) {
	s := &Shim{}
	c := health.Cause{Kind: state.CauseSignal, Signal: "killed", SignalNum: 9}
	r := &run{}
	s.noteTask(r, []byte(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[],"structuredContent":{"taskId":"not-a-handle"}}}`))
	s.noteTask(r, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"result":{"resultType":"task","taskId":"too-long","statusMessage":"%s"}}`, strings.Repeat("x", maxHandle)))
	s.noteTask(r, []byte(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"task","taskId":"short","statusMessage":"ok"}}`))
	if len(r.tasks) != 1 || !r.tasks["short"] {
		t.Fatalf("task ids noted: %v; want only the short handle (not a taskId inside structuredContent, nor one in an answer over maxHandle)", r.tasks)
	}
	for n := 0; n < 3; n++ {
		r := &run{}
		for i := 0; i < 2*maxTasks; i++ {
			line := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":{"resultType":"task","taskId":"r%d-%d","status":"working"}}`, i, n, i)
			if i%2 == 1 {
				line = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":{"task":{"taskId":"r%d-%d","status":"working"}}}`, i, n, i)
			}
			s.noteTask(r, line)
		}
		if len(r.tasks) != maxTasks || !r.tasks[fmt.Sprintf("r%d-0", n)] || !r.tasks[fmt.Sprintf("r%d-1", n)] {
			t.Fatalf("run %d: %d task ids noted (r%d-0 %v, r%d-1 %v); want the first %d, both shapes", n, len(r.tasks), n, r.tasks[fmt.Sprintf("r%d-0", n)], n, r.tasks[fmt.Sprintf("r%d-1", n)], maxTasks)
		}
		s.tasksGone(r, c)
		if r.tasks != nil || len(s.sess.goneTasks) > maxTasks {
			t.Fatalf("after run %d ended: %d still on the run, %d gone; want 0 and at most %d", n, len(r.tasks), len(s.sess.goneTasks), maxTasks)
		}
	}
}
