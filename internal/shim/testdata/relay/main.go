// Command relay is what the shim is measured against (issue 25): the
// least a proxy of the stdio transport can be. It runs a command and
// copies bytes both ways between its stdio and the command's, through a
// buffer (as a proxy that reads its messages must; no splice), and exits
// with it. Nothing else: no framing, no validation, no supervision.
package main

import (
	"io"
	"os"
	"os/exec"
)

// copyLoop copies r to w through one 64 KiB buffer, one write per read.
func copyLoop(w io.Writer, r io.Reader) {
	buf := make([]byte, 64<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func main() {
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stderr = os.Stderr
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		os.Exit(1)
	}
	go func() { copyLoop(in, os.Stdin); in.Close() }()
	copyLoop(os.Stdout, out)
	cmd.Wait()
}
