package proc

import "io"

// atomicPipeWrite is the size up to which a write to a pipe is atomic
// (PIPE_BUF: 512 bytes by POSIX, and on macOS; 4096 on Linux): a writer
// killed during it wrote all of it or nothing.
const atomicPipeWrite = 512

// lineWriter writes to w and calls mark(true) before any write that may
// leave a line unfinished in the pipe (one that does not end a line, or
// that a pipe does not write atomically), and mark(false) once what was
// written ends with a newline: the stdin of a kept server, whose guardian
// ends a line a killed shim left unfinished
// (guardian.Child.MarkWrite). Its writes come from a bufio.Writer, whose
// chunks need not follow lines: a full buffer is written mid-message, and
// a message larger than the buffer goes out without its newline. The
// guardian reads the marks even after this process died (they are sent
// before the bytes), so it never misses an unfinished line; a mark it
// misses the end of costs one empty line.
type lineWriter struct {
	w    io.Writer
	mark func(open bool)
	open bool // a line is unfinished in the pipe, as far as the guardian knows
}

func (l *lineWriter) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	ends := p[len(p)-1] == '\n'
	if !l.open && !(ends && len(p) <= atomicPipeWrite) {
		l.mark(true)
		l.open = true
	}
	n, err := l.w.Write(p)
	if l.open && ends && n == len(p) {
		l.mark(false)
		l.open = false
	}
	return n, err
}
