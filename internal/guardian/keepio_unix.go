//go:build unix

package guardian

import "time"

// changed reports the state. Called with g.mu held.
func (g *guard) changed() {
	k := g.kept
	if k.opts.OnChange == nil {
		return
	}
	info := KeptInfo{Attached: g.c != nil, LastExitReason: k.lastWhy}
	if k.srv != nil {
		info.ServerPID, info.ServerStarted, info.Argv = k.srv.pid, k.srv.started, k.srv.spec.Argv
	}
	if g.c == nil {
		info.DetachedSince, info.Expires = k.since, k.since.Add(k.opts.Keep)
	}
	k.opts.OnChange(info)
}

// closeFiles closes the guardian's ends of the server's stdio (the stdin
// close is the first step of the stop ladder).
func (s *server) closeFiles() {
	for _, f := range s.files {
		f.Close()
	}
}

// write sends one line to the server's stdin, giving up after a second
// (a server that does not read is not waited for).
func (s *server) write(line []byte) {
	if len(s.files) == 0 {
		return
	}
	_ = s.files[0].SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = s.files[0].Write(append(line[:len(line):len(line)], '\n'))
	_ = s.files[0].SetWriteDeadline(time.Time{})
}
