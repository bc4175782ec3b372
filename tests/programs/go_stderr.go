// Writes to stderr, then panics: its stderr and the panic trace must reach
// the debugger's output as stderr.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Println("to stdout")
	fmt.Fprintln(os.Stderr, "to stderr: disk almost full")
	os.Stderr.Sync()
	panic("boom from go_stderr") // LINE:panic
}
