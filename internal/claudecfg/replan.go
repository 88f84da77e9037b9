package claudecfg

import (
	"errors"
	"fmt"
	"slices"
)

// Claude Code rewrites ~/.claude.json whenever it starts, on `claude mcp
// add` and as a session runs (its own state lives in the same file), and
// not every one of those writes waits for the lock (lock.go). Measured
// beside `claude mcp add` (2.1.328), 1 to 4 of 100 wraps found the file
// changed between the plan and the write. So Commit does not give up on
// the first such conflict: it plans the same edit again from what the
// other program wrote and writes that.

// Commit writes every file the plan changes: each with Commit (atomic,
// with a backup, refused if the file changed since the plan read it), or
// created whole where the plan starts one. When another program changed a
// file since the plan read it, Commit plans again from the newer contents,
// for the same servers and no others, and writes that; up to maxUpdates
// tries in all, then it gives up with ErrChanged, the last file refused
// holding what the other program wrote. A server the other program removed
// meanwhile is left alone and its row says so, as do the rows of a server
// it changed (the edit is made to the new version). The backups are those
// of the files written.
func (p *Plan) Commit() ([]Backup, error) {
	var out []Backup
	written := map[string]bool{}
	for try := 1; ; try++ {
		err := p.commitFiles(written, &out)
		if !errors.Is(err, ErrChanged) {
			return out, err
		}
		if try == maxUpdates {
			return out, fmt.Errorf("gave up after %d tries: %w", try, err)
		}
		if err := p.replan(written); err != nil {
			return out, err
		}
	}
}

// commitFiles writes each changed file once and records it in written.
// Edits are idempotent, so a file written on an earlier try is unchanged
// in a re-plan unless the other program undid part of it.
func (p *Plan) commitFiles(written map[string]bool, out *[]Backup) error {
	for _, fe := range p.files {
		if string(fe.old) == string(fe.new) {
			continue
		}
		var backup string
		var err error
		if fe.old == nil {
			err = writeNew(fe.path, fe.new)
		} else {
			backup, err = Commit(fe.path, fe.old, fe.new)
		}
		if err != nil {
			return err
		}
		written[fe.path] = true
		*out = append(*out, Backup{fe.path, backup})
	}
	return nil
}

// replan plans again, from the files as they are now, the entries whose
// change is not written yet (their edit file is not in written), and puts
// the new rows in place of theirs. Rows of changes already written stay.
func (p *Plan) replan(written map[string]bool) error {
	only := map[entryKey]bool{}
	for _, row := range p.Rows {
		if row.Changed() && !written[row.edit] {
			only[row.key()] = true
		}
	}
	q, err := newPlan(p.o, p.r, only)
	if err != nil {
		return err
	}
	var rows []Row
	seen := map[entryKey]bool{}
	for _, row := range p.Rows {
		k := row.key()
		if !only[k] || written[row.edit] {
			rows = append(rows, row)
			continue
		}
		if seen[k] {
			continue
		}
		seen[k] = true
		was := pending(p.Rows, k, written)
		now := pending(q.Rows, k, written)
		switch {
		case len(now) == 0:
			rows = append(rows, Row{Change: Change{Name: row.Name, Action: ActSkipped,
				Detail: "another program removed it while mcp-heal was writing; left alone"}, Scope: row.Scope, File: row.File})
			continue
		case !slices.Equal(was, now):
			for i := range now {
				now[i].Detail = joinDetail("another program changed it while mcp-heal was writing; this is its new version", now[i].Detail)
			}
		}
		rows = append(rows, now...)
	}
	p.Rows, p.files = rows, q.files
	return nil
}

func (r Row) key() entryKey { return entryKey{r.Scope, r.Name} }

// pending are the rows of k whose edit file is not written yet.
func pending(rows []Row, k entryKey, written map[string]bool) []Row {
	var out []Row
	for _, r := range rows {
		if r.key() == k && !written[r.edit] {
			out = append(out, r)
		}
	}
	return out
}

func joinDetail(a, b string) string {
	if b == "" {
		return a
	}
	return a + "; " + b
}

// entryRaw is the entry name of the mcpServers object at path in data
// ("" when there is none).
func entryRaw(data []byte, path []string, name string) string {
	obj, _ := at(data, path)
	m, _ := lastMember(obj, name)
	return m.val.Raw
}
