package catalog

import (
	"strings"
	"testing"
)

func TestParseName(t *testing.T) {
	db, tbl, err := ParseName("sales_db.orders_raw")
	if err != nil || db != "sales_db" || tbl != "orders_raw" {
		t.Errorf("ParseName = %q, %q, %v", db, tbl, err)
	}
	for _, bad := range []string{"orders", ".orders", "db.", "a.b.c", "a b.c"} {
		if _, _, err := ParseName(bad); err == nil {
			t.Errorf("ParseName(%q) succeeded", bad)
		} else if !strings.Contains(err.Error(), bad) && !strings.Contains(err.Error(), "white space") {
			t.Errorf("ParseName(%q): %v does not name it", bad, err)
		}
	}
}
