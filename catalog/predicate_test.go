package catalog

import (
	"strings"
	"testing"
)

func TestPredicate(t *testing.T) {
	keys := []Column{{Name: "year", Type: "VARCHAR"}, {Name: "month", Type: "INTEGER"}, {Name: "product", Type: "VARCHAR"}}
	parts := [][]string{
		{"2025", "12", "a"},
		{"2026", "1", "a"},
		{"2026", "2", "b"},
		{"2026", "10", "it's"},
		{"2027", "x", "c"},
	}
	for _, tc := range []struct {
		expr string
		want string // indexes of the matching partitions
	}{
		{"year >= '2026'", "1234"},
		{"year = '2026' AND month < 3", "12"},
		{"month >= 2", "023"}, // a numeric key compares as numbers: 10 >= 2; "x" is no number
		{"month > '9'", "03"}, // numeric key: '9' is cast to it; "x" is no INTEGER (NULL)
		{"year > 2025.5", "1234"},
		{"product IN ('a', 'c')", "014"},
		{"product NOT IN ('a')", "234"},
		{"NOT (product = 'a') AND year <> '2027'", "23"},
		{"product = 'it''s'", "3"},
		{"year = '2025' OR product = 'b' OR product = 'c'", "024"},
		{"YEAR != '2026' and not product = 'a'", "4"},
		{"(year = '2026' OR year = '2025') AND (month = 1 OR month = 12)", "01"},
		{"year < '2026'", "0"},
		{"year <= '2026' AND \"product\" = 'b'", "2"},
		{"(year == '2026' and month == 1)", "1"}, // Spark SQL's ==, as AWS's own examples write it
		{"product == 'a' OR month == 12", "01"},
	} {
		p, err := ParsePredicate(tc.expr, keys)
		if err != nil {
			t.Errorf("ParsePredicate(%q): %v", tc.expr, err)
			continue
		}
		got := ""
		for i, v := range parts {
			if p.Match(keys, v) {
				got += string(rune('0' + i))
			}
		}
		if got != tc.want {
			t.Errorf("%q matches partitions %q, want %q", tc.expr, got, tc.want)
		}
	}
}

func TestPredicateErrors(t *testing.T) {
	keys := []Column{{Name: "year", Type: "VARCHAR"}}
	for _, tc := range []struct{ expr, want string }{
		{"day = '1'", `"day" at offset 0 is not a partition key of the table (partition keys: year)`},
		{"year = '2026", "not closed"},
		{"year ~ 1", "unexpected"},
		{"year = '1' AND", "end of predicate"},
		{"year IN '1'", "'(' after IN"},
		{"year", "a comparison"},
		{"(year = '1'", "')'"},
		{"year = '1' year", "unexpected"},
		{"year ! '1'", "use != or NOT"},
		{"year = other", "a string"},
	} {
		_, err := ParsePredicate(tc.expr, keys)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParsePredicate(%q) = %v, want an error with %q", tc.expr, err, tc.want)
		}
	}
}

// TestPredicateDateWithNumber: a DATE key compared with a number is an
// error saying to quote the date, as Spark SQL refuses it.
func TestPredicateDateWithNumber(t *testing.T) {
	keys := []Column{{Name: "day", Type: "DATE"}}
	for _, expr := range []string{"day > 5", "day IN ('2026-01-10', 20260110)"} {
		_, err := ParsePredicate(expr, keys)
		if err == nil || !strings.Contains(err.Error(), "DATE key") || !strings.Contains(err.Error(), "in quotes") {
			t.Errorf("ParsePredicate(%q) = %v, want an error saying to quote the date", expr, err)
		}
	}
	if _, err := ParsePredicate("day >= '2026-1-5'", keys); err != nil {
		t.Errorf("a quoted date: %v", err)
	}
}
