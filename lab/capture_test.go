package lab

import "testing"

// capture writes a run's stdout as a fixture of its adapter.
func (lc *labCase) capture(t *testing.T, out *runOutput) {}
