package catalog

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	sparksql "github.com/apache/spark-connect-go/spark/sql"

	"github.com/tidemark-etl/tidemark/internal/sparktest"
)

// TestPredicateAsSpark: push_down_predicate keeps exactly the partitions
// for which Spark SQL (ANSI mode off, as Glue runs it) finds the predicate
// true, over partition values that are no numbers, numbers written oddly,
// out of range, and NULL (__HIVE_DEFAULT_PARTITION__): a comparison that
// cannot be made is NULL, NOT NULL is NULL, and NULL reads nothing. The
// expected answers are computed by the Spark Connect server.
func TestPredicateAsSpark(t *testing.T) {
	remote := sparktest.Remote(t)
	keys := []Column{{Name: "s", Type: "VARCHAR"}, {Name: "n", Type: "INTEGER"}, {Name: "d", Type: "DOUBLE"}, {Name: "dt", Type: "DATE"}}
	vals := []string{"abc", "100", "99", "1.5", " 7", "007", "7", "1e3", "", "-3", "2147483648", "NaN", "7.9",
		"1000", "2", "é", defaultPartition, "2026-01-10", "2026-1-5", "2026-02-30", "2026", " 2026-01-06 ",
		"2026-01-10 12:00", "2026-01-10x", "02026-01-07", "1969-12-31"}
	preds := []string{
		"NOT (s < 100)", "s < 100", "s = 7", "s >= 1.5", "s > 1e2", "s = '007'", "s IN (7, 100)",
		"s IN ('7', 100)", "s NOT IN (7)", "NOT s IN (100, 99)", "s != 'abc'", "s <> 99", "n > '9'", "n = '7.5'",
		"n IN ('7', '007')", "n NOT IN (99)", "n < 100 OR s = 'abc'", "NOT (n < 100 AND s = 'abc')", "d > 1",
		"d = 'NaN'", "d IN (1.5, 2)", "s IN (1.5, 2)", "n >= 2147483648", "s = 2147483648", "s IN (1e3)",
		"n = 1.5", "NOT (s = 'abc' OR n = 7)", "s < 'b'", "d IN ('1.5', 7)", "n IN (7, 7.0)", "s = -3",
		"NOT (d <= 99.5)", "s = 99999999999", "n = 99999999999", "s IN (1.5, 1e0)", "NOT (n NOT IN (7, 100))",
		"dt >= '2026-1-5'", "dt = '2026-01-10'", "dt IN ('2026-01-10', 'x')", "NOT (dt < '2026-01-06')",
		"dt = '2026-02-30'", "dt < '1970-01-01'", "dt IN ('2026-1-10', '2026-01-06')", "dt <> '2026'",
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sess, err := sparksql.NewSessionBuilder().Remote(remote).Build(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Stop()
	if _, err := sess.Sql(ctx, "SET spark.sql.ansi.enabled=false"); err != nil {
		t.Fatal(err)
	}
	var rows, cols []string
	for i, v := range vals {
		lit := "'" + strings.ReplaceAll(v, "'", "\\'") + "'"
		if v == defaultPartition {
			lit = "CAST(NULL AS STRING)"
		}
		rows = append(rows, fmt.Sprintf("(%d, %s, CAST(%s AS INT), CAST(%s AS DOUBLE), CAST(%s AS DATE))", i, lit, lit, lit, lit))
	}
	for _, p := range preds {
		cols = append(cols, "coalesce("+p+", false)")
	}
	q := fmt.Sprintf("SELECT i, %s FROM VALUES %s AS t(i, s, n, d, dt) ORDER BY i", strings.Join(cols, ", "), strings.Join(rows, ", "))
	df, err := sess.Sql(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	got, err := df.Collect(ctx)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	if len(got) != len(vals) {
		t.Fatalf("spark answered %d rows, want %d", len(got), len(vals))
	}
	checked := 0
	for j, expr := range preds {
		p, err := ParsePredicate(expr, keys)
		if err != nil {
			t.Errorf("ParsePredicate(%q): %v", expr, err)
			continue
		}
		for i, v := range vals {
			want, ok := got[i].At(j + 1).(bool)
			if !ok {
				t.Fatalf("spark's answer for %q on %q: %T, want a bool", expr, v, got[i].At(j+1))
			}
			if m := p.Match(keys, []string{v, v, v, v}); m != want {
				t.Errorf("%q on s = n = d = dt = %q: got %v, want %v (Spark SQL)", expr, v, m, want)
			}
			checked++
		}
	}
	t.Logf("%d predicates on %d partitions checked against Spark", len(preds), checked/len(preds))
}

// defaultPartition is the folder value Hive and Spark write for NULL.
const defaultPartition = "__HIVE_DEFAULT_PARTITION__"
