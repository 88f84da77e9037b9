package state

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Two kinds of files live in ToldDir. A notice told once for good
// (MarkTold: "n-<hash>") stays. A claim (ClaimTold: "c-<hash>") only
// settles who tells something that several processes race to tell: a
// shim's restart note (one per restart), the model's context about an
// incident in a turn (one per incident and prompt). A claim matters for
// minutes, so its owner forgets it when it is done (ForgetClaim: a shim
// forgets its previous note's claim at the next restart and its last one
// when it exits) and what a killed owner left is swept after ClaimLife
// whenever a claim is won (sweepClaims): the directory holds the claims of
// live shims and of the last day, not one file per restart forever.

// ClaimLife is how long a claim is kept before any claimer sweeps it.
const ClaimLife = 24 * time.Hour

// ClaimTold records that the one-time notice key is being given now and
// reports whether this caller is the one to give it: the marker is
// created exclusively, so of a shim and hooks racing to deliver the same
// restart note (Record.Note), or 21 failure hooks of one turn racing to
// give the model context about one incident, exactly one wins.
func ClaimTold(key string) (bool, error) {
	dir := ToldDir()
	if err := EnsureDir(dir); err != nil {
		return false, err
	}
	f, err := OpenFile(filepath.Join(dir, claimName(key)), os.O_CREATE|os.O_EXCL|os.O_WRONLY)
	if errors.Is(err, os.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	sweepClaims(dir, time.Now().Add(-ClaimLife))
	return true, f.Close()
}

// Claimed reports whether the claim key was won (ClaimTold).
func Claimed(key string) bool {
	_, err := os.Lstat(filepath.Join(ToldDir(), claimName(key)))
	return err == nil
}

// ForgetClaim removes the claim key: its owner is done with it.
func ForgetClaim(key string) error {
	err := os.Remove(filepath.Join(ToldDir(), claimName(key)))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// claimName is key hashed, as toldName, with the prefix of claims.
func claimName(key string) string { return "c-" + strings.TrimPrefix(toldName(key), "n-") }

// sweepClaims removes the claims in dir last changed before before
// (best effort: a claim another process removes meanwhile is fine).
func sweepClaims(dir string, before time.Time) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "c-") {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.ModTime().Before(before) {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
