package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

var goarch = runtime.GOARCH

var errMismatch = errors.New("the SHA-256 does not match SHA256SUMS")

// verifiedCopy copies src to dst through a temporary file, hashing the
// bytes as they are written: dst is what was checked. errMismatch: the
// hash is not want (an empty want, src not listed, never matches); other
// errors: the copy could not be made.
func verifiedCopy(src, dst, want string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := fmt.Sprintf("%s.verify.%d", dst, os.Getpid())
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o700)
	if err != nil {
		return err
	}
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(out, h), in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if want == "" || hex.EncodeToString(h.Sum(nil)) != want {
		os.Remove(tmp)
		return errMismatch
	}
	if err := os.Rename(tmp, dst); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// stableCurrent reports whether the stable copy is this version.
func (l *launcher) stableCurrent() bool {
	b, err := os.ReadFile(l.paths.StableBinary + ".version")
	return err == nil && strings.TrimSpace(string(b)) == l.key && regular(l.paths.StableBinary)
}

// installStable makes the stable copy bin, when it is not this version
// already. Windows refuses to replace a running program but lets it be
// renamed: the old copy moves aside (mcp-heal.exe.old.PID), the new one
// takes its name, and old copies nothing runs any more are removed.
func (l *launcher) installStable(bin string) {
	stable := l.paths.StableBinary
	if l.stableCurrent() {
		return
	}
	dir := filepath.Dir(stable)
	if privateDir(dir) != nil {
		return
	}
	pid := os.Getpid()
	tmp := fmt.Sprintf("%s.tmp.%d", stable, pid)
	if err := copyFile(bin, tmp, 0o755); err != nil {
		os.Remove(tmp)
		return
	}
	if regular(stable) {
		os.Rename(stable, fmt.Sprintf("%s.old.%d", stable, pid))
	}
	if err := os.Rename(tmp, stable); err != nil {
		os.Remove(tmp)
		return
	}
	vtmp := fmt.Sprintf("%s.version.%d", stable, pid)
	if os.WriteFile(vtmp, []byte(l.key+"\n"), 0o644) == nil {
		os.Rename(vtmp, stable+".version")
	}
	os.Remove(vtmp)
	old, _ := filepath.Glob(filepath.Join(dir, filepath.Base(stable)+".old.*"))
	for _, o := range old {
		os.Remove(o) // fails while a shim still runs it: next time
	}
}

func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// readVersion is the manifest's version, "dev" when there is none.
func readVersion(manifest string) string {
	var m struct{ Version string }
	if b, err := os.ReadFile(manifest); err == nil && json.Unmarshal(b, &m) == nil && m.Version != "" {
		return m.Version
	}
	return "dev"
}

// versionKey is the version as a part of a file name, the sh launcher's
// rule: itself when plain (letters, digits, . _ + -, at most 64, not
// starting with . or -), else "v" and its POSIX cksum, so that no
// manifest can make a path of it.
func versionKey(v string) string {
	plain := len(v) <= 64 && !strings.HasPrefix(v, ".") && !strings.HasPrefix(v, "-")
	for _, r := range v {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._+-", r)) {
			plain = false
		}
	}
	if plain && v != "" {
		return v
	}
	return fmt.Sprintf("v%d", cksum([]byte(v)))
}

// cksum is POSIX cksum's CRC: CRC-32 (polynomial 0x04C11DB7, not
// reflected) over the data and then its length, inverted.
func cksum(b []byte) uint32 {
	var crc uint32
	add := func(c byte) {
		crc ^= uint32(c) << 24
		for i := 0; i < 8; i++ {
			if crc&0x80000000 != 0 {
				crc = crc<<1 ^ 0x04C11DB7
			} else {
				crc <<= 1
			}
		}
	}
	for _, c := range b {
		add(c)
	}
	for n := len(b); n > 0; n >>= 8 {
		add(byte(n))
	}
	return ^crc
}
