package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tidemark-etl/tidemark/internal/icebergrest"
)

// inRESTCatalog is job with its Iceberg table sales.orders kept in the
// REST catalog at uri, its credential in ORDERS_CATALOG_TOKEN.
func inRESTCatalog(job, uri string) string {
	return strings.Replace(job, "iceberg: {table: sales.orders}",
		fmt.Sprintf("iceberg: {table: sales.orders, catalog: {rest: %q, credential_env: ORDERS_CATALOG_TOKEN}}", uri), 1)
}

// bearerProxy is a proxy in front of a REST catalog that lets through
// only requests carrying the bearer token (Iceberg's reference catalog
// checks none), counting the ones it refused.
func bearerProxy(t *testing.T, target, token string) (uri string, refused *atomic.Int64) {
	t.Helper()
	uri, refused, _ = catalogProxy(t, target, token)
	return uri, refused
}

// catalogProxy is bearerProxy that also, while lose is above zero, lets a
// table commit (POST .../namespaces/NS/tables/TABLE) reach the catalog and
// then answers 503 instead of the catalog's answer: a commit whose outcome
// the client cannot know.
func catalogProxy(t *testing.T, target, token string) (uri string, refused, lose *atomic.Int64) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	refused, lose = &atomic.Int64{}, &atomic.Int64{}
	rp := httputil.NewSingleHostReverseProxy(u)
	commit := regexp.MustCompile(`/namespaces/[^/]+/tables/[^/]+$`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			refused.Add(1)
			http.Error(w, `{"error":{"message":"not authorized","type":"NotAuthorizedException","code":401}}`,
				http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodPost && commit.MatchString(r.URL.Path) && lose.Add(-1) >= 0 {
			rec := httptest.NewRecorder()
			rp.ServeHTTP(rec, r)
			t.Logf("catalog proxy: a commit answered %d by the catalog, 503 to the client", rec.Code)
			http.Error(w, `{"error":{"message":"gateway lost the answer","type":"ServiceUnavailableException","code":503}}`,
				http.StatusServiceUnavailable)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, refused, lose
}

// TestIcebergRESTCatalog: the seed's days into sales.orders kept in
// Iceberg's reference REST catalog (behind a proxy that wants a bearer
// token), with the state in SQLite and in S3 (a store that cannot hold
// tidemark's own catalog). Without the credential variable the run is
// refused naming it, and reads nothing; with it each run commits one
// snapshot that pyiceberg, through the same REST catalog, reads exactly;
// the token appears in no output, log or state.
func TestIcebergRESTCatalog(t *testing.T) {
	t.Parallel()
	for _, ss := range stateStores {
		if ss.name != "sqlite" && ss.name != "s3" {
			continue
		}
		t.Run(ss.name, func(t *testing.T) {
			t.Parallel()
			const token = "tm-rest-token-5f3a9c"
			cat := icebergrest.Start(t)
			uri, refused := bearerProxy(t, cat.URI, token)
			f, state := stateOn(t, local, ss, jobOpts{})
			job := icebergJob(state, f.in.loc(), f.outDir(), "append")
			job = inRESTCatalog(job, uri)
			writeFile(t, f.jobPath, []byte(job))
			var said []string

			monday := f.addCSVs("monday", 10, 40)
			_, r := f.run(nil)
			said = append(said, r.stdout, r.stderr)
			if r.code == 0 || !strings.Contains(r.stderr, "ORDERS_CATALOG_TOKEN") {
				t.Fatalf("run without the credential variable: exit %d, want a failure naming ORDERS_CATALOG_TOKEN\n%v", r.code, r)
			}
			if n := refused.Load(); n != 0 {
				t.Errorf("the run without its credential sent %d requests to the catalog, want none", n)
			}

			f.env = append(f.env, "ORDERS_CATALOG_TOKEN="+token)
			read := []string{"ICEBERG_TOKEN=" + token}
			mon := f.mustRun()
			v := readIceberg(t, uri, read)
			assertIcebergIDs(t, "after Monday", v, monday)
			if got := snapshotRuns(v); !slices.Equal(got, []string{mon.RunID}) {
				t.Errorf("after Monday: snapshots name runs %q, want [%s]", got, mon.RunID)
			}

			tuesday := f.addCSVs("tuesday", 5, 30)
			tue := f.mustRun()
			v = readIceberg(t, uri, read)
			assertIcebergIDs(t, "after Tuesday", v, concat(monday, tuesday))
			if got := snapshotRuns(v); !slices.Equal(got, []string{mon.RunID, tue.RunID}) {
				t.Errorf("after Tuesday: snapshots name runs %q, want [%s %s]", got, mon.RunID, tue.RunID)
			}
			if wed := f.mustRun(); wed.Sinks["orders_sink"].Rows != 0 {
				t.Errorf("Wednesday (nothing new) wrote %d rows", wed.Sinks["orders_sink"].Rows)
			}
			if n := refused.Load(); n != 0 {
				t.Errorf("the catalog refused %d requests of runs that had the credential", n)
			}

			for _, args := range [][]string{{"bookmark", "show", f.jobPath, "--json"}, {"runs", f.jobPath, "--json"},
				{"plan", f.jobPath, "--json"}} {
				r := f.tidemark(nil, args...)
				said = append(said, r.stdout, r.stderr)
			}
			for _, s := range said {
				if strings.Contains(s, token) {
					t.Errorf("the catalog's token appears in a command's output:\n%s", s)
				}
			}
			for _, dir := range []string{f.outDir(), filepath.Dir(state)} {
				if ss.name == "s3" && dir == filepath.Dir(state) {
					continue
				}
				_ = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
					if err != nil || fi.IsDir() {
						return nil
					}
					if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), token) {
						t.Errorf("the catalog's token is written in %s", p)
					}
					return nil
				})
			}
		})
	}
}

// TestIcebergRESTCommitUnknown: the catalog takes a run's commit but its
// answer is lost (503: the outcome is unknown to tidemark). Nothing is
// deleted; the publish, retried, finds the run's snapshot among the
// table's ancestors and adds nothing, so the table holds Monday's rows
// once, in one snapshot, and Tuesday's run adds only Tuesday's.
func TestIcebergRESTCommitUnknown(t *testing.T) {
	t.Parallel()
	const token = "tm-rest-token-unknown"
	cat := icebergrest.Start(t)
	uri, _, lose := catalogProxy(t, cat.URI, token)
	f, state := stateOn(t, local, stateStores[0], jobOpts{})
	job := icebergJob(state, f.in.loc(), f.outDir(), "append")
	job = inRESTCatalog(job, uri)
	writeFile(t, f.jobPath, []byte(job))
	f.env = append(f.env, "ORDERS_CATALOG_TOKEN="+token)
	read := []string{"ICEBERG_TOKEN=" + token}

	monday := f.addCSVs("monday", 10, 40)
	lose.Store(1)
	mon := f.mustRun() // the publish is retried within the run
	if lose.Load() > 0 {
		t.Fatal("the proxy lost no commit answer (the run committed nothing?)")
	}
	v := readIceberg(t, uri, read)
	assertIcebergIDs(t, "after the lost answer (the catalog took the commit)", v, monday)
	if got := snapshotRuns(v); !slices.Equal(got, []string{mon.RunID}) {
		t.Errorf("after Monday: snapshots name runs %q, want [%s] once", got, mon.RunID)
	}

	tuesday := f.addCSVs("tuesday", 5, 30)
	tue := f.mustRun()
	v = readIceberg(t, uri, read)
	assertIcebergIDs(t, "after Tuesday", v, concat(monday, tuesday))
	if got := snapshotRuns(v); !slices.Equal(got, []string{mon.RunID, tue.RunID}) {
		t.Errorf("after Tuesday: snapshots name runs %q, want [%s %s]", got, mon.RunID, tue.RunID)
	}
	if left := stagedUnder(t, f.outDir()); len(left) > 0 {
		t.Errorf("staged files left: %v", left)
	}
}

// TestIcebergRESTSourceChain: a job writes sales.orders through a REST
// catalog and a second job, its state in S3 (which holds no catalog of
// its own), reads the table incrementally through the same catalog into
// Parquet: each run reads exactly the rows added since the last, and
// without its credential variable the reader is refused naming it.
func TestIcebergRESTSourceChain(t *testing.T) {
	t.Parallel()
	const token = "tm-rest-token-chain"
	cat := icebergrest.Start(t)
	uri, _ := bearerProxy(t, cat.URI, token)
	f, state := stateOn(t, local, stateStores[0], jobOpts{})
	writeFile(t, f.jobPath, []byte(inRESTCatalog(icebergJob(state, f.in.loc(), f.outDir(), "append"), uri)))
	f.env = append(f.env, "ORDERS_CATALOG_TOKEN="+token)

	var s3 stateStore
	for _, ss := range stateStores {
		if ss.name == "s3" {
			s3 = ss
		}
	}
	readerState, readerEnv := s3.url(t)
	out := filepath.Join(t.TempDir(), "copy")
	reader := filepath.Join(filepath.Dir(f.jobPath), "reader.yaml")
	writeFile(t, reader, []byte(inRESTCatalog(icebergReaderJob(readerState, out, ""), uri)))
	run := func(what string, env []string, code int) result {
		t.Helper()
		r := f.tidemark(append(readerEnv, env...), "run", reader, "--json")
		if r.code != code {
			t.Fatalf("%s: reader run exit %d, want %d\n%v", what, r.code, code, r)
		}
		return r
	}
	copyFormat := sinkFormat{format: "parquet"}
	auth := []string{"ORDERS_CATALOG_TOKEN=" + token}

	monday := f.addCSVs("monday", 3, 20)
	f.mustRun()
	r := run("without the credential", []string{"ORDERS_CATALOG_TOKEN="}, 1)
	if !strings.Contains(r.stdout+r.stderr, "ORDERS_CATALOG_TOKEN") || strings.Contains(r.stdout+r.stderr, token) {
		t.Errorf("the reader without its credential: want a refusal naming ORDERS_CATALOG_TOKEN, never the token\n%v", r)
	}
	first := decodeOne[runSummary](t, run("run 1", auth, 0))
	if got := first.Sources["orders_ice"].Rows; got != int64(len(monday)) {
		t.Errorf("run 1 read %d rows, want %d", got, len(monday))
	}
	assertRecords(t, "the copy after run 1", readSink(t, out, copyFormat), monday)

	tuesday := f.addCSVs("tuesday", 2, 15)
	f.mustRun()
	second := decodeOne[runSummary](t, run("run 2", auth, 0))
	if got := second.Sources["orders_ice"].Rows; got != int64(len(tuesday)) {
		t.Errorf("run 2 read %d rows, want Tuesday's %d", got, len(tuesday))
	}
	assertRecords(t, "the copy after run 2", readSink(t, out, copyFormat), concat(monday, tuesday))
	third := decodeOne[runSummary](t, run("run 3", auth, 0))
	if got := third.Sources["orders_ice"].Rows; got != 0 {
		t.Errorf("run 3 (nothing new) read %d rows", got)
	}
}
