//go:build unix

package interop

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// tasksServer is the tests' own stdio server of the 2026-07-28 era with
// the tasks extension (io.modelcontextprotocol/tasks; the Go SDK v1.8.0
// implements no tasks): server/discover, one tool `work` whose call
// answers at once with a task handle (resultType "task"), and tasks/get,
// tasks/update, tasks/cancel on the tasks of this process, which it
// holds in memory only (a task id it did not hand out: -32602). `work`
// takes `ms` (the task completes after it), `hold` (a tasks/get of that
// task is never answered, so a test can kill the server while one is in
// flight) and `durable` (the task is one a server keeps outside its
// process, as in a database: every process of it answers a tasks/get of
// a "durable-" task as completed). Task ids name the process, so tasks
// of two processes never share one. A second tool, `ask`, is a multi
// round-trip call: its first round answers input_required with a
// requestState this process holds in memory; a round that carries one
// completes when this process minted it, else -32602 "unknown
// requestState". It plays the part when the interop test binary runs
// with MCP_HEAL_INTEROP_ROLE=tasks-server.
func tasksServer(in io.Reader, out io.Writer) int {
	type task struct {
		done time.Time
		hold bool
		st   string
	}
	var mu sync.Mutex
	tasks := map[string]*task{}
	states := map[string]bool{}
	n := 0
	w := bufio.NewWriter(out)
	send := func(id json.RawMessage, result any, code int, msg string) {
		m := map[string]any{"jsonrpc": "2.0", "id": id}
		if msg != "" {
			m["error"] = map[string]any{"code": code, "message": msg}
		} else {
			m["result"] = result
		}
		b, _ := json.Marshal(m)
		mu.Lock()
		w.Write(append(b, '\n'))
		w.Flush()
		mu.Unlock()
	}
	status := func(id string, t *task) map[string]any {
		if t.st == "working" && !time.Now().Before(t.done) {
			t.st = "completed"
		}
		return map[string]any{"resultType": "complete", "taskId": id, "status": t.st,
			"createdAt": "2026-07-28T00:00:00Z", "lastUpdatedAt": "2026-07-28T00:00:00Z", "ttlMs": 600000, "pollIntervalMs": 100}
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name         string `json:"name"`
				TaskID       string `json:"taskId"`
				RequestState string `json:"requestState"`
				Arguments    struct {
					MS      int  `json:"ms"`
					Hold    bool `json:"hold"`
					Durable bool `json:"durable"`
				} `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &req) != nil || req.ID == nil {
			continue
		}
		mu.Lock()
		t := tasks[req.Params.TaskID]
		if t == nil && strings.HasPrefix(req.Params.TaskID, "durable-") {
			t = &task{st: "completed"}
		}
		mu.Unlock()
		switch req.Method {
		case "server/discover":
			send(req.ID, map[string]any{"resultType": "complete", "supportedVersions": []string{"2026-07-28"},
				"capabilities": map[string]any{"tools": map[string]any{}, "extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}},
				"_meta":        map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "tasks", "version": "1"}}}, 0, "")
		case "tools/list":
			send(req.ID, map[string]any{"resultType": "complete", "tools": []any{map[string]any{"name": "work", "inputSchema": map[string]any{"type": "object"}},
				map[string]any{"name": "ask", "inputSchema": map[string]any{"type": "object"}}}}, 0, "")
		case "tools/call":
			if req.Params.Name == "ask" {
				mu.Lock()
				switch rs := req.Params.RequestState; {
				case rs == "":
					n++
					rs = fmt.Sprintf("state-%d-%d", os.Getpid(), n)
					states[rs] = true
					mu.Unlock()
					send(req.ID, map[string]any{"resultType": "input_required", "requestState": rs,
						"inputRequests": map[string]any{"name": map[string]any{"method": "elicitation/create", "params": map[string]any{"message": "name?"}}}}, 0, "")
				case states[rs]:
					mu.Unlock()
					send(req.ID, map[string]any{"resultType": "complete", "content": []any{map[string]any{"type": "text", "text": "done " + rs}}}, 0, "")
				default:
					mu.Unlock()
					send(req.ID, nil, -32602, "unknown requestState "+rs)
				}
				continue
			}
			n++
			id := fmt.Sprintf("task-%d-%d", os.Getpid(), n)
			if req.Params.Arguments.Durable {
				id = "durable-" + id
			}
			nt := &task{done: time.Now().Add(time.Duration(req.Params.Arguments.MS) * time.Millisecond), hold: req.Params.Arguments.Hold, st: "working"}
			mu.Lock()
			tasks[id] = nt
			res := status(id, nt)
			mu.Unlock()
			res["resultType"] = "task"
			send(req.ID, res, 0, "")
		case "tasks/get", "tasks/update", "tasks/cancel":
			if t == nil {
				send(req.ID, nil, -32602, "unknown task "+req.Params.TaskID)
				continue
			}
			if req.Method == "tasks/get" && t.hold {
				continue // never answered
			}
			mu.Lock()
			if req.Method == "tasks/cancel" {
				t.st = "cancelled"
			}
			res := status(req.Params.TaskID, t)
			mu.Unlock()
			send(req.ID, res, 0, "")
		default:
			send(req.ID, nil, -32601, "Method not found")
		}
	}
	return 0
}
