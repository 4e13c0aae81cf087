package spark

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// respellPartitions renames the key=value folders Spark wrote under dir to
// the names the DuckDB engine gives the same values: Spark escapes only
// Hive's few characters (a space, é, + or , stay as they are), DuckDB
// percent-encodes every byte but letters, digits and -._~. The same value
// then lands in the same folder whichever engine wrote it, so that
// overwrite_partitions replaces it and a job that changes engines writes
// no second folder for it.
func respellPartitions(dir string) error {
	var dirs []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case p == dir || !d.IsDir():
		case !strings.Contains(d.Name(), "="):
			return fs.SkipDir // Spark's own (_temporary), never published
		default:
			dirs = append(dirs, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	// Deepest first: renaming a folder leaves the paths above it valid.
	for i := len(dirs) - 1; i >= 0; i-- {
		p := dirs[i]
		k, v, _ := strings.Cut(filepath.Base(p), "=")
		name := duckPart(unescapeHive(k)) + "=" + duckPart(unescapeHive(v))
		if name == filepath.Base(p) {
			continue
		}
		to := filepath.Join(filepath.Dir(p), name)
		if _, err := os.Lstat(to); err == nil {
			return fmt.Errorf("partition folders %s and %s name the same value", filepath.Base(p), name)
		}
		if err := os.Rename(p, to); err != nil {
			return err
		}
	}
	return nil
}

// unescapeHive undoes Hive's escaping of a path name (%XX for a byte).
func unescapeHive(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(n))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// duckPart percent-encodes s as the DuckDB engine names partition folders:
// every byte but A-Z a-z 0-9 - . _ ~.
func duckPart(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}
