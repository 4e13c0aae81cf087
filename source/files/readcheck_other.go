//go:build !linux

package files

import "os"

// statStamp stats path: size and mtime only on this platform.
func statStamp(path string) (stamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return stamp{}, err
	}
	return stamp{size: fi.Size(), mtime: fi.ModTime().UnixNano()}, nil
}
