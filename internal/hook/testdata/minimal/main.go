// Command minimal is the floor the hook's process is measured against
// (issue 25): a Go program that reads its stdin and exits.
package main

import (
	"io"
	"os"
)

func main() { io.Copy(io.Discard, os.Stdin) }
