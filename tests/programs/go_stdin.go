// Reads one line of stdin: says what it got, or that it met end of file.
package main

import (
	"bufio"
	"fmt"
	"os"
)

func main() {
	line, err := bufio.NewReader(os.Stdin).ReadString('\n')
	if err != nil && line == "" {
		fmt.Println("stdin: eof")
		return
	}
	fmt.Printf("stdin: got %s", line)
}
