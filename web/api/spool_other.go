//go:build !unix

package api

import "os"

// lockFile does nothing where flock does not exist: two processes could
// upload the same spool at once, which the server's idempotent lines make
// harmless but for the wasted requests.
func lockFile(f *os.File) error { return nil }
