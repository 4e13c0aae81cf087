package crawler

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestTargetTable: a target's table: names the table at the target (the
// seed's crawl of sales/ registering sales_db.orders_raw), instead of the
// folder's name.
func TestTargetTable(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "data", "sales")
	writeTree(t, root, map[string]string{"day=2026-12-07/a.csv": dayRows(3, "")})
	st := newState(t)
	r := mustCrawl(t, crawlerFile(t, dir, crawlerYAML(dir, "    table: orders_raw\n")), st)
	if _, ok := r.Tables["orders_raw"]; !ok || len(r.Tables) != 1 {
		t.Fatalf("tables: got %v, want orders_raw only", r.Tables)
	}
	tb, err := st.Table(context.Background(), "sales_db", "orders_raw", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := normLocation(tb.Location), normLocation(root); got != want {
		t.Errorf("location: got %s, want %s", got, want)
	}
}

// TestTargetTableErrors: table: must be an identifier, at table_level 0.
func TestTargetTableErrors(t *testing.T) {
	for text, want := range map[string]string{
		"crawler: c\ndatabase: d\ntargets:\n  - path: x\n    table: 1-x\n":                    `c.yaml:5: targets[0].table: "1-x" must be an identifier`,
		"crawler: c\ndatabase: d\ntable_level: 1\ntargets:\n  - path: x\n    table: orders\n": `c.yaml:6: targets[0].table: names the table at the target itself, so table_level must be 0 (it is 1)`,
	} {
		_, err := Parse("c.yaml", []byte(text))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want %q", err, want)
		}
	}
}
