package local

import (
	"os"
	"syscall"
)

// WithoutHardLinks makes Create act as on a file system without hard
// links (hardLink fails with EPERM) until restore is called.
func WithoutHardLinks() (restore func()) {
	hardLink = func(oldname, newname string) error {
		return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: syscall.EPERM}
	}
	return func() { hardLink = os.Link }
}
