package spark

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
)

// hiveDefault is the folder value Hive (and both engines) read as NULL.
const hiveDefault = "__HIVE_DEFAULT_PARTITION__"

// partitionType is the type a first run records for the partition column
// key of src, from the values of its key=value folders: BIGINT, DATE or
// TIMESTAMP when every value is one in its plain spelling, else VARCHAR.
// Spark's own inference takes 007 for the integer 7, 1.50 for the double
// 1.5, 1e3 for a decimal and a date beside a timestamp for a timestamp,
// changing the values; the DuckDB engine keeps such values as text (and
// types 7 and -5, 2024-01-01, 2024-01-01 10:00:00 as here). Where DuckDB
// reads a looser spelling as a number or date (0x1F, 2024-1-1), this reads
// the folder's text as it is.
func partitionType(src *engine.Source, key string) bookmark.Type {
	kinds := map[bookmark.Kind]bool{}
	for _, in := range src.Files {
		if in.Size == 0 {
			continue
		}
		v, ok := partitionValue(in.Key, key)
		if !ok || v == hiveDefault {
			continue
		}
		kinds[valueKind(v)] = true
	}
	if len(kinds) == 1 {
		for k := range kinds {
			return bookmark.Scalar(k)
		}
	}
	return bookmark.Scalar(bookmark.Varchar)
}

// partitionValue is the value of the key=value folder of input key k for
// key (case-insensitive), percent-decoded as both engines read it.
func partitionValue(k, key string) (string, bool) {
	for _, seg := range strings.Split(k, "/") {
		name, v, ok := strings.Cut(seg, "=")
		if ok && strings.EqualFold(name, key) {
			if dec, err := url.PathUnescape(v); err == nil {
				v = dec
			}
			return v, true
		}
	}
	return "", false
}

var (
	plainInt       = regexp.MustCompile(`^(0|-?[1-9][0-9]*)$`)
	plainDate      = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)
	plainTimestamp = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,6})?)?$`)
)

// valueKind is the kind a folder value is in its plain spelling.
func valueKind(v string) bookmark.Kind {
	switch {
	case plainInt.MatchString(v):
		if _, err := strconv.ParseInt(v, 10, 64); err == nil {
			return bookmark.BigInt
		}
	case plainDate.MatchString(v):
		if _, err := time.Parse("2006-01-02", v); err == nil {
			return bookmark.Date
		}
	case plainTimestamp.MatchString(v):
		layout := "2006-01-02 15:04"
		if len(v) > len("2006-01-02 15:04") {
			layout = "2006-01-02 15:04:05.999999"
		}
		if _, err := time.Parse(layout, strings.Replace(v, "T", " ", 1)); err == nil {
			return bookmark.Timestamp
		}
	}
	return bookmark.Varchar
}
