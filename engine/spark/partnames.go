package spark

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tidemark-etl/tidemark/engine"
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
		v = unescapeHive(v)
		if v == emptyText {
			v = ""
		}
		name := duckPart(unescapeHive(k)) + "=" + duckPart(v)
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

// emptyText is what a sink writes for a partition column's empty text:
// Spark writes "" into the folder of NULLs (p=__HIVE_DEFAULT_PARTITION__),
// so that it would read back as NULL, where the DuckDB engine writes p=.
// respellPartitions names its folder p=; partitionTexts refuses a value
// that is this text itself.
const emptyText = "__TIDEMARK_EMPTY_TEXT__"

// partitionTexts fails sink s, written from view from (of cols), when a
// partition column holds a text that would come back as another value:
// __HIVE_DEFAULT_PARTITION__, the name of the folder of its NULLs (read
// back as NULL; beside NULLs, Spark's write fails), or emptyText, or
// NULL in any case (its folder p=NULL DuckDB reads as NULL). The
// query runs only when the write failed or made such a folder.
func (x *execution) partitionTexts(ctx context.Context, s *engine.Sink, from string, cols []column, failed bool) error {
	dir, err := engine.LocalPath(s.Location)
	if err != nil {
		return nil
	}
	for _, c := range cols {
		if !isPartition(s, c.name) || c.typ != "string" {
			continue
		}
		for _, text := range []string{hiveDefault, emptyText} {
			if !failed && !engine.HasFolder(dir, c.name+"="+text, false) {
				continue
			}
			n, err := x.count(ctx, fmt.Sprintf("SELECT count(*) FROM %s WHERE %s = %s", quoteIdent(from), quoteIdent(c.name), hexString(text)))
			if err != nil {
				return x.wrap(ctx, err, "sink %s: checking partition column %s", s.Ctx, c.name)
			}
			if n > 0 {
				return fmt.Errorf("sink %s: partition column %s holds the text %q in %d rows: that is the name of the folder of "+
					"its NULLs (or of its empty texts), so those rows would be read back as another value; "+
					"map the text to another value in a transform", s.Ctx, c.name, text, n)
			}
		}
		if !failed && !engine.HasFolder(dir, c.name+"=null", true) {
			continue
		}
		rows, err := x.queryRows(ctx, fmt.Sprintf("SELECT min(%[1]s), count(*) FROM %[2]s WHERE upper(%[1]s) = 'NULL'", quoteIdent(c.name), quoteIdent(from)))
		if err != nil {
			return x.wrap(ctx, err, "sink %s: checking partition column %s", s.Ctx, c.name)
		}
		if len(rows) == 1 && len(rows[0]) == 2 && toInt(rows[0][1]) > 0 {
			text, _ := rows[0][0].(string)
			return fmt.Errorf("sink %s: partition column %s holds the text %q in %d rows: it is written in the folder %s=%s, "+
				"which DuckDB reads back as NULL; map the text to another value in a transform", s.Ctx, c.name, text, toInt(rows[0][1]), c.name, text)
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
