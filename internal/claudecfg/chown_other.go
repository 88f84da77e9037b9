//go:build !unix

package claudecfg

import "os"

// chownLike does nothing where files have no unix owner.
func chownLike(*os.File, os.FileInfo) {}
