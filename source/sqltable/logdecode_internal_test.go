package sqltable

import (
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
)

// TestLogValue: values of the change stream (the server's text) become
// the text the engine parses, as the snapshot's COPY writes them.
func TestLogValue(t *testing.T) {
	list := column{Name: "a", Type: bookmark.ListOf(varchar)}
	for _, c := range []struct {
		col       column
		in, want  string
		wantError bool
	}{
		{column{Name: "b", Type: bookmark.Scalar(bookmark.Blob)}, `\x00ff41`, `\x00\xff\x41`, false},
		{column{Name: "b", Type: bookmark.Scalar(bookmark.Blob)}, `\x`, ``, false},
		{list, `{}`, `[]`, false},
		{list, `{1,NULL,3}`, `["1",NULL,"3"]`, false},
		{list, `{"a,b","c\"d",NULL,"","NULL","x\\y"}`, `["a,b","c\"d",NULL,"","NULL","x\\y"]`, false},
		{list, `{{1,2},{3,4}}`, ``, true},
		{list, `[0:1]={1,2}`, ``, true},
		{column{Name: "n", Type: bookmark.DecimalOf(10, 2)}, `NaN`, ``, true},
		{column{Name: "n", Type: bookmark.DecimalOf(10, 2)}, `-1.50`, `-1.50`, false},
		{column{Name: "v", Type: varchar}, `NaN`, `NaN`, false},
	} {
		got, err := logValue(c.col, []byte(c.in))
		if (err != nil) != c.wantError {
			t.Errorf("logValue(%s, %q): error %v, want error %t", c.col.Type, c.in, err, c.wantError)
			continue
		}
		if err != nil {
			continue
		}
		var s string
		switch v := got.(type) {
		case string:
			s = v
		case []byte:
			s = string(v)
		}
		if s != c.want {
			t.Errorf("logValue(%s, %q) = %q, want %q", c.col.Type, c.in, s, c.want)
		}
	}
}
