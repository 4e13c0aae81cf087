package sqlstore

import "testing"

func TestNumbered(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`WHERE job = ? AND seq < ?`, `WHERE job = $1 AND seq < $2`},
		{`run_id = ANY(?::text[]) LIMIT ?`, `run_id = ANY($1::text[]) LIMIT $2`},
		{`path = ? -- é ?`, `path = $1 -- é $2`},
	} {
		if got := Numbered(tc.in); got != tc.want {
			t.Errorf("Numbered(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
