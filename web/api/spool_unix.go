//go:build unix

package api

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on f without waiting; the lock goes
// with the file's close or the process's end.
func lockFile(f *os.File) error {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return ErrSpoolBusy
		}
		return fmt.Errorf("api: spool: lock: %w", err)
	}
	return nil
}
