package lineage

import (
	"testing"

	"github.com/tidemark-etl/tidemark/job"
)

type fakeFiles struct{ path string }

func (f fakeFiles) Place() (string, map[string]string) { return f.path, nil }
func (fakeFiles) ApplyDefaults(*job.Spec)              {}
func (fakeFiles) Validate(*job.Check)                  {}

type fakeTable struct{ conn, table string }

func (f fakeTable) TablePlace() (string, string) { return f.conn, f.table }
func (fakeTable) ApplyDefaults(*job.Spec)        {}
func (fakeTable) Validate(*job.Check)            {}

// TestDatasetNames: datasets are named by the OpenLineage naming
// conventions.
func TestDatasetNames(t *testing.T) {
	for _, tc := range []struct {
		c        job.Config
		ns, name string
		uri      string
	}{
		{fakeFiles{"s3://sales-bucket/landing/orders/"}, "s3://sales-bucket", "landing/orders", "s3://sales-bucket/landing/orders"},
		{fakeFiles{"s3://sales-bucket"}, "s3://sales-bucket", "/", "s3://sales-bucket"},
		{fakeFiles{"in/orders"}, "file", "/jobs/in/orders", "file:///jobs/in/orders"},
		{fakeFiles{"/data/x/"}, "file", "/data/x", "file:///data/x"},
		{fakeFiles{"file:///data/y"}, "file", "/data/y", "file:///data/y"},
		{fakeTable{"postgres://etl@db.internal:6432/shop", "sales.orders"}, "postgres://db.internal:6432", "shop.sales.orders", "postgres://db.internal:6432/shop"},
		{fakeTable{"postgresql://etl@db.internal/shop", "orders"}, "postgres://db.internal:5432", "shop.public.orders", "postgres://db.internal:5432/shop"},
		{fakeTable{"mysql://etl@127.0.0.1:3307/shop", "orders"}, "mysql://127.0.0.1:3307", "shop.orders", "mysql://127.0.0.1:3307/shop"},
		{fakeTable{"mysql://etl@maria/shop", "other.orders"}, "mysql://maria:3306", "other.orders", "mysql://maria:3306/shop"},
		{fakeTable{"sqlite:src.db", "orders"}, "sqlite:///jobs/src.db", "orders", "sqlite:///jobs/src.db"},
	} {
		d, ok := datasetOf("/jobs", tc.c)
		if !ok {
			t.Errorf("%+v: no dataset", tc.c)
			continue
		}
		if d.namespace != tc.ns || d.name != tc.name || d.uri != tc.uri {
			t.Errorf("%+v: got %q %q %q, want %q %q %q", tc.c, d.namespace, d.name, d.uri, tc.ns, tc.name, tc.uri)
		}
	}
	if _, ok := datasetOf("/jobs", fakeTable{"postgres://h/db", ""}); ok {
		t.Errorf("a query source got a dataset")
	}
}
