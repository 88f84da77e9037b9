package cfgfile

import "sync/atomic"

// classicSwaps counts the commits whose compare-and-swap fell back to
// closing the config and renaming over it (Windows where the POSIX-style
// rename is refused: older Windows, other file systems, Wine 8). Between
// the two, a write by a program that ignores the lock can be lost
// (docs/threat-model.md §4); everywhere else no such window exists.
var classicSwaps atomic.Int64

// ClassicSwaps is how many commits of this process took that fallback, so
// a test can tell the lossless swap from the one with a window.
func ClassicSwaps() int64 { return classicSwaps.Load() }
