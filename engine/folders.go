package engine

import (
	"io/fs"
	"path/filepath"
	"strings"
)

// HasFolder reports whether a folder named name is anywhere under dir; with
// fold, in any case. Engines use it to see which partition folders a write
// made (a value written as Hive's NULL folder, or a text read back as NULL).
func HasFolder(dir, name string, fold bool) bool {
	found := false
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && (d.Name() == name || fold && strings.EqualFold(d.Name(), name)) {
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	return found
}
