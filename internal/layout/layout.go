// Package layout names what tidemark keeps inside a file sink's location,
// which file sources must recognise too (a sink folder below a source's
// root is another job's output, not input).
package layout

import (
	"path/filepath"
	"strings"
)

// MetaDir is the folder of a sink location that holds tidemark's own
// files: the ownership record, staged output, rejects. Readers that skip
// _-prefixed paths (Spark, DuckDB, Athena, Hive) ignore it.
const MetaDir = "_tidemark"

// Join names a key under a location for messages, leaving out the
// location's option query string.
func Join(root, key string) string {
	root = Name(root)
	if strings.HasSuffix(root, "/") {
		return root + key
	}
	return root + "/" + key
}

// Name is a location for messages, without its option query.
func Name(root string) string {
	root, _, _ = strings.Cut(root, "?")
	return root
}

// RealPath resolves the symlinks of the longest part of an absolute path
// that exists and appends the rest, so that a link to a folder and the
// folder compare equal whether or not the sink folder exists yet.
func RealPath(p string) string {
	rest := ""
	for dir := p; ; dir = filepath.Dir(dir) {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		}
		if filepath.Dir(dir) == dir {
			return p
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}
