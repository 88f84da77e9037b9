// Command winprobe stands for the bundled mcp-heal binary in the Windows
// hook test (plugin/wine_test.go): it says it ran, with its arguments.
package main

import (
	"fmt"
	"os"
)

func main() { fmt.Printf("winprobe %q\n", os.Args[1:]) }
