//go:build race

package main

// raceEnabled is true in a test binary built with the race detector, whose
// runs are many times slower and whose heap is not the program's.
const raceEnabled = true
