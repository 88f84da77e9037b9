// Package rawio reads and writes non-blocking pipes through Go's poller
// with raw system calls (Linux). A read or write through *os.File enters
// the runtime's system-call state, and the first one after the process
// was idle wakes the runtime's monitor thread (sysmon), which then runs a
// few 20 µs cycles before it sleeps again: one more thread to schedule for
// every message of a proxy that is idle between calls, and on a machine
// whose cores are all busy each wake-up can wait for a time slice (issue
// 25). A read or write of a non-blocking pipe never blocks, so it needs
// no system-call state: when it would block, the poller waits, as for an
// *os.File.
package rawio

import (
	"io"
	"os"
)

// Reader returns a reader of f, raw when f is a non-blocking pipe on
// Linux; f itself otherwise.
func Reader(f *os.File) io.Reader {
	if r := Wrap(f); r != nil {
		return r
	}
	return f
}

// Writer returns a writer of f, raw when f is a non-blocking pipe on
// Linux; f itself otherwise.
func Writer(f *os.File) io.Writer {
	if r := Wrap(f); r != nil {
		return r
	}
	return f
}

// Wrap returns f as a raw reader and writer when it is a non-blocking
// pipe on Linux, else nil.
func Wrap(f *os.File) io.ReadWriter {
	if r := newRaw(f); r != nil {
		return r
	}
	return nil
}
