package spark

import "testing"

func TestSparkSQL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"SELECT CAST(a AS VARCHAR) FROM t", "SELECT CAST(a AS STRING) FROM t"},
		{"SELECT a::varchar, CAST(b AS VARCHAR(10))", "SELECT a::STRING, CAST(b AS VARCHAR(10))"},
		{"SELECT 'VARCHAR' AS x, `varchar` FROM t -- VARCHAR\n", "SELECT 'VARCHAR' AS x, `varchar` FROM t -- VARCHAR\n"},
		{"SELECT my_varchar, varchar_x /* VARCHAR */ FROM t", "SELECT my_varchar, varchar_x /* VARCHAR */ FROM t"},
		{"SELECT 'it''s', CAST(x AS VARCHAR)", "SELECT 'it''s', CAST(x AS STRING)"},
	} {
		if got := sparkSQL(tc.in); got != tc.want {
			t.Errorf("sparkSQL(%q): got %q, want %q", tc.in, got, tc.want)
		}
	}
}
