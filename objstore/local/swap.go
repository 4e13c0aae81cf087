package local

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"syscall"

	"github.com/tidemark-etl/tidemark/objstore"
)

var (
	_ objstore.Swapper      = (*Store)(nil)
	_ objstore.FolderLister = (*Store)(nil)
)

// ReadVersion reads a file whole; its version is the SHA-256 of its
// content, so a swap compares the content it read with the file's.
func (s *Store) ReadVersion(_ context.Context, key string) ([]byte, string, error) {
	data, err := os.ReadFile(s.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", fmt.Errorf("%s: %w", s.path(key), objstore.ErrNotExist)
	}
	if err != nil {
		return nil, "", err
	}
	return data, contentVersion(data), nil
}

// Swap replaces a file if its content is still version's: under an
// exclusive flock on the folder that holds it, which every Swap there
// takes (a folder, not a lock file: nothing is left beside the key), it
// reads the file, compares, and renames a complete, synced temporary file
// over it. (A plain Put of the key does not take the lock.)
func (s *Store) Swap(_ context.Context, key string, data []byte, version string) error {
	dst := s.path(key)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	lock, err := os.Open(filepath.Dir(dst))
	if err != nil {
		return fmt.Errorf("locking %s: %w", dst, err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("locking %s: %w", dst, err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) //nolint:errcheck // closing releases it too
	cur, err := os.ReadFile(dst)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("replacing %s: %w (it is gone)", dst, objstore.ErrStale)
	}
	if err != nil {
		return fmt.Errorf("replacing %s: %w", dst, err)
	}
	if contentVersion(cur) != version {
		return fmt.Errorf("replacing %s: %w", dst, objstore.ErrStale)
	}
	tmp, err := writeTemp(dst, bytes.NewReader(data))
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := os.Rename(tmp, dst); err != nil {
		return err
	}
	return syncDir(filepath.Dir(dst))
}

func contentVersion(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Folders yields the folders right under prefix, empty ones too.
func (s *Store) Folders(_ context.Context, prefix string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		ents, err := os.ReadDir(s.path(prefix))
		if errors.Is(err, fs.ErrNotExist) {
			return
		}
		if err != nil {
			yield("", fmt.Errorf("listing %s: %w", s.path(prefix), err))
			return
		}
		for _, e := range ents {
			if e.IsDir() && !yield(e.Name(), nil) {
				return
			}
		}
	}
}
