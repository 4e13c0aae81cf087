package files

import (
	"os"
	"syscall"
)

// statStamp stats path.
func statStamp(path string) (stamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return stamp{}, err
	}
	s := stamp{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.ctime = st.Ctim.Nano()
		s.dev, s.ino = uint64(st.Dev), st.Ino
	}
	return s, nil
}
