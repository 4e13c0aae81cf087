// Package engine defines what an execution engine does for tidemark: given
// planned inputs as locations, it exposes each source as a view, defines the
// job's transforms as views, and writes each sink's rows into a staging
// location. An engine declares what it reads and writes itself (Caps); the
// runner downloads, pipes or extracts only what it cannot. An engine never
// touches bookmark state. Each engine registers itself once (Register, with
// a Kind whose options are its job-file block; registry.go).
// Implementations: engine/duckdb (embedded, default) and engine/spark
// (Spark Connect); engine/enginetest is the suite every one of them passes.
package engine

import (
	"fmt"
	"path"
	"strings"
)

// InputError is bad input the engine found: it names file and line.
type InputError struct {
	Source string
	File   string // key or path
	Line   int64  // 0 when unknown
	Column string // may be empty
	Msg    string
}

func (e *InputError) Error() string {
	s := fmt.Sprintf("source %s: %s", e.Source, e.File)
	if e.Line > 0 {
		s += fmt.Sprintf(" line %d", e.Line)
	}
	if e.Column != "" {
		s += fmt.Sprintf(" column %s", e.Column)
	}
	return s + ": " + e.Msg
}

// PartitionClash is the error for a file of source whose column (a JSON
// object's key when key is set) has the name of one of the file's
// key=value folders: the file's value and the folder's would be one
// column, and one of them lost.
func PartitionClash(source, file, column string, key bool) *InputError {
	what := "the file has a column"
	if key {
		what = "an object has a key"
	}
	return &InputError{Source: source, File: file, Column: column,
		Msg: what + " named like its partition folder (" + column + "=...); one of the two values would be lost: " +
			"rename it or the folder, or set hive_partitioning: false"}
}

// PartitionFolders checks the key=value folders of a hive source's file
// (its key, '/'-separated): a folder whose name holds a second '=' (k=v=w)
// is an error naming the file and the folder, since readers split it
// differently (Spark reads k as "v=w", DuckDB's pattern finds no column)
// and Hive writes an '=' inside a value as %3D.
func PartitionFolders(source, key string) *InputError {
	dir := path.Dir(strings.TrimPrefix(key, "/"))
	if dir == "." {
		return nil
	}
	for _, seg := range strings.Split(dir, "/") {
		k, v, ok := strings.Cut(seg, "=")
		if !ok || k == "" || !strings.Contains(v, "=") {
			continue
		}
		return &InputError{Source: source, File: key, Column: k,
			Msg: fmt.Sprintf("partition folder %q has more than one '=', so its column and value are ambiguous: "+
				"name it %s=%s (Hive writes '=' in a value as %%3D), or set hive_partitioning: false",
				seg, k, strings.ReplaceAll(v, "=", "%3D"))}
	}
	return nil
}
