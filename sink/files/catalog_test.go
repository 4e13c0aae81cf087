package files

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/catalog"
	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/sink"
	"github.com/tidemark-etl/tidemark/store/memory"
)

// TestCatalogChanges: what a catalog-updating sink's Stage asks the commit
// to change: the table made, then grown by a column, its partitions
// (values unescaped as the engine escaped them), an overwrite's drops, and
// a table elsewhere refused.
func TestCatalogChanges(t *testing.T) {
	ctx := context.Background()
	cat := memory.New(memory.Options{})
	stage := func(mode string, schema []bookmark.Column, finals ...string) (catalog.Changes, error) {
		s := &Sink{spec: job.Sink{Ctx: "orders_sink"}, root: "s3://b/out/?region=eu-west-1",
			cfg: &Config{Format: "parquet", Mode: mode, PartitionBy: []string{"Product"},
				Catalog: CatalogTarget{Table: "sales_db.orders_clean", Update: true}}}
		st := &staging{sink: s, run: sink.Run{ID: "r1", Catalog: cat}}
		c, err := st.catalogChanges(ctx, engine.SinkResult{Schema: schema}, finals)
		if err == nil {
			if err := cat.ApplyCatalog(ctx, c); err != nil {
				t.Fatalf("applying %+v: %v", c, err)
			}
		}
		return c, err
	}
	schema := []bookmark.Column{{Name: "order_id", Type: "BIGINT"}, {Name: "product", Type: "VARCHAR"}, {Name: "amount", Type: "BIGINT"}}
	if _, err := stage("append", schema, "product=a/part-r1-0.parquet", "product=fig%2Fripe/part-r1-1.parquet", "product=a/part-r1-2.parquet"); err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.Table(ctx, "sales_db", "orders_clean", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(tbl.Location, tbl.Format, tbl.Columns, tbl.PartitionKeys); got != "s3://b/out/parquet[{order_id BIGINT} {amount BIGINT}] [{product VARCHAR}]" {
		t.Errorf("table made: %s", got)
	}
	parts := func() string {
		var out []string
		for p, err := range cat.Partitions(ctx, "sales_db", "orders_clean") {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%s@%s", p.Values[0], p.Location))
		}
		return strings.Join(out, " ")
	}
	if got := parts(); got != "a@s3://b/out/product=a/ fig/ripe@s3://b/out/product=fig%2Fripe/" {
		t.Errorf("partitions: %s", got)
	}

	// The same columns again: no new version; a new column: version 2.
	c, err := stage("append", schema, "product=b/part-r2-0.parquet")
	if err != nil || len(c.Tables) != 0 {
		t.Errorf("a run with the same columns: %+v, %v; want no table change", c.Tables, err)
	}
	wider := append(append([]bookmark.Column{}, schema...), bookmark.Column{Name: "channel", Type: "VARCHAR"})
	if _, err := stage("append", wider, "product=b/part-r3-0.parquet"); err != nil {
		t.Fatal(err)
	}
	if tbl, _ := cat.Table(ctx, "sales_db", "orders_clean", 0); tbl.Version != 2 || len(tbl.Columns) != 3 || tbl.Columns[2].Name != "channel" {
		t.Errorf("after a new column: version %d columns %v; want 2 with channel added", tbl.Version, tbl.Columns)
	}

	// An overwrite replaces every partition it does not write.
	if _, err := stage("overwrite", wider, "product=b/part-r4-0.parquet"); err != nil {
		t.Fatal(err)
	}
	if got := parts(); got != "b@s3://b/out/product=b/" {
		t.Errorf("partitions after an overwrite: %s", got)
	}

	// A table elsewhere, of another format or other keys, is refused.
	moved, _ := cat.Table(ctx, "sales_db", "orders_clean", 0)
	moved.Location = "s3://b/other/"
	if err := cat.ApplyCatalog(ctx, catalog.Changes{Tables: []catalog.TableChange{{Table: moved, Base: moved.Version}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := stage("append", wider, "product=b/part-r5-0.parquet"); err == nil || !strings.Contains(err.Error(), "the table is at s3://b/other/, the sink writes s3://b/out/") {
		t.Errorf("a table at another location: %v", err)
	}
}

// TestCatalogTypesNeverNarrow: a run whose output has a narrower type than
// the table's column (BIGINT where earlier files hold VARCHAR, a DECIMAL
// where a crawl widened to DOUBLE) leaves the column as it is, since the
// earlier files still hold the wider values; a wider type is taken.
func TestCatalogTypesNeverNarrow(t *testing.T) {
	cur := catalog.Table{Columns: []catalog.Column{{Name: "id", Type: "BIGINT"}, {Name: "code", Type: "VARCHAR"},
		{Name: "price", Type: "DOUBLE"}, {Name: "n", Type: "INTEGER"}, {Name: "m", Type: "DECIMAL(10,2)"}}}
	out := []catalog.Column{{Name: "id", Type: "BIGINT"}, {Name: "code", Type: "BIGINT"},
		{Name: "price", Type: "DECIMAL(10,2)"}, {Name: "n", Type: "BIGINT"}, {Name: "m", Type: "DECIMAL(12,2)"}}
	got := fmt.Sprint(grown(cur, out).Columns)
	if want := "[{id BIGINT} {code VARCHAR} {price DOUBLE} {n BIGINT} {m DECIMAL(12,2)}]"; got != want {
		t.Errorf("columns: got %s, want %s", got, want)
	}
}

// TestCatalogReaderMismatch: a sink refuses to write into a table whose
// reader would not read its files (another delimiter, header or
// compression), and writes into one whose options fit or are unset.
func TestCatalogReaderMismatch(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		table       map[string]string
		compression string
		sink        map[string]any
		want        string // "" for no error
	}{
		{map[string]string{"delim": ";", "header": "true"}, "", nil, `delimiter ";", the sink writes ","`},
		{map[string]string{"delim": ";", "header": "true"}, "", map[string]any{"delim": ";"}, ""},
		{map[string]string{"sep": "|"}, "", map[string]any{"delimiter": "|"}, ""},
		{map[string]string{"delim": ",", "header": "false"}, "", nil, "header false, the sink writes header true"},
		{map[string]string{"header": "true"}, "", nil, ""},
		{map[string]string{"delim": ","}, "gzip", nil, `compressed "gzip", the sink writes ""`},
		{map[string]string{"delim": ","}, "gzip", map[string]any{"compression": "gzip"}, ""},
	} {
		cat := memory.New(memory.Options{})
		tb := catalog.Table{Database: "db", Name: "t", Location: "s3://b/out/", Format: "csv", Options: tc.table,
			Compression: tc.compression, Columns: []catalog.Column{{Name: "id", Type: "BIGINT"}}}
		if err := cat.ApplyCatalog(ctx, catalog.Changes{Databases: []catalog.Database{{Name: "db"}}, Tables: []catalog.TableChange{{Table: tb}}}); err != nil {
			t.Fatal(err)
		}
		s := &Sink{spec: job.Sink{Ctx: "o"}, root: "s3://b/out/",
			cfg: &Config{Format: "csv", Mode: "append", Options: tc.sink, Catalog: CatalogTarget{Table: "db.t", Update: true}}}
		st := &staging{sink: s, run: sink.Run{ID: "r1", Catalog: cat}}
		_, err := st.catalogChanges(ctx, engine.SinkResult{Schema: []bookmark.Column{{Name: "id", Type: "BIGINT"}}}, []string{"part-r1-0.csv"})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("table %v %q, sink %v: %v, want no error", tc.table, tc.compression, tc.sink, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("table %v %q, sink %v: got %v, want an error with %q", tc.table, tc.compression, tc.sink, err, tc.want)
		}
	}
}
