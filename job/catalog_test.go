package job_test

import (
	"path/filepath"
	"strings"
	"testing"

	. "github.com/tidemark-etl/tidemark/job"
)

// TestCatalogSourceKeys: a catalog source refuses the keys its table
// gives, and a predicate that does not parse, at the key's line.
func TestCatalogSourceKeys(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ extra, want string }{
		{"    path: x\n", "takes its path from the table"},
		{"    format: csv\n", "takes its format from the table"},
		{"    options: {header: true}\n", "takes its options from the table"},
		{"    push_down_predicate: \"year = \"\n", "push_down_predicate"},
	} {
		yaml := "job: j\nsources:\n  - ctx: s\n    catalog: sales_db.orders_raw\n" + tc.extra +
			"sinks:\n  - ctx: out\n    path: " + filepath.Join(dir, "out") + "\n"
		_, err := Parse(filepath.Join(dir, "job.yaml"), []byte(yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), ":5") {
			t.Errorf("job with %q: %v, want an error at line 5 with %q", tc.extra, err, tc.want)
		}
	}
	yaml := "job: j\nsources:\n  - ctx: s\n    path: in\n    push_down_predicate: \"a = '1'\"\n" +
		"sinks:\n  - ctx: out\n    path: " + filepath.Join(dir, "out") + "\n"
	if _, err := Parse(filepath.Join(dir, "job.yaml"), []byte(yaml)); err == nil || !strings.Contains(err.Error(), "needs catalog: DB.TABLE") {
		t.Errorf("push_down_predicate on a path source: %v", err)
	}
}

// TestSinkCatalogKeys: a sink's catalog: block needs a DB.TABLE and update:
// true, each error at its key.
func TestSinkCatalogKeys(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ block, want string }{
		{"{update: true}", "catalog.table: is required with update: true"},
		{"{table: sales_db.orders}", "catalog.update: set update: true"},
		{"{table: orders, update: true}", "want DATABASE.TABLE"},
		{"{table: a.b, update: true, partitions: x}", `unknown key "partitions"`},
	} {
		yaml := "job: j\nsources:\n  - ctx: s\n    path: in\nsinks:\n  - ctx: out\n    path: " + filepath.Join(dir, "out") +
			"\n    catalog: " + tc.block + "\n"
		_, err := Parse(filepath.Join(dir, "job.yaml"), []byte(yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("sink catalog %s: %v, want %q", tc.block, err, tc.want)
		}
	}
	yaml := "job: j\nsources:\n  - ctx: s\n    path: in\nsinks:\n  - ctx: out\n    path: " + filepath.Join(dir, "out") +
		"\n    catalog: {table: sales_db.orders, update: true}\n"
	if _, err := Parse(filepath.Join(dir, "job.yaml"), []byte(yaml)); err != nil {
		t.Errorf("a valid sink catalog: %v", err)
	}
}
