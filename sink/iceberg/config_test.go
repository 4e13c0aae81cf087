package iceberg_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/sink"
	"github.com/tidemark-etl/tidemark/sink/iceberg"
	"github.com/tidemark-etl/tidemark/store"
)

// parse parses a job with one Iceberg sink whose block lines are given.
func parse(t *testing.T, lines ...string) (*job.Spec, error) {
	t.Helper()
	dir := t.TempDir()
	text := "job: j\nsources:\n  - ctx: in\n    path: " + filepath.Join(dir, "in") + "\n    format: csv\nsinks:\n  - ctx: out\n"
	for _, l := range lines {
		text += "    " + l + "\n"
	}
	return job.Parse(filepath.Join(dir, "job.yaml"), []byte(text))
}

// TestConfigErrors: a bad block is refused naming the key and saying why.
func TestConfigErrors(t *testing.T) {
	const password = "s3cr3t"
	for _, c := range []struct {
		lines []string
		want  []string
	}{
		{[]string{"iceberg: {table: orders}", "path: /tmp/x"}, []string{"iceberg.table", "DB.TABLE"}},
		{[]string{"iceberg: {table: sales.orders}"}, []string{"path", "required"}},
		{[]string{"iceberg: {table: sales.orders}", "path: s3://b/p/"}, []string{"path", "local"}},
		{[]string{"iceberg: {table: sales.orders, catalog: {warehouse: w}}", "path: /tmp/x"},
			[]string{"iceberg.catalog.rest", "required"}},
		{[]string{"iceberg: {table: sales.orders, catalog: {rest: \"ftp://h:8181\"}}", "path: /tmp/x"},
			[]string{"iceberg.catalog.rest", "base URI"}},
		{[]string{"iceberg: {table: sales.orders, catalog: {rest: \"http://h:8181?warehouse=w\"}}", "path: /tmp/x"},
			[]string{"iceberg.catalog.rest", "no ?query"}},
		{[]string{"iceberg: {table: sales.orders, catalog: {rest: \"https://alice:s3cr3t@h/api\"}}", "path: /tmp/x"},
			[]string{"iceberg.catalog.rest", "credential_env"}},
		{[]string{"iceberg: {table: sales.orders, catalog: {rest: \"http://h:8181\", credential_env: \"id:s3cr3t\"}}", "path: /tmp/x"},
			[]string{"iceberg.catalog.credential_env", "NAME of an environment variable"}},
		{[]string{"iceberg: {table: sales.orders}", "path: /tmp/x", "mode: merge"}, []string{"merge_keys", "needs"}},
		{[]string{"iceberg: {table: sales.orders}", "path: /tmp/x", "mode: upsert"}, []string{"mode", "upsert"}},
		{[]string{"iceberg: {table: sales.orders}", "path: /tmp/x", "merge_keys: [id]"}, []string{"merge_keys", "only for mode merge"}},
		{[]string{"iceberg: {table: sales.orders}", "path: /tmp/x", "partition_by: [week(ts)]"},
			[]string{"partition_by[0]", "unknown transform week"}},
		{[]string{"iceberg: {table: sales.orders}", "path: /tmp/x", "partition_by: [id, bucket(0, id)]"},
			[]string{"partition_by[1]", "bucket", "positive"}},
		{[]string{"iceberg: {table: sales.orders}", "path: /tmp/x", "partition_by: [day(ts), day(ts)]"},
			[]string{"partition_by[1]", "repeats partition_by[0]"}},
		{[]string{"iceberg: {table: sales.orders}", "path: /tmp/x", "partition_by: [\"a-b\"]"},
			[]string{"partition_by[0]", "a column or a transform"}},
	} {
		_, err := parse(t, c.lines...)
		if err == nil {
			t.Errorf("%q: parsed, want an error mentioning %q", c.lines, c.want)
			continue
		}
		if strings.Contains(err.Error(), password) {
			t.Errorf("%q: the error shows the credential: %v", c.lines, err)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: error %q does not mention %q", c.lines, err, w)
			}
		}
	}
	s, err := parse(t, "iceberg: {table: sales.orders}", "path: /tmp/x", "mode: merge", "merge_keys: [id]")
	if err != nil {
		t.Fatalf("a good block: %v", err)
	}
	if _, err := parse(t, "iceberg: {table: sales.orders, catalog: {rest: \"https://cat.example/api/catalog\", "+
		"warehouse: lake, credential_env: CATALOG_CRED}}", "path: /tmp/x"); err != nil {
		t.Fatalf("a good REST catalog block: %v", err)
	}
	// The transforms as the README writes them, in a YAML flow sequence
	// that splits bucket(16, id) at its comma.
	p, err := parse(t, "iceberg: {table: sales.orders}", "path: /tmp/x", "mode: overwrite_partitions",
		"partition_by: [product, day(ts), month(ts), year(d), hour(ts), bucket(16, id), truncate(4, s)]")
	if err != nil {
		t.Fatalf("partition_by with every transform: %v", err)
	}
	want := []string{"product", "day(ts)", "month(ts)", "year(d)", "hour(ts)", "bucket(16, id)", "truncate(4, s)"}
	if got := p.Sinks[0].Config.(*iceberg.Config).PartitionBy; !slices.Equal(got, want) {
		t.Errorf("partition_by reads as %q, want %q", got, want)
	}
	if got := sink.KindOf(s.Sinks[0]); got != iceberg.Name {
		t.Errorf("the block's kind is %q, want %q", got, iceberg.Name)
	}
}

// TestStateWithoutCatalog: a state store that cannot hold the own catalog
// (S3, memory) is refused at the claim, naming the limitation, and nothing
// is written at the table's folder.
func TestStateWithoutCatalog(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tbl")
	s, err := parse(t, "iceberg: {table: sales.orders}", "path: "+dir)
	if err != nil {
		t.Fatal(err)
	}
	k, err := sink.Open(t.Context(), s, s.Sinks[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, loc := range []string{"s3://bucket/state/", "memory"} {
		err := k.Claim(t.Context(), sink.Claim{Job: "j", Identity: store.Identity{ID: "x", Location: loc}, RunID: "r1"})
		if !errors.Is(err, iceberg.ErrNoOwnCatalog) || !strings.Contains(err.Error(), loc) {
			t.Errorf("claim with the state at %s: %v, want ErrNoOwnCatalog naming the store", loc, err)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the refused claims left %s (%v), want nothing written", dir, err)
	}
}
