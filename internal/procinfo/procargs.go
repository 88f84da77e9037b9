package procinfo

import (
	"bytes"
	"encoding/binary"
)

// splitProcArgs splits macOS's kern.procargs2: a 32-bit argc, the
// executable path, NUL padding, then argc NUL-terminated arguments, then
// the rest (the environment, then the kernel's own strings for the
// process), returned unsplit. It is built everywhere so that its tests run
// on Linux too.
func splitProcArgs(b []byte) (exe string, args []string, rest []byte) {
	if len(b) < 4 {
		return "", nil, nil
	}
	argc := int(binary.LittleEndian.Uint32(b))
	b = b[4:]
	end := bytes.IndexByte(b, 0)
	if end < 0 {
		return "", nil, nil
	}
	exe = string(b[:end])
	b = b[end:]
	for len(b) > 0 && b[0] == 0 {
		b = b[1:]
	}
	for len(args) < argc && len(b) > 0 {
		end := bytes.IndexByte(b, 0)
		if end < 0 {
			end = len(b)
		}
		args = append(args, string(b[:end]))
		b = b[min(end+1, len(b)):]
	}
	return exe, args, b
}

// nulStrings splits NUL-terminated strings, leaving out empty ones (the
// padding kern.procargs2 has between its parts).
func nulStrings(b []byte) []string {
	var out []string
	for s := range bytes.SplitSeq(b, []byte{0}) {
		if len(s) > 0 {
			out = append(out, string(s))
		}
	}
	return out
}
