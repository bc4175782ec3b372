// Goroutines reaching one breakpoint: `stagger` N goroutines 50 ms apart, or
// `barrier` N released together (argv: mode, count).
package main

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

func work(index int, release chan struct{}, done *sync.WaitGroup) int {
	defer done.Done()
	if release != nil {
		<-release
	} else {
		time.Sleep(time.Duration(index+1) * 50 * time.Millisecond)
	}
	value := index * 10 // @hit
	return value
}

func main() {
	mode, count := "stagger", 10
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	if len(os.Args) > 2 {
		count, _ = strconv.Atoi(os.Args[2])
	}
	var release chan struct{}
	if mode == "barrier" {
		release = make(chan struct{})
	}
	var done sync.WaitGroup
	for i := 0; i < count; i++ {
		done.Add(1)
		go work(i, release, &done)
	}
	if release != nil {
		time.Sleep(100 * time.Millisecond)
		close(release)
	}
	done.Wait()
	fmt.Println("all done")
}
