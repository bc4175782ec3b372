// A name shadowed in an inner block: both values are part of the locals.
package main

import "fmt"

func main() {
	x := 1
	for i := 0; i < 2; i++ {
		x := x + 10
		fmt.Println(x, i) // LINE:shadow
	}
	fmt.Println(x)
}
