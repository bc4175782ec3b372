// A small Go program for delve tests: a struct, goroutines and a loop.
// Line numbers are referenced by the tests through the "LINE:" markers.
package main

import (
	"fmt"
	"sync"
)

type Point struct {
	X     int
	Y     int
	Label string
}

var globalCounter = 7

func square(value int) int {
	result := value * value // LINE:square_body
	return result
}

func sumOfSquares(p *Point) int {
	total := square(p.X) // LINE:call_square
	total += square(p.Y)
	return total // LINE:sum_return
}

func worker(id int, results chan<- int, wg *sync.WaitGroup) {
	defer wg.Done()
	results <- id * 10 // LINE:worker_body
}

func main() {
	origin := Point{X: 3, Y: 4, Label: "origin"}
	accumulator := 0
	for i := 0; i < 5; i++ {
		accumulator += i // LINE:loop_body
		globalCounter++
	}
	var wg sync.WaitGroup
	results := make(chan int, 2)
	for id := 1; id <= 2; id++ {
		wg.Add(1)
		go worker(id, results, &wg)
	}
	wg.Wait()
	close(results)
	fromWorkers := 0
	for r := range results {
		fromWorkers += r
	}
	distanceSquared := sumOfSquares(&origin) // LINE:after_loop
	fmt.Printf("accumulator=%d distance_squared=%d workers=%d\n", accumulator, distanceSquared, fromWorkers)
}
