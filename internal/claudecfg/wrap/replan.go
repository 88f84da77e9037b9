package wrap

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	"github.com/mcp-heal/mcp-heal/internal/cfgfile"
	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
	"github.com/mcp-heal/mcp-heal/internal/regfile"
)

// Claude Code rewrites ~/.claude.json whenever it starts, on `claude mcp
// add` and as a session runs (its own state lives in the same file).
// Measured beside `claude mcp add` (2.1.328), 1 to 4 of 100 wraps found the
// file changed between the plan and the write. So Commit does not give up
// on the first such conflict: it plans the same edit again from what the
// other program wrote, holding the file's lock (lock.go) while it does, so
// a writer that takes the lock, as Claude Code's saves do, cannot change
// the file again before the swap; one that does not is caught by the swap
// (swap.go) and costs another try.

// Commit writes every file the plan changes: each with a compare-and-swap
// (as Commit does: atomic, with a backup, never over another program's
// update), or created whole where the plan starts one. When another
// program changed a file since the plan read it, Commit plans again from
// the newer contents, for the same servers and no others, and writes that.
// A write refused because the file changed once more (by a writer that
// ignores the lock) is tried again, up to maxUpdates tries in all; then
// Commit gives up with ErrChanged, the file holding what the other program
// wrote. A server the other program removed meanwhile is left alone and its
// row says so, as do the rows of a server it changed (the edit is made to
// its new version). The backups are those of the files written.
func (p *Plan) Commit() ([]Backup, error) {
	written := map[string]bool{}
	var out []Backup
	for tries := 1; ; {
		fe := p.next()
		if fe == nil {
			return out, nil
		}
		path := fe.path
		var backup string
		var err error
		if fe.old == nil {
			err = writeNew(path, fe.new)
		} else {
			backup, err = cfgfile.CommitFunc(path, func(cur []byte) ([]byte, error) { return p.apply(path, cur, written) })
		}
		switch {
		case errors.Is(err, cfgfile.ErrChanged) && tries == cfgfile.MaxUpdates:
			return out, fmt.Errorf("gave up after %d tries: %w", tries, err)
		case errors.Is(err, cfgfile.ErrChanged) && fe.old == nil:
			// Created meanwhile (there was nothing to lock): plan again
			// from it.
			tries++
			if err := p.replan(written, regfile.ReadConfig); err != nil {
				return out, err
			}
			continue
		case errors.Is(err, cfgfile.ErrChanged):
			// The swap met a writer that ignores the lock: the next try
			// plans again from its version.
			tries++
			continue
		case err != nil:
			return out, err
		}
		if fe := p.file(path); fe != nil { // (apply may have planned again)
			fe.written = true
		}
		written[path] = true
		out = append(out, Backup{path, backup})
	}
}

// apply is the edit of path given its contents cur, read under the lock:
// the planned one when cur is what the plan read, else the one planned
// again from cur.
func (p *Plan) apply(path string, cur []byte, written map[string]bool) ([]byte, error) {
	if fe := p.file(path); fe != nil && bytes.Equal(cur, fe.old) {
		return fe.new, nil
	}
	err := p.replan(written, func(f string) ([]byte, error) {
		if f == path {
			return cur, nil
		}
		return regfile.ReadConfig(f)
	})
	if err != nil {
		return nil, err
	}
	if fe := p.file(path); fe != nil {
		return fe.new, nil
	}
	return cur, nil
}

// next is the first file whose change is not written yet.
func (p *Plan) next() *fileEdit {
	for _, fe := range p.files {
		if !fe.written && string(fe.old) != string(fe.new) {
			return fe
		}
	}
	return nil
}

func (p *Plan) file(path string) *fileEdit {
	for _, fe := range p.files {
		if fe.path == path {
			return fe
		}
	}
	return nil
}

// replan plans again, from the files as read now, the entries whose edit
// file is not written yet, and puts the new rows in place of theirs. That
// includes rows with nothing to write: an entry "already wrapped" when
// planned may have been unwrapped since. Rows of changes already written
// stay. Edits are idempotent, so a file written already is unchanged in the
// new plan unless the other program undid part of it.
func (p *Plan) replan(written map[string]bool, read func(string) ([]byte, error)) error {
	only := map[entryKey]bool{}
	for _, row := range p.Rows {
		if !written[row.edit] {
			only[row.key()] = true
		}
	}
	q, err := newPlan(p.o, p.r, only, read)
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
	switch {
	case b == "":
		return a
	case a == "":
		return b
	}
	return a + "; " + b
}

// entryRaw is the entry name of the mcpServers object at path in data
// ("" when there is none).
func entryRaw(data []byte, path []string, name string) string {
	obj, _ := claudecfg.At(data, path)
	m, _ := claudecfg.LastMember(obj, name)
	return m.Val.Raw
}
