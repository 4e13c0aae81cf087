package local

import (
	"os"
	"syscall"
)

// WithoutHardLinks makes Create act as on a file system without hard
// links (link fails with EPERM) until restore is called.
func WithoutHardLinks() (restore func()) {
	link = func(oldname, newname string) error {
		return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: syscall.EPERM}
	}
	return func() { link = os.Link }
}
