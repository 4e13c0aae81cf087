//go:build unix

package sqltable

import (
	"os"
	"syscall"
)

const pipesWork = true

func makePipe(path string) error { return syscall.Mkfifo(path, 0o600) }

// openPipeReader opens a pipe's read end without waiting for a writer.
func openPipeReader(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// growPipe asks for a 1 MiB pipe buffer (Linux; elsewhere a no-op), so the
// writer and the engine hand over large blocks instead of 64 KiB ones.
func growPipe(f *os.File) {
	const fSetPipeSz = 1031 // F_SETPIPE_SZ
	_, _, _ = syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), fSetPipeSz, 1<<20)
}
