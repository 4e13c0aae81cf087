package lineage

import (
	"testing"

	"github.com/tidemark-etl/tidemark/job"
)

// placed is a block of a kind these tests make up, which names its
// dataset itself.
type placed struct{ place job.Place }

func (p placed) Place(*job.Spec) job.Place { return p.place }
func (placed) ApplyDefaults(*job.Spec)     {}
func (placed) Validate(*job.Check)         {}

// unplaced is a block that says nothing of its place.
type unplaced struct{}

func (unplaced) ApplyDefaults(*job.Spec) {}
func (unplaced) Validate(*job.Check)     {}

// TestDatasetFromTheKind: a block's dataset is the one its kind names
// (job.Placer), whatever the kind; a block that names none has none.
func TestDatasetFromTheKind(t *testing.T) {
	spec := &job.Spec{Dir: "/jobs"}
	want := job.Dataset{Namespace: "kafka://broker:9092", Name: "orders", SourceName: "kafka://broker:9092", URI: "kafka://broker:9092"}
	d, ok := datasetOf(spec, placed{job.Place{Dataset: want}})
	if !ok || d.namespace != want.Namespace || d.name != want.Name || d.sourceName != want.SourceName || d.uri != want.URI {
		t.Errorf("got %+v %v, want %+v", d, ok, want)
	}
	if _, ok := datasetOf(spec, placed{job.Place{Folder: "/x"}}); ok {
		t.Errorf("a place without a dataset got one")
	}
	if _, ok := datasetOf(spec, unplaced{}); ok {
		t.Errorf("a block without a place got a dataset")
	}
}

// TestFolderDatasetNames: folders are named by the OpenLineage naming
// conventions (tables: internal/sqldb's TestDataset).
func TestFolderDatasetNames(t *testing.T) {
	spec := &job.Spec{Dir: "/jobs"}
	for _, tc := range []struct {
		path          string
		ns, name, uri string
	}{
		{"s3://sales-bucket/landing/orders/", "s3://sales-bucket", "landing/orders", "s3://sales-bucket/landing/orders"},
		{"s3://sales-bucket", "s3://sales-bucket", "/", "s3://sales-bucket"},
		{"in/orders", "file", "/jobs/in/orders", "file:///jobs/in/orders"},
		{"/data/x/", "file", "/data/x", "file:///data/x"},
		{"file:///data/y", "file", "/data/y", "file:///data/y"},
	} {
		d, ok := datasetOf(spec, placed{job.FolderPlace(spec, tc.path, nil)})
		if !ok {
			t.Errorf("%s: no dataset", tc.path)
			continue
		}
		if d.namespace != tc.ns || d.name != tc.name || d.uri != tc.uri {
			t.Errorf("%s: got %q %q %q, want %q %q %q", tc.path, d.namespace, d.name, d.uri, tc.ns, tc.name, tc.uri)
		}
	}
}
