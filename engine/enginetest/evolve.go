package enginetest

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
)

// evolving runs test only with an engine whose Caps have SchemaEvolution.
func (s *suite) evolving(test func(t *testing.T)) func(t *testing.T) {
	return func(t *testing.T) {
		e := s.c.New(t)
		caps := e.Capabilities()
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		if !caps.SchemaEvolution {
			t.Skip("the engine does not read schema_evolution modes (Caps.SchemaEvolution)")
		}
		test(t)
	}
}

// evolveCase is one read under a schema evolution mode: the rows a CSV
// sink holds after it (header first, then sorted) and the schema the
// source reports; or the file and column of the error it fails with.
type evolveCase struct {
	mode       string
	rows       []string
	schema     string
	failFile   string
	failColumn string
}

// runEvolve reads src (its SchemaEvolution set to each case's mode) into
// a CSV sink and checks each case.
func (s *suite) runEvolve(t *testing.T, e engine.Engine, src engine.Source, cases []evolveCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			src := src
			src.SchemaEvolution = c.mode
			snk := sink(t, "out", src.Ctx, "csv")
			res, err := e.Execute(t.Context(), engine.Plan{Sources: []engine.Source{src}, Sinks: []engine.Sink{snk}})
			if c.failFile != "" {
				var ie *engine.InputError
				if !errors.As(err, &ie) {
					t.Fatalf("got error %v, want an *engine.InputError naming %s", err, c.failFile)
				}
				equal(t, "file", ie.File, c.failFile)
				equal(t, "column", ie.Column, c.failColumn)
				return
			}
			if err != nil {
				t.Fatalf("execute: %v", err)
			}
			equalRows(t, "rows", csvRows(t, snk, res.Sinks["out"]), c.rows)
			equal(t, "schema", fmt.Sprint(res.Sources[src.Ctx].Schema), c.schema)
		})
	}
}

// testEvolveCSV: a column appears on Thursday, under each mode; a value
// that does not fit its type; a column that disappears.
func (s *suite) testEvolveCSV(t *testing.T) {
	e := s.engine(t)
	root := t.TempDir()
	schema := []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "amount", Type: "DOUBLE"}}
	src := engine.Source{Ctx: "orders", Format: "csv", Schema: schema, Files: []engine.Input{
		input(t, root, "mon.csv", []byte("id,amount\n1,2.5\n")),
		input(t, root, "thu.csv", []byte("amount,id,coupon\n3.5,2,X\n")),
	}}
	const recorded = "[{id BIGINT} {amount DOUBLE}]"
	t.Run("new_column", func(t *testing.T) {
		s.runEvolve(t, e, src, []evolveCase{
			{mode: "", failFile: "thu.csv", failColumn: "coupon"},
			{mode: bookmark.EvolveFail, failFile: "thu.csv", failColumn: "coupon"},
			{mode: bookmark.EvolveAddNewColumns, rows: []string{"id,amount,coupon", "1,2.5,", "2,3.5,X"},
				schema: "[{id BIGINT} {amount DOUBLE} {coupon VARCHAR}]"},
			{mode: bookmark.EvolveNone, rows: []string{"id,amount", "1,2.5", "2,3.5"}, schema: recorded},
			{mode: bookmark.EvolveRescue, rows: []string{"id,amount," + engine.RescuedColumn, "1,2.5,",
				`2,3.5,{"coupon":"X","_file":"thu.csv"}`}, schema: recorded},
		})
	})
	t.Run("first_run", func(t *testing.T) {
		first := src
		first.Schema = nil
		s.runEvolve(t, e, first, []evolveCase{
			{mode: bookmark.EvolveAddNewColumns, rows: []string{"id,amount,coupon", "1,2.5,", "2,3.5,X"},
				schema: "[{id BIGINT} {amount DOUBLE} {coupon VARCHAR}]"},
		})
	})
	bad := src
	bad.Files = []engine.Input{
		input(t, root, "mon.csv", []byte("id,amount\n1,2.5\n")),
		input(t, root, "fri.csv", []byte("id,amount\n3,n/a\n4,7\n")),
	}
	t.Run("bad_value", func(t *testing.T) {
		s.runEvolve(t, e, bad, []evolveCase{
			{mode: bookmark.EvolveRescue, rows: []string{"id,amount," + engine.RescuedColumn, "1,2.5,",
				`3,,{"amount":"n/a","_file":"fri.csv"}`, "4,7.0,"}, schema: recorded},
			// anything widens to VARCHAR
			{mode: bookmark.EvolveAddNewColumns, rows: []string{"id,amount", "1,2.5", "3,n/a", "4,7"},
				schema: "[{id BIGINT} {amount VARCHAR}]"},
		})
	})
	gone := src
	gone.Files = []engine.Input{
		input(t, root, "mon.csv", []byte("id,amount\n1,2.5\n")),
		input(t, root, "sat.csv", []byte("id\n5\n")),
	}
	t.Run("column_removed", func(t *testing.T) {
		s.runEvolve(t, e, gone, []evolveCase{
			{mode: bookmark.EvolveFail, failFile: "sat.csv", failColumn: "amount"},
			{mode: bookmark.EvolveAddNewColumns, rows: []string{"id,amount", "1,2.5", "5,"}, schema: recorded},
			{mode: bookmark.EvolveNone, rows: []string{"id,amount", "1,2.5", "5,"}, schema: recorded},
		})
	})
	wide := src
	wide.Schema = []bookmark.Column{{Name: "id", Type: "INTEGER"}, {Name: "amount", Type: "BIGINT"}}
	wide.Files = []engine.Input{
		input(t, root, "mon.csv", []byte("id,amount\n1,2\n")),
		input(t, root, "sun.csv", []byte("id,amount\n6,2.25\n")),
	}
	t.Run("widening", func(t *testing.T) {
		s.runEvolve(t, e, wide, []evolveCase{
			{mode: bookmark.EvolveFail, failFile: "sun.csv", failColumn: "amount"},
			{mode: bookmark.EvolveAddNewColumns, rows: []string{"id,amount", "1,2.0", "6,2.25"},
				schema: "[{id INTEGER} {amount DOUBLE}]"},
		})
	})
}

// testEvolveJSON: a key appears, under each mode.
func (s *suite) testEvolveJSON(t *testing.T) {
	e := s.engine(t)
	root := t.TempDir()
	schema := []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "amount", Type: "DOUBLE"}}
	src := engine.Source{Ctx: "orders", Format: "json", Schema: schema, Files: []engine.Input{
		input(t, root, "mon.json", []byte(`{"id":1,"amount":2.5}`+"\n")),
		input(t, root, "thu.json", []byte(`{"id":2,"amount":"n/a","coupon":"X"}`+"\n"+`{"id":3}`+"\n")),
	}}
	const recorded = "[{id BIGINT} {amount DOUBLE}]"
	s.runEvolve(t, e, src, []evolveCase{
		{mode: bookmark.EvolveAddNewColumns, rows: []string{"id,amount,coupon", "1,2.5,", "2,n/a,X", "3,,"},
			schema: "[{id BIGINT} {amount VARCHAR} {coupon VARCHAR}]"},
		{mode: bookmark.EvolveRescue, rows: []string{"id,amount," + engine.RescuedColumn, "1,2.5,",
			`2,,{"amount":"n/a","coupon":"X","_file":"thu.json"}`, "3,,"}, schema: recorded},
	})
	good := src
	good.Files = []engine.Input{
		input(t, root, "mon.json", []byte(`{"id":1,"amount":2.5}`+"\n")),
		input(t, root, "tue.json", []byte(`{"id":2,"amount":3,"coupon":"X"}`+"\n")),
	}
	s.runEvolve(t, e, good, []evolveCase{
		{mode: bookmark.EvolveNone, rows: []string{"id,amount", "1,2.5", "2,3.0"}, schema: recorded},
	})
}

// parquetIn writes the CSV text as a Parquet file through the engine and
// returns it as an input keyed key.
func (s *suite) parquetIn(t *testing.T, e engine.Engine, key, csvText string) engine.Input {
	t.Helper()
	in := input(t, t.TempDir(), "in.csv", []byte(csvText))
	snk := sink(t, "pq", "raw", "parquet")
	res := execute(t, e, engine.Plan{Sources: []engine.Source{{Ctx: "raw", Format: "csv", Files: []engine.Input{in}}}, Sinks: []engine.Sink{snk}})
	f := res.Sinks["pq"].Files[0]
	return engine.Input{Location: fileURL(filepath.Join(localDir(t, snk), filepath.FromSlash(f.Path))), Key: key, Size: f.Bytes}
}

// testEvolveParquet: a new column, a widening and a type change that is
// not one.
func (s *suite) testEvolveParquet(t *testing.T) {
	e := s.engine(t)
	schema := []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "amount", Type: "BIGINT"}}
	mon := s.parquetIn(t, e, "mon.parquet", "id,amount\n1,2\n")
	thu := s.parquetIn(t, e, "thu.parquet", "id,amount,coupon\n2,2.5,X\n")
	src := engine.Source{Ctx: "orders", Format: "parquet", Schema: schema, Files: []engine.Input{mon, thu}}
	const recorded = "[{id BIGINT} {amount BIGINT}]"
	s.runEvolve(t, e, src, []evolveCase{
		{mode: bookmark.EvolveFail, failFile: "thu.parquet", failColumn: "amount"},
		{mode: bookmark.EvolveAddNewColumns, rows: []string{"id,amount,coupon", "1,2.0,", "2,2.5,X"},
			schema: "[{id BIGINT} {amount DOUBLE} {coupon VARCHAR}]"},
		{mode: bookmark.EvolveNone, failFile: "thu.parquet", failColumn: "amount"},
		{mode: bookmark.EvolveRescue, rows: []string{"id,amount," + engine.RescuedColumn, "1,2,",
			`2,,{"amount":"2.5","coupon":"X","_file":"thu.parquet"}`}, schema: recorded},
	})
	// A file column narrower than the schema's is read in the schema's
	// type; one that is neither narrower nor wider fails.
	flag := s.parquetIn(t, e, "sat.parquet", "id,amount\n3,true\n")
	wide := engine.Source{Ctx: "orders", Format: "parquet", Files: []engine.Input{mon, flag},
		Schema: []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "amount", Type: "DOUBLE"}}}
	s.runEvolve(t, e, wide, []evolveCase{
		{mode: bookmark.EvolveAddNewColumns, failFile: "sat.parquet", failColumn: "amount"},
	})
	wide.Files = []engine.Input{mon}
	s.runEvolve(t, e, wide, []evolveCase{
		{mode: bookmark.EvolveAddNewColumns, rows: []string{"id,amount", "1,2.0"}, schema: "[{id BIGINT} {amount DOUBLE}]"},
	})
	// A boolean is no number, and a text other than true or false no
	// boolean: rescue keeps them as text, as fail and none refuse them
	// (true was stored as 1 with nothing rescued, 'yes' as true).
	flags := engine.Source{Ctx: "orders", Format: "parquet", Schema: schema, Files: []engine.Input{mon, flag}}
	s.runEvolve(t, e, flags, []evolveCase{
		{mode: bookmark.EvolveFail, failFile: "sat.parquet", failColumn: "amount"},
		{mode: bookmark.EvolveNone, failFile: "sat.parquet", failColumn: "amount"},
		{mode: bookmark.EvolveRescue, rows: []string{"id,amount," + engine.RescuedColumn, "1,2,",
			`3,,{"amount":"true","_file":"sat.parquet"}`}, schema: recorded},
	})
	words := s.parquetIn(t, e, "sun.parquet", "id,ok\n4,yes\n5,true\n6,FALSE\n7,maybe\n")
	boolSchema := []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "ok", Type: "BOOLEAN"}}
	s.runEvolve(t, e, engine.Source{Ctx: "orders", Format: "parquet", Schema: boolSchema, Files: []engine.Input{words}}, []evolveCase{
		{mode: bookmark.EvolveRescue, rows: []string{"id,ok," + engine.RescuedColumn, `4,,{"ok":"yes","_file":"sun.parquet"}`,
			"5,true,", "6,false,", `7,,{"ok":"maybe","_file":"sun.parquet"}`}, schema: "[{id BIGINT} {ok BOOLEAN}]"},
	})
}
