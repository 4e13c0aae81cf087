package files_test

import (
	"encoding/csv"
	"fmt"
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
	_ "github.com/tidemark-etl/tidemark/sink/files"
	"github.com/tidemark-etl/tidemark/sink/sinktest"
)

// TestSuite runs the sink suite on a local folder and an S3 prefix, with
// the state in each shipped store. The sink reaches S3 through a proxy
// that holds every CreateMultipartUpload back a little, as a busy service
// would: an upload sent while the engine writes is then created after the
// engine returned.
func TestSuite(t *testing.T) {
	srv := s3test.Start(t)
	stores := sinktest.Stores(t, srv)
	bucket := srv.NewBucket(t)
	proxy := s3test.StartProxy(t, srv.Endpoint)
	proxy.Delay(1<<30, 150*time.Millisecond, "CreateMultipartUpload")
	n := 0
	for _, where := range []string{"local", "s3"} {
		t.Run(where, func(t *testing.T) {
			sinktest.Run(t, sinktest.Kind{Engine: openDuckDB, New: func(t *testing.T) sinktest.Place {
				n++
				if where == "s3" {
					return folder(t, fmt.Sprintf("s3://%s/out-%d/", bucket, n), proxy.URL)
				}
				return folder(t, filepath.Join(t.TempDir(), "out"), "")
			}}, stores)
		})
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

// folder is a file sink location at root, read back through objstore;
// the sink reaches it at endpoint ("": the default).
func folder(t *testing.T, root, endpoint string) sinktest.Place {
	t.Helper()
	objs, err := objstore.Open(t.Context(), root, nil)
	if err != nil {
		t.Fatal(err)
	}
	return sinktest.Place{
		Block: func(ctx, mode string) string {
			b := fmt.Sprintf("  - ctx: %s\n    path: %s\n    format: csv\n    mode: %s", ctx, root, mode)
			if endpoint != "" {
				b += "\n    s3: {endpoint: \"" + endpoint + "\"}"
			}
			return b
		},
		Rows: func(t *testing.T) []string {
			var rows []string
			for o, err := range objs.List(t.Context(), "") {
				if err != nil {
					t.Fatal(err)
				}
				rc, err := objs.Open(t.Context(), o.Key)
				if err != nil {
					t.Fatal(err)
				}
				recs, err := csv.NewReader(rc).ReadAll()
				rc.Close()
				if err != nil {
					t.Fatalf("reading %s: %v", o.Key, err)
				}
				for i, r := range recs {
					if i > 0 || r[0] != "id" { // the header
						rows = append(rows, strings.Join(r, ":"))
					}
				}
			}
			return rows
		},
		Staged: func(t *testing.T, runID string) []string {
			var got []string
			for o, err := range objs.List(t.Context(), "_tidemark/staging/"+runID+"/") {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, o.Key)
			}
			if a, ok := objs.(objstore.UploadAborter); ok {
				// Counts the run's incomplete uploads without aborting them.
				if _, err := a.AbortStaleUploads(t.Context(), "", 0, func(key string) bool {
					if strings.Contains(key, runID) {
						got = append(got, "upload "+key)
					}
					return false
				}); err != nil {
					t.Fatal(err)
				}
			}
			return got
		},
		Lose: func(t *testing.T, runID string) {
			if err := objs.DeletePrefix(t.Context(), "_tidemark/staging/"+runID+"/"); err != nil {
				t.Fatal(err)
			}
			if a, ok := objs.(objstore.UploadAborter); ok {
				if _, err := a.AbortStaleUploads(t.Context(), "", 0, func(key string) bool {
					return strings.Contains(key, runID)
				}); err != nil {
					t.Fatal(err)
				}
			}
		},
	}
}
