// Dereferences a nil pointer; run with GOTRACEBACK=crash it dumps core, for
// post-mortem tests.
package main

import "fmt"

type Node struct {
	Value int
	Next  *Node
}

func readNextValue(n *Node) int {
	depth := 2
	return n.Next.Value + depth // LINE:crash
}

func main() {
	lonely := &Node{Value: 1}
	fmt.Println("about to crash")
	fmt.Println(readNextValue(lonely))
}
