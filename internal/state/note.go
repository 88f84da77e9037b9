package state

import (
	"errors"
	"os"
	"path/filepath"
)

// ClaimTold records that the one-time notice key is being given now and
// reports whether this caller is the one to give it: the marker is
// created exclusively, so of a shim and hooks racing to deliver the same
// restart note (Record.Note) exactly one wins.
func ClaimTold(key string) (bool, error) {
	dir := ToldDir()
	if err := EnsureDir(dir); err != nil {
		return false, err
	}
	f, err := OpenFile(filepath.Join(dir, toldName(key)), os.O_CREATE|os.O_EXCL|os.O_WRONLY)
	if errors.Is(err, os.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, f.Close()
}
