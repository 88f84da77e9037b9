//go:build !unix

package cfgfile

import "os"

// chownLike does nothing where files have no unix owner.
func chownLike(*os.File, os.FileInfo) {}
