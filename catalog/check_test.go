package catalog

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestValuesKeyOrder(t *testing.T) {
	alphabet := []string{"", "a", "b", "\x00", "\x01", "a\x00", "ab", "\xff"}
	r := rand.New(rand.NewPCG(1, 2))
	pick := func() []string {
		v := make([]string, 1+r.IntN(3))
		for i := range v {
			v[i] = alphabet[r.IntN(len(alphabet))] + alphabet[r.IntN(len(alphabet))]
		}
		return v
	}
	for range 20000 {
		a, b := pick(), pick()
		got := bytes.Compare(ValuesKey(a), ValuesKey(b))
		want := CompareValues(a, b)
		if got != want {
			t.Fatalf("compare keys of %q and %q: got %d, want %d", a, b, got, want)
		}
	}
	if !slices.Equal(ValuesKey([]string{"a", "b"}), []byte("a\x00\x00b\x00\x00")) {
		t.Errorf("ValuesKey([a b]) = %q", ValuesKey([]string{"a", "b"}))
	}
}

func TestChangesCheck(t *testing.T) {
	tbl := Table{Database: "sales_db", Name: "orders", Location: "s3://b/orders/"}
	for _, tc := range []struct {
		name string
		c    Changes
		ok   bool
	}{
		{"empty", Changes{}, true},
		{"table", Changes{Databases: []Database{{Name: "sales_db"}}, Tables: []TableChange{{Table: tbl}}}, true},
		{"no database name", Changes{Databases: []Database{{}}}, false},
		{"dotted table", Changes{Tables: []TableChange{{Table: Table{Database: "d", Name: "a.b", Location: "x"}}}}, false},
		{"no location", Changes{Tables: []TableChange{{Table: Table{Database: "d", Name: "t"}}}}, false},
		{"drop without location", Changes{Tables: []TableChange{{Table: Table{Database: "d", Name: "t"}, Base: 1, Drop: true}}}, true},
		{"negative base", Changes{Tables: []TableChange{{Table: tbl, Base: -1}}}, false},
		{"partition without values", Changes{Partitions: []Partition{{Database: "d", Table: "t", Location: "x"}}}, false},
		{"partition without location", Changes{Partitions: []Partition{{Database: "d", Table: "t", Values: []string{"a"}}}}, false},
	} {
		err := tc.c.Check()
		if (err == nil) != tc.ok {
			t.Errorf("%s: Check() = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}
