package sqltable

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/internal/sqldb"
	"github.com/tidemark-etl/tidemark/internal/sqltest"
)

// TestEngineFailedNamesTable: an engine's error on a source's extract
// names the table and the column, never the extract file tidemark wrote
// (src-rows.csv line 3 meant nothing to a user); errors of other sources
// and other errors stand as they are.
func TestEngineFailedNamesTable(t *testing.T) {
	db := sqltest.New(t, sqldb.SQLite)
	db.Exec(t, "CREATE TABLE typed (id INTEGER PRIMARY KEY, n NUMERIC(10,2))")
	s, err := Open(context.Background(), Config{Ctx: "src", Connection: db.Connection, Table: "typed"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	got := s.engineFailed(&engine.InputError{Source: "src", File: "src-rows.csv", Line: 3, Column: "n", Msg: `could not convert "x"`})
	var e *Error
	if !errors.As(got, &e) {
		t.Fatalf("got %v, want an *Error", got)
	}
	msg := got.Error()
	for _, want := range []string{"source src", "table typed", "column n", "DECIMAL(10,2)", `could not convert "x"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "rows.csv") || strings.Contains(msg, "line 3") {
		t.Errorf("error %q names the extract file", msg)
	}
	if got := s.engineFailed(&engine.InputError{Source: "other", File: "a.csv"}); got != nil {
		t.Errorf("another source's error: got %v, want nil", got)
	}
	if got := s.engineFailed(errors.New("spark went away")); got != nil {
		t.Errorf("an engine error that is no input error: got %v, want nil", got)
	}
}
