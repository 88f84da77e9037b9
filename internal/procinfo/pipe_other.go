//go:build !unix

package procinfo

import "io/fs"

// pipeID is zero: no other process's stdout can be read here.
func pipeID(fs.FileInfo) Pipe { return 0 }
