package cfgfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// errNoExchange means the system or file system cannot swap two names
// atomically.
var errNoExchange = errors.New("atomic exchange is not supported here")

// Exchange swaps the names a and b atomically (renameat2 RENAME_EXCHANGE on
// Linux, renamex_np RENAME_SWAP on macOS); rename is the fallback. Tests
// replace them (Exchange also from claudecfg/wrap, to land another
// program's write just before the swap).
var (
	Exchange = exchangeFiles
	rename   = os.Rename
)

// maxRestores bounds how often swapIn swaps back while a concurrent writer
// keeps replacing the file.
const maxRestores = 10

// swapIn puts tmp (already written and synced) in target's place, as the
// second half of a compare-and-swap whose first half saw old in target.
//
// With an atomic exchange, the file swapped out is what target held at the
// instant of the swap: if it is not old, another program wrote the file
// between the check and the swap, and its version is swapped back in
// (restore) and ErrChanged returned; nothing is lost. Without one, target
// is read again immediately before a plain rename: a write landing in the
// microseconds between that read and the rename would be lost, which the
// lock (lock.go) rules out for writers that take it, such as Claude Code.
func swapIn(tmp *os.File, target string, old []byte) error {
	name := tmp.Name()
	err := Exchange(name, target)
	if errors.Is(err, errNoExchange) {
		// Windows refuses to rename a file that is open (Go opens files
		// without FILE_SHARE_DELETE): "Sharing violation", and no commit
		// ever landed. No identity is compared on this path, so tmp need
		// not stay open.
		tmp.Close()
		return checkedRename(name, target, old)
	}
	if err != nil {
		tmp.Close() // Windows deletes no open file
		os.Remove(name)
		return err
	}
	prev, err := os.Open(name)
	if err != nil {
		// Cannot tell what was replaced: put it back.
		if rerr := Exchange(name, target); rerr != nil {
			return fmt.Errorf("verify the replaced version: %w; it is kept in %s", errors.Join(err, rerr), name)
		}
		os.Remove(name)
		return err
	}
	defer prev.Close()
	got, err := io.ReadAll(prev)
	if err == nil && bytes.Equal(got, old) {
		os.Remove(name)
		return nil
	}
	if err := restore(name, target, prev, tmp); err != nil {
		return err
	}
	os.Remove(name)
	return ErrChanged
}

// restore puts back the version a concurrent writer saved: name holds it
// (held) and target holds what was swapped in (expect). Each exchange pulls
// out what target holds; if that is not the file put in by the previous
// exchange, a writer replaced it meanwhile with a newer version, which goes
// back in the same way. The loop ends when an exchange pulls out exactly
// what the previous one put in: target then holds the newest version seen.
// Every file stays open until the end, so no inode is reused and compared
// by mistake.
func restore(name, target string, held, expect *os.File) error {
	var opened []*os.File
	defer func() {
		for _, f := range opened {
			f.Close()
		}
	}()
	for range maxRestores {
		if err := Exchange(name, target); err != nil {
			return fmt.Errorf("put back a concurrent writer's version: %w; it is kept in %s", err, name)
		}
		pulled, err := os.Open(name)
		if err != nil {
			return fmt.Errorf("put back a concurrent writer's version: %w; it may be in %s", err, name)
		}
		opened = append(opened, pulled)
		if sameFile(pulled, expect) {
			return nil
		}
		expect, held = held, pulled
	}
	return fmt.Errorf("another program kept rewriting the file; the version mcp-heal swapped out last is kept in %s", name)
}

func sameFile(a, b *os.File) bool {
	sa, err1 := a.Stat()
	sb, err2 := b.Stat()
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// busyWait bounds how long checkedRename retries while Windows refuses
// the rename because another program holds the file open.
const busyWait = 2 * time.Second
