package spark

import (
	"fmt"
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

// checkPartitionValues fails a source read with a recorded schema when a
// file's key=value folder holds a value its partition column's type does
// not hold exactly, naming the file and the column: Spark casts folder
// values to the schema's type, and p=2024-01-02T10:00:00 became the date
// 2024-01-02, p=1.5 an error naming no file. Integers, dates and
// timestamps must be written plainly (as partitionType types them); other
// types are left to Spark's cast.
func checkPartitionValues(src *engine.Source) *engine.InputError {
	if !src.Hive || src.Schema == nil {
		return nil
	}
	hive := hiveNames(src)
	for _, col := range src.Schema {
		if !hive[strings.ToLower(col.Name)] {
			continue
		}
		t, err := bookmark.ParseType(col.Type)
		if err != nil {
			continue
		}
		for _, in := range src.Files {
			v, ok := partitionValue(in.Key, col.Name)
			if !ok || v == hiveDefault || in.Size == 0 || fitsExactly(v, t) {
				continue
			}
			return &engine.InputError{Source: src.Ctx, File: in.Key, Column: col.Name,
				Msg: fmt.Sprintf("partition value %q is not a %s, or would lose something converted to one", v, col.Type)}
		}
	}
	return nil
}

// fitsExactly reports whether folder value v reads as type t without loss.
func fitsExactly(v string, t bookmark.Type) bool {
	switch {
	case t.Integral():
		if !plainInt.MatchString(v) {
			return false
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return t.Kind == bookmark.HugeInt || t.Kind == bookmark.UBigInt || t.Kind == bookmark.UHugeInt
		}
		limits := map[bookmark.Kind][2]int64{bookmark.TinyInt: {-1 << 7, 1<<7 - 1}, bookmark.SmallInt: {-1 << 15, 1<<15 - 1},
			bookmark.Integer: {-1 << 31, 1<<31 - 1}, bookmark.UTinyInt: {0, 1<<8 - 1}, bookmark.USmallInt: {0, 1<<16 - 1},
			bookmark.UInteger: {0, 1<<32 - 1}, bookmark.UBigInt: {0, 1<<63 - 1}, bookmark.UHugeInt: {0, 1<<63 - 1}}
		if l, ok := limits[t.Kind]; ok {
			return n >= l[0] && n <= l[1]
		}
		return true
	case t.Kind == bookmark.Date:
		return valueKind(v) == bookmark.Date
	case t.Kind == bookmark.Timestamp:
		return valueKind(v) == bookmark.Timestamp
	}
	return true
}
