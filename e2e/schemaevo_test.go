package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/internal/sqldb"
)

// evoJob is a job of one file source with schema_evolution and one sink,
// with its folders (local, or buckets on versitygw).
type evoJob struct {
	t          *testing.T
	dir        string
	in, out    place
	jobPath    string
	env        []string
	mode       string
	format     string // the source's
	sinkFormat string
	sinkBlock  string // replaces the file sink when set
}

func newEvoJob(t *testing.T, mode, format string) *evoJob {
	t.Helper()
	return newEvoJobOn(t, local, mode, format)
}

func newEvoJobOn(t *testing.T, be backend, mode, format string) *evoJob {
	t.Helper()
	dir := t.TempDir()
	j := &evoJob{t: t, dir: dir, in: newPlace(t, be, dir, "landing"), out: newPlace(t, be, dir, "out"),
		jobPath: filepath.Join(dir, "job.yaml"), mode: mode, format: format, sinkFormat: "parquet"}
	if be == onS3 {
		j.env = sharedS3(t).env()
	}
	j.env = append(j.env, "TMPDIR="+filepath.Join(dir, "tmp"))
	if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	j.write()
	return j
}

func (j *evoJob) write() {
	j.t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "job: evo\nsources:\n  - ctx: orders\n    path: %q\n    format: %s\n", j.in.loc(), j.format)
	if j.mode != "" {
		fmt.Fprintf(&b, "    schema_evolution: %s\n", j.mode)
	}
	b.WriteString("sinks:\n")
	if j.sinkBlock != "" {
		b.WriteString(j.sinkBlock)
	} else {
		fmt.Fprintf(&b, "  - ctx: out\n    path: %q\n    format: %s\n", j.out.loc(), j.sinkFormat)
	}
	writeFile(j.t, j.jobPath, []byte(b.String()))
}

func (j *evoJob) put(name, content string) {
	j.t.Helper()
	j.in.put(j.t, name, []byte(content))
}

func (j *evoJob) remove(name string) {
	j.t.Helper()
	j.in.remove(j.t, name)
}

// putParquet writes the rows of a DuckDB query as a Parquet input.
func (j *evoJob) putParquet(name, query string) {
	j.t.Helper()
	p := filepath.Join(j.t.TempDir(), name)
	if _, err := duck.Exec("COPY (" + query + ") TO '" + p + "' (FORMAT parquet)"); err != nil {
		j.t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		j.t.Fatal(err)
	}
	j.in.put(j.t, name, data)
}

// run runs the job and requires exit code.
func (j *evoJob) run(code int) result {
	j.t.Helper()
	r := tidemark(j.t, j.dir, j.env, "run", j.jobPath, "--json")
	if r.code != code {
		j.t.Fatalf("run: got exit %d, want %d\n%v", r.code, code, r)
	}
	return r
}

// rows returns the sink's rows as "v|v|..." of the columns cols (NULL for
// a null), ordered by the first, read over every published file by name.
func (j *evoJob) rows(cols ...string) []string {
	j.t.Helper()
	exprs := make([]string, len(cols))
	for i, c := range cols {
		exprs[i] = fmt.Sprintf("coalesce(CAST(%q AS VARCHAR), 'NULL')", c)
	}
	q := fmt.Sprintf("SELECT concat_ws('|', %s) FROM read_parquet('%s/*.parquet', union_by_name=true) ORDER BY %q",
		strings.Join(exprs, ", "), j.out.mirror(j.t), cols[0])
	return duckStrings(j.t, q)
}

// fileSchemas returns, per published file name, its columns.
func (j *evoJob) fileSchemas() map[string]string {
	j.t.Helper()
	out := map[string]string{}
	files, _ := filepath.Glob(filepath.Join(j.out.mirror(j.t), "*.parquet"))
	for _, f := range files {
		cols := duckStrings(j.t, fmt.Sprintf("SELECT name || ' ' || type FROM parquet_schema('%s') WHERE num_children IS NULL OR num_children = 0", f))
		out[filepath.Base(f)] = strings.Join(cols, ", ")
	}
	return out
}

func duckStrings(t *testing.T, q string) []string {
	t.Helper()
	rows, err := duck.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// evoBookmark is the part of `bookmark show --json` this file reads.
type evoBookmark struct {
	Sources map[string]struct {
		Schema []struct {
			Name string `json:"name"`
			Type string `json:"type"`
		} `json:"schema"`
		Versions []struct {
			Version int      `json:"version"`
			RunID   string   `json:"run_id"`
			Added   []string `json:"added"`
			Widened []string `json:"widened"`
			Columns []struct {
				Name string `json:"name"`
				Type string `json:"type"`
			} `json:"columns"`
		} `json:"schema_versions"`
	} `json:"sources"`
}

func (j *evoJob) bookmark() evoBookmark {
	j.t.Helper()
	r := tidemark(j.t, j.dir, j.env, "bookmark", "show", j.jobPath, "--json")
	if r.code != 0 {
		j.t.Fatalf("bookmark show: %v", r)
	}
	var b evoBookmark
	if err := json.Unmarshal([]byte(r.stdout), &b); err != nil {
		j.t.Fatalf("bookmark show --json: %v\n%s", err, r.stdout)
	}
	return b
}

// schemaText is the source's recorded schema as "name TYPE, ...".
func (b evoBookmark) schemaText() string {
	var parts []string
	for _, c := range b.Sources["orders"].Schema {
		parts = append(parts, c.Name+" "+c.Type)
	}
	return strings.Join(parts, ", ")
}

func equalStrings(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\ngot  %q\nwant %q", what, got, want)
	}
}

// TestSchemaEvolutionModes: a column appears on Thursday, under each mode;
// what the sink holds after, row by row, and the schema versions.
func TestSchemaEvolutionModes(t *testing.T) {
	t.Parallel()
	week := func(j *evoJob) {
		j.put("mon.csv", "order_id,product,amount\n1,apple,10\n")
		j.run(0)
		j.put("tue.csv", "order_id,product,amount\n2,pear,20\n")
		j.run(0)
		// Wednesday's file is read in the same run as Thursday's.
		j.put("wed.csv", "order_id,product,amount\n3,kiwi,30\n")
		j.put("thu.csv", "order_id,coupon,product,amount\n4,SAVE10,fig,40\n")
	}
	t.Run("fail", func(t *testing.T) {
		t.Parallel()
		j := newEvoJob(t, "", "csv")
		week(j)
		r := j.run(1)
		assertMentions(t, r, "thu.csv", "coupon")
		equalStrings(t, "rows", j.rows("order_id", "amount"), []string{"1|10", "2|20"})
		if v := j.bookmark().Sources["orders"].Versions; len(v) != 0 {
			t.Errorf("fail keeps no versions: got %v", v)
		}
		// Switching the mode is not a change of the source: the next run
		// reads the new column, no reset needed.
		j.mode = "add_new_columns"
		j.write()
		j.run(0)
		equalStrings(t, "rows after switching", j.rows("order_id", "coupon"), []string{"1|NULL", "2|NULL", "3|NULL", "4|SAVE10"})
		if vs := j.bookmark().Sources["orders"].Versions; len(vs) != 2 || vs[0].RunID != "" {
			t.Errorf("versions after switching: got %+v, want the recorded schema as 1 and a 2", vs)
		}
	})
	eachBackend(t, func(t *testing.T, be backend) {
		t.Run("add_new_columns", func(t *testing.T) { addNewColumnsWeek(t, be, week) })
	})
	t.Run("rescue", func(t *testing.T) {
		t.Parallel()
		j := newEvoJob(t, "rescue", "csv")
		week(j)
		j.put("thu2.csv", "order_id,product,amount\n6,lime,n/a\n")
		j.run(0)
		equalStrings(t, "rows", j.rows("order_id", "product", "amount", "_rescued_data"), []string{
			"1|apple|10|NULL", "2|pear|20|NULL", "3|kiwi|30|NULL",
			`4|fig|40|{"coupon":"SAVE10","_file":"thu.csv"}`,
			`6|lime|NULL|{"amount":"n/a","_file":"thu2.csv"}`,
		})
		b := j.bookmark()
		if got, want := b.schemaText(), "order_id BIGINT, product VARCHAR, amount BIGINT"; got != want {
			t.Errorf("rescue keeps the schema: got %s, want %s", got, want)
		}
	})
	t.Run("none", func(t *testing.T) {
		t.Parallel()
		j := newEvoJob(t, "none", "csv")
		week(j)
		j.put("sat.csv", "order_id,product\n5,plum\n")
		j.run(0)
		equalStrings(t, "rows", j.rows("order_id", "product", "amount"),
			[]string{"1|apple|10", "2|pear|20", "3|kiwi|30", "4|fig|40", "5|plum|NULL"})
		if cols := j.fileSchemas(); strings.Contains(fmt.Sprint(cols), "coupon") {
			t.Errorf("none wrote the new column: %v", cols)
		}
	})
}

// TestSchemaEvolutionTypes: under add_new_columns a column that
// disappears is NULL, a value that needs a wider type widens the column
// (a new version), and a Parquet column whose type narrows is read in the
// wider type while one that changes to an unrelated type fails naming file
// and column.
func TestSchemaEvolutionTypes(t *testing.T) {
	t.Parallel()
	t.Run("csv", func(t *testing.T) {
		t.Parallel()
		j := newEvoJob(t, "add_new_columns", "csv")
		j.put("mon.csv", "order_id,product,amount\n1,apple,10\n")
		j.run(0)
		j.put("tue.csv", "order_id,product\n2,pear\n")
		j.run(0)
		j.put("wed.csv", "order_id,product,amount\n3,kiwi,30.5\n")
		j.run(0)
		// Read back over every file by name, the BIGINT of Monday's file
		// and the DOUBLE of Wednesday's unify as DOUBLE.
		equalStrings(t, "rows", j.rows("order_id", "amount"), []string{"1|10.0", "2|NULL", "3|30.5"})
		b := j.bookmark()
		if got, want := b.schemaText(), "order_id BIGINT, product VARCHAR, amount DOUBLE"; got != want {
			t.Errorf("schema: got %s, want %s", got, want)
		}
		vs := b.Sources["orders"].Versions
		if len(vs) != 2 || fmt.Sprint(vs[1].Widened) != "[amount]" {
			t.Errorf("versions: got %+v, want a second one widening amount", vs)
		}
	})
	t.Run("parquet", func(t *testing.T) {
		t.Parallel()
		j := newEvoJob(t, "add_new_columns", "parquet")
		j.putParquet("mon.parquet", "SELECT 1::BIGINT AS order_id, 10.5::DOUBLE AS amount")
		j.run(0)
		// Narrower in the file: read as DOUBLE, no new version.
		j.putParquet("tue.parquet", "SELECT 2::BIGINT AS order_id, 20::INTEGER AS amount")
		j.run(0)
		equalStrings(t, "rows", j.rows("order_id", "amount"), []string{"1|10.5", "2|20.0"})
		if vs := j.bookmark().Sources["orders"].Versions; len(vs) != 1 {
			t.Errorf("a narrower file type made a version: %+v", vs)
		}
		// Neither narrower nor wider: the run fails, naming both.
		j.putParquet("wed.parquet", "SELECT 3::BIGINT AS order_id, true AS amount")
		r := j.run(1)
		assertMentions(t, r, "wed.parquet", "amount")
		// Wider: a new version.
		j.remove("wed.parquet")
		j.putParquet("thu.parquet", "SELECT 4::BIGINT AS order_id, 'forty' AS amount")
		j.run(0)
		equalStrings(t, "rows after thursday", j.rows("order_id", "amount"), []string{"1|10.5", "2|20.0", "4|forty"})
		if got := j.bookmark().schemaText(); got != "order_id BIGINT, amount VARCHAR" {
			t.Errorf("schema after thursday: got %s", got)
		}
	})
}

// TestSchemaEvolutionSQLSink: a SQL table sink gets the new column with
// ALTER TABLE at publish; earlier rows hold NULL.
func TestSchemaEvolutionSQLSink(t *testing.T) {
	t.Parallel()
	eachSQL(t, sqlServerKinds, func(t *testing.T, f *sqlFixture) {
		j := newEvoJob(t, "add_new_columns", "csv")
		j.env = append(j.env, f.env...)
		j.sinkBlock = fmt.Sprintf("  - ctx: rows_out\n    connection: %q\n    password_env: %s\n    table: evo_orders\n", f.conn, sqlPasswordEnv)
		j.write()
		j.put("mon.csv", "order_id,product,amount\n1,apple,10\n")
		j.run(0)
		j.put("thu.csv", "order_id,product,amount,coupon\n4,fig,40.5,SAVE10\n")
		j.run(0)
		concat := "CAST(order_id AS VARCHAR(20)) || '|' || CAST(amount AS VARCHAR(40)) || '|' || coalesce(coupon, 'NULL')"
		if f.kind == sqldb.MySQL {
			concat = "CONCAT(order_id, '|', amount, '|', coalesce(coupon, 'NULL'))"
		}
		equalStrings(t, "table", f.db.Strings(t, "SELECT "+concat+" FROM evo_orders ORDER BY order_id"),
			[]string{"1|10|NULL", "4|40.5|SAVE10"})
	})
}

// addNewColumnsWeek is the add_new_columns week on backend be.
func addNewColumnsWeek(t *testing.T, be backend, week func(j *evoJob)) {
	t.Parallel()
	j := newEvoJobOn(t, be, "add_new_columns", "csv")
	week(j)
	j.run(0)
	equalStrings(t, "rows", j.rows("order_id", "product", "amount", "coupon"),
		[]string{"1|apple|10|NULL", "2|pear|20|NULL", "3|kiwi|30|NULL", "4|fig|40|SAVE10"})
	b := j.bookmark()
	if got, want := b.schemaText(), "order_id BIGINT, product VARCHAR, amount BIGINT, coupon VARCHAR"; got != want {
		t.Errorf("schema: got %s, want %s", got, want)
	}
	vs := b.Sources["orders"].Versions
	if len(vs) != 2 || vs[0].Version != 1 || vs[1].Version != 2 || fmt.Sprint(vs[1].Added) != "[coupon]" || vs[1].RunID == "" {
		t.Fatalf("versions: got %+v, want 1 and 2, 2 adding coupon", vs)
	}
	if r := tidemark(t, j.dir, j.env, "bookmark", "show", j.jobPath); !strings.Contains(r.stderr+r.stdout, "schema version 2 of run "+vs[1].RunID) {
		t.Errorf("bookmark show does not name the schema version:\n%v", r)
	}
	// One schema per output file: the earlier runs' files lack the
	// column, the run that met it wrote it in every file.
	var with, without int
	for name, cols := range j.fileSchemas() {
		if strings.Contains(cols, "coupon") {
			with++
			if !strings.Contains(name, vs[1].RunID) {
				t.Errorf("file %s has coupon but was not written by run %s", name, vs[1].RunID)
			}
		} else {
			without++
		}
	}
	if with != 1 || without != 2 {
		t.Errorf("files with coupon: got %d (and %d without), want 1 (and 2)", with, without)
	}
	// Later runs read with the grown schema; a file without the
	// column gets NULL.
	j.put("fri.csv", "order_id,product,amount\n5,plum,50\n")
	j.run(0)
	equalStrings(t, "rows after friday", j.rows("order_id", "coupon"),
		[]string{"1|NULL", "2|NULL", "3|NULL", "4|SAVE10", "5|NULL"})
	if vs := j.bookmark().Sources["orders"].Versions; len(vs) != 2 {
		t.Errorf("a run without change added a version: %+v", vs)
	}
}
