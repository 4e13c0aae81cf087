package sqldb

import "testing"

// TestDataset: tables are named by the OpenLineage naming conventions.
func TestDataset(t *testing.T) {
	for _, tc := range []struct {
		conn, table   string
		ns, name, uri string
	}{
		{"postgres://etl@db.internal:6432/shop", "sales.orders", "postgres://db.internal:6432", "shop.sales.orders", "postgres://db.internal:6432/shop"},
		{"postgresql://etl@db.internal/shop", "orders", "postgres://db.internal:5432", "shop.public.orders", "postgres://db.internal:5432/shop"},
		{"mysql://etl@127.0.0.1:3307/shop", "orders", "mysql://127.0.0.1:3307", "shop.orders", "mysql://127.0.0.1:3307/shop"},
		{"mysql://etl@maria/shop", "other.orders", "mysql://maria:3306", "other.orders", "mysql://maria:3306/shop"},
		{"sqlite:src.db", "orders", "sqlite:///jobs/src.db", "orders", "sqlite:///jobs/src.db"},
	} {
		ns, name, uri, ok := Dataset("/jobs", tc.conn, tc.table)
		if !ok || ns != tc.ns || name != tc.name || uri != tc.uri {
			t.Errorf("%s %s: got %q %q %q %v, want %q %q %q", tc.conn, tc.table, ns, name, uri, ok, tc.ns, tc.name, tc.uri)
		}
	}
	if _, _, _, ok := Dataset("/jobs", "postgres://h/db", ""); ok {
		t.Errorf("a query source got a dataset")
	}
}
