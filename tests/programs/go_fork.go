// A program that starts a child process, for the note that delve does not follow it.
package main

import (
	"fmt"
	"os/exec"
)

func main() {
	err := exec.Command("sleep", "3").Run()
	fmt.Println("child exited", err) // LINE:after
}
