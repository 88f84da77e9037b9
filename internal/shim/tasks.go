package shim

import (
	"bytes"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
)

// Tasks (the io.modelcontextprotocol/tasks extension of 2026-07-28, and
// the experimental tasks of 2025-11-25): a call the server answers with a
// task handle is done (the answer goes to the client like any other); the
// client then polls the task (tasks/get), feeds it (tasks/update) or
// cancels it (tasks/cancel) by its taskId. A task runs in the server
// process that created it, which most servers hold in memory only: when
// that process ends, so does the task, and the new process has never
// heard of it. So the shim notes which task ids each run handed out; when
// the run ends they become gone. A tasks/* request naming a gone task
// still goes to the new process (a server that keeps its tasks outside
// the process answers it as before), but when the new process answers it
// with an error, the client gets one error in mcp-heal's words instead,
// quoting the server's: the server was restarted, the task ran in the
// process that ended, there is nothing to wait for
// (health.TaskGoneError). A tasks/get or tasks/cancel in flight when the
// process ends is re-sent to the new one on the same terms (a read, and a
// cancel of something that may be gone); a tasks/update follows the
// other methods' rule (not re-sent).
//
// An input-required result's requestState (a multi round-trip call of
// 2026-07-28) is handled alike: the client's next round carries it, and
// it is forwarded to the new process as is (a stateless server, the Go
// SDK's among them, continues from it: era.go), but when the new process
// refuses a round whose requestState an ended run minted, the client gets
// mcp-heal's error instead, quoting the server's: the server was
// restarted, start the call again from the first round
// (health.StateGoneError). A requestState is kept as a 64-bit hash (it
// may be large), under the key statePrefix+hash.
//
// Only a stdio server's tasks are known to end with its process. A
// remote server's tasks outlive a lost connection or session (the
// specification has a server create a task durably before it hands out
// the handle), so with --url the shim notes none as gone: requests about
// them get the server's own answers.

// maxTasks bounds the task ids remembered, of the current run and of the
// runs that ended: past it, a task of the current run is not noted (a
// request about it after a restart gets the new server's own answer) and
// gone ones are forgotten at random.
const maxTasks = 1024

// maxHandle is the longest response read for a task handle: a handle is
// a task's id, status and times (under 1 KiB in the specification's
// examples), so a longer answer (a tool's result, up to 16 MiB) is not
// scanned for one.
const maxHandle = 64 << 10

// taskMethod reports whether a client request names a task by
// params.taskId.
func taskMethod(method string) bool { return strings.HasPrefix(method, "tasks/") }

// statePrefix marks a requestState's key among the task ids.
const statePrefix = "\x00state:"

// stateKey is the key of requestState rs.
func stateKey(rs string) string {
	h := fnv.New64a()
	h.Write([]byte(rs))
	return statePrefix + strconv.FormatUint(h.Sum64(), 16)
}

// noteTask records the task handle in a response of r's server, if it is
// one: a result with resultType "task" and a taskId (2026-07-28), or a
// result.task.taskId (2025-11-25); and the requestState of an
// input-required result. Called with mu held.
func (s *Shim) noteTask(r *run, line []byte) {
	if len(line) > maxHandle || !bytes.Contains(line, []byte(`"taskId"`)) && !bytes.Contains(line, []byte(`"requestState"`)) {
		return // a plain answer: skipped at memchr speed, a long one unread
	}
	res := gjson.GetBytes(line, "result")
	key := ""
	if rs := res.Get("requestState"); rs.Type == gjson.String && rs.Str != "" && res.Get("resultType").Str == "input_required" {
		key = stateKey(rs.Str)
	} else {
		id := res.Get("task.taskId")
		if id.Type != gjson.String && res.Get("resultType").Str == "task" {
			id = res.Get("taskId")
		}
		if id.Type != gjson.String || id.Str == "" {
			return
		}
		key = id.Str
	}
	if r.tasks == nil {
		r.tasks = make(map[string]bool)
	}
	if len(r.tasks) < maxTasks {
		r.tasks[key] = true
	}
}

// tasksGone moves the task ids of run r, which ended for cause c, to the
// gone ones. Called with mu held.
func (s *Shim) tasksGone(r *run, c health.Cause) {
	if len(r.tasks) == 0 {
		return
	}
	if s.sess.goneTasks == nil {
		s.sess.goneTasks = make(map[string]health.Cause)
	}
	for id := range r.tasks {
		for len(s.sess.goneTasks) >= maxTasks {
			for old := range s.sess.goneTasks {
				delete(s.sess.goneTasks, old)
				break
			}
		}
		s.sess.goneTasks[id] = c
	}
	r.tasks = nil
}

// goneTaskOf returns the key of the task (its id) a client request of the
// tasks extension names, or of the requestState a round of a multi
// round-trip call carries, when a run that ended handed it out ("" for
// none). Called with mu held.
func (s *Shim) goneTaskOf(method string, line []byte) string {
	if len(s.sess.goneTasks) == 0 {
		return ""
	}
	key := ""
	switch {
	case taskMethod(method):
		id := gjson.GetBytes(line, "params.taskId")
		if id.Type != gjson.String {
			return ""
		}
		key = id.Str
	case bytes.Contains(line, []byte(`"requestState"`)):
		rs := gjson.GetBytes(line, "params.requestState")
		if rs.Type != gjson.String || rs.Str == "" {
			return ""
		}
		key = stateKey(rs.Str)
	default:
		return ""
	}
	if _, gone := s.sess.goneTasks[key]; !gone || s.run.tasks[key] {
		return ""
	}
	return key
}

// taskGoneReply is the answer to e, a request naming the gone task
// e.task, when the server answered it with the error line: the shim's
// error, quoting the server. Called with mu held.
func (s *Shim) taskGoneReply(e *entry, line []byte) []byte {
	c, ok := s.sess.goneTasks[e.task]
	if !ok {
		return line // forgotten (maxTasks): the server's own answer
	}
	s.note.due = false // it says the server was restarted
	said := gjson.GetBytes(line, "error.message").String()
	if strings.HasPrefix(e.task, statePrefix) {
		data := errData{Reason: "state-gone", Server: s.o.Name, Method: e.method, Tool: e.tool, Attempts: e.retries + 1}
		return jsonrpc.ErrorReply(e.id, jsonrpc.CodeInternalError, health.StateGoneError(s.o.Name, c, e.method, said), data)
	}
	data := errData{Reason: "task-gone", Server: s.o.Name, Method: e.method, Task: e.task, Attempts: e.retries + 1}
	return jsonrpc.ErrorReply(e.id, jsonrpc.CodeInternalError, health.TaskGoneError(s.o.Name, c, e.task, said), data)
}
