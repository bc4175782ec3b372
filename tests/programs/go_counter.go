// Runs until killed, printing a counter, for attach and pause tests.
package main

import (
	"fmt"
	"time"
)

var ticks = 0

func tick() {
	ticks++ // LINE:tick
}

func main() {
	for {
		tick()
		fmt.Printf("tick %d\n", ticks)
		time.Sleep(100 * time.Millisecond)
	}
}
