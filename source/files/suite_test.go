package files_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/engine/duckdb"
	"github.com/tidemark-etl/tidemark/internal/s3test"
	"github.com/tidemark-etl/tidemark/objstore"
	_ "github.com/tidemark-etl/tidemark/objstore/local"
	_ "github.com/tidemark-etl/tidemark/objstore/s3"
	"github.com/tidemark-etl/tidemark/sink/sinktest"
	_ "github.com/tidemark-etl/tidemark/source/files"
	"github.com/tidemark-etl/tidemark/source/sourcetest"
)

// TestSuite runs the source suite on a local folder and an S3 prefix,
// with the state in each shipped store.
func TestSuite(t *testing.T) {
	srv := s3test.Start(t)
	stores := sinktest.Stores(t, srv)
	bucket := srv.NewBucket(t)
	n := 0
	for _, where := range []string{"local", "s3"} {
		for _, tracking := range []string{"exact", "timestamp"} {
			t.Run(where+"/"+tracking, func(t *testing.T) {
				sourcetest.Run(t, sourcetest.Kind{Engine: openDuckDB, New: func(t *testing.T) sourcetest.Input {
					n++
					if where == "s3" {
						prefix := fmt.Sprintf("in-%d", n)
						return folder(t, "s3://"+bucket+"/"+prefix+"/", tracking, func(key string) string {
							return srv.ObjectPath(bucket, prefix+"/"+key)
						})
					}
					root := filepath.Join(t.TempDir(), "in")
					if err := os.MkdirAll(root, 0o755); err != nil {
						t.Fatal(err)
					}
					return folder(t, root, tracking, func(key string) string { return filepath.Join(root, key) })
				}}, stores)
			})
		}
	}
}

func openDuckDB(t *testing.T) engine.Engine {
	t.Helper()
	e, err := duckdb.New(duckdb.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// folder is a folder of CSV files at root, read with tracking; file is
// where the file of a key is on disk (for setting its modification time).
func folder(t *testing.T, root, tracking string, file func(key string) string) sourcetest.Input {
	t.Helper()
	objs, err := objstore.Open(t.Context(), root, nil)
	if err != nil {
		t.Fatal(err)
	}
	var last string       // the key Add wrote last
	var lastRows []string // its rows
	var n int             // files written
	at := time.Now().Add(-time.Hour).Truncate(time.Second)
	put := func(t *testing.T, key string, rows []string) {
		text := "id,v\n"
		for _, r := range rows {
			id, v, _ := strings.Cut(r, ":")
			text += id + "," + v + "\n"
		}
		if err := objs.Put(t.Context(), key, strings.NewReader(text)); err != nil {
			t.Fatal(err)
		}
		// Each write is a minute later than the last: listing order is
		// the order of writing.
		n++
		mt := at.Add(time.Duration(n) * time.Minute)
		if err := os.Chtimes(file(key), mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	block := func(format string) func(ctx string) string {
		return func(ctx string) string {
			return fmt.Sprintf("  - ctx: %s\n    path: %s\n    format: %s\n    tracking: %s", ctx, root, format, tracking)
		}
	}
	return sourcetest.Input{
		Block:   block("csv"),
		Changed: block("json"),
		Add: func(t *testing.T, rows ...string) {
			last, lastRows = fmt.Sprintf("f%03d.csv", n), rows
			put(t, last, rows)
		},
		Modify: func(t *testing.T, rows ...string) {
			lastRows = append(lastRows, rows...)
			put(t, last, lastRows)
		},
		Remove: func(t *testing.T) {
			if err := objs.Delete(t.Context(), last); err != nil {
				t.Fatal(err)
			}
		},
		Snapshot: func(t *testing.T) string {
			var b strings.Builder
			for o, err := range objs.List(t.Context(), "") {
				if err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&b, "%s %d %s %s; ", o.Key, o.Size, o.ModTime.UTC().Format(time.RFC3339Nano), o.ETag)
			}
			return b.String()
		},
	}
}
