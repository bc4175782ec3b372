// Secrets as a Go program holds them, for the redaction tests: JSON with its
// quotes escaped when a debugger shows the string, and a header.
package main

import "fmt"

func main() {
	config := "{\"db_password\":\"hunter2-go\",\"user\":\"app\"}"
	header := "Authorization: Basic YWRtaW46aHVudGVyMi1nb2Jhc2lj"
	fmt.Println(config, header) // LINE:print
}
