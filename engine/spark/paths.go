package spark

import (
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"strings"

	"github.com/tidemark-etl/tidemark/engine"
)

// sparkPath is the path Spark reads or writes for a location: file:/abs
// for a local path or file:// URL, s3a://bucket/key for s3://. glob
// escapes the characters Hadoop would take for a pattern (inputs only:
// Spark globs what it reads, not what it writes).
func sparkPath(loc string, glob bool) (string, error) {
	var p string
	switch engine.Scheme(loc) {
	case "file":
		lp, err := engine.LocalPath(loc)
		if err != nil {
			return "", err
		}
		abs, err := filepath.Abs(lp)
		if err != nil {
			return "", fmt.Errorf("location %s: %w", loc, err)
		}
		p = "file:" + filepath.ToSlash(abs)
	case "s3", "s3a":
		p = "s3a://" + loc[strings.Index(loc, "://")+3:]
	default:
		return "", fmt.Errorf("location %s: the spark engine does not read or write %s:// locations", loc, engine.Scheme(loc))
	}
	if glob {
		p = escapeGlob(p)
	}
	return p, nil
}

// escapeGlob escapes Hadoop's glob characters.
func escapeGlob(p string) string {
	var b strings.Builder
	for _, r := range p {
		if strings.ContainsRune(`\*?[]{}`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// filePathKey normalizes a path as Spark's _metadata.file_path gives it
// (a URI, percent-encoded) or as sparkPath spells it, for matching the
// two.
func filePathKey(p string) string {
	if u, err := url.Parse(p); err == nil && u.Scheme != "" {
		host := u.Host
		return strings.TrimPrefix(u.Scheme, "s3") + "|" + host + "|" + path.Clean(u.Path)
	}
	return p
}
