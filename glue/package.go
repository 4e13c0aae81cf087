package glue

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// python is tidemark's awsglue package, the same files `pip install`
// installs from the repository's glue/python folder.
//
//go:embed python/awsglue/*.py
var python embed.FS

// Package writes the awsglue package into the user's cache folder (once
// per version of its files) and returns the folder to put on PYTHONPATH.
func Package() (string, error) {
	h := sha256.New()
	err := fs.WalkDir(python, "python/awsglue", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := python.ReadFile(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", p, len(b))
		h.Write(b)
		return nil
	})
	if err != nil {
		return "", err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "tidemark", "awsglue-"+hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(filepath.Join(dir, "awsglue", "__init__.py")); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", fmt.Errorf("writing the awsglue package: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".awsglue-")
	if err != nil {
		return "", fmt.Errorf("writing the awsglue package: %w", err)
	}
	defer os.RemoveAll(tmp)
	sub, _ := fs.Sub(python, "python")
	if err := os.CopyFS(tmp, sub); err != nil {
		return "", fmt.Errorf("writing the awsglue package: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(filepath.Join(dir, "awsglue", "__init__.py")); serr == nil {
			return dir, nil // another process wrote it first
		}
		return "", fmt.Errorf("writing the awsglue package: %w", err)
	}
	return dir, nil
}
