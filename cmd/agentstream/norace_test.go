//go:build !race

package main

// raceEnabled is true in a test binary built with the race detector.
const raceEnabled = false
