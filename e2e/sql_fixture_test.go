package e2e

// The SQL table scenarios (sql_*_test.go) drive the built binary against
// real PostgreSQL and MariaDB servers (the ones scripts/test.sh starts,
// found through TIDEMARK_TEST_PG and TIDEMARK_TEST_MYSQL; internal/sqltest
// gives each test a fresh database) and against SQLite files. A test that
// finds no server fails and says to run scripts/test.sh, unless
// TIDEMARK_SKIP_SQL=1.
//
// Every job connects as a user of its own, created for the test with a
// distinctive random password that the job gets through password_env, as a
// user's job would; every command's stdout and stderr is checked for that
// password (and for the server's administrative one). Data are checked by
// reading the sinks back — Parquet files through DuckDB, sink tables
// through the test's own connection — never by trusting the run summary.

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/internal/sqldb"
	"github.com/tidemark-etl/tidemark/internal/sqltest"
)

// sqlPasswordEnv is the variable the jobs name in password_env;
// pgSinkPasswordEnv the one of an extra PostgreSQL sink (addPGSink).
const (
	sqlPasswordEnv    = "E2E_SQL_PASSWORD"
	pgSinkPasswordEnv = "E2E_PG_SINK_PASSWORD"
)

var (
	sqlServerKinds = []sqldb.Kind{sqldb.Postgres, sqldb.MySQL}
	sqlAllKinds    = []sqldb.Kind{sqldb.Postgres, sqldb.MySQL, sqldb.SQLite}
)

// eachSQL runs body as a parallel subtest per database kind.
func eachSQL(t *testing.T, kinds []sqldb.Kind, body func(t *testing.T, f *sqlFixture)) {
	t.Helper()
	for _, k := range kinds {
		t.Run(k.String(), func(t *testing.T) {
			t.Parallel()
			body(t, newSQLFixture(t, k))
		})
	}
}

// sqlFixture is one test's database, job file, output folder and
// credentials.
type sqlFixture struct {
	t    *testing.T
	kind sqldb.Kind
	db   *sqltest.DB // the test's database; db.SQL is an administrative handle
	// conn is the job's connection string (the test's own user, no
	// password); password is that user's password (empty for SQLite).
	conn     string
	password string
	dir      string
	jobPath  string
	cwd      string // where commands run: not the job's folder
	out      string // the Parquet file sink's folder
	env      []string
	secrets  []string    // never to appear in any output
	job      sqlJob      // the job last written
	pg       *sqlFixture // a PostgreSQL database for a table sink (addPGSink)
}

// newSQLFixture makes a fresh database of kind k with a user of the test's
// own, and the folders of a job.
func newSQLFixture(t *testing.T, k sqldb.Kind) *sqlFixture {
	t.Helper()
	db := sqltest.New(t, k)
	dir := t.TempDir()
	f := &sqlFixture{
		t:       t,
		kind:    k,
		db:      db,
		dir:     dir,
		jobPath: filepath.Join(dir, "job.yaml"),
		cwd:     filepath.Join(dir, "elsewhere"),
		out:     filepath.Join(dir, "output"),
	}
	for _, d := range []string{f.cwd, f.out, filepath.Join(dir, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f.env = []string{"TMPDIR=" + filepath.Join(dir, "tmp")}
	if db.Password != "" {
		f.secrets = append(f.secrets, db.Password)
	}
	if k == sqldb.SQLite {
		f.conn = db.Connection
		return f
	}
	f.password = "Tm-e2e-S3cr3t-" + sqlRandomHex(8)
	f.secrets = append(f.secrets, f.password)
	f.conn = f.createUser(f.password)
	f.env = append(f.env, sqlPasswordEnv+"="+f.password)
	return f
}

func sqlRandomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// createUser creates a login for the test's database with the given
// password, dropped when the test ends, and returns its connection string
// (without the password). On PostgreSQL it is a superuser (it reads the
// tables the test creates and creates sink tables in public); on MariaDB
// it has every privilege on the test's database.
func (f *sqlFixture) createUser(password string) string {
	t := f.t
	t.Helper()
	user := "e2e_" + sqlRandomHex(5)
	lit := f.kind.Literal(password)
	switch f.kind {
	case sqldb.Postgres:
		f.exec(fmt.Sprintf("CREATE ROLE %s LOGIN SUPERUSER PASSWORD %s", user, lit))
		t.Cleanup(func() {
			// Sessions a killed run left behind go first; then what the
			// user created in the test's database, then the user.
			_, _ = f.db.SQL.Exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1", user)
			for _, s := range []string{"DROP OWNED BY " + user, "DROP ROLE " + user} {
				if _, err := f.db.SQL.Exec(s); err != nil {
					t.Logf("cleanup: %s: %v", s, err)
				}
			}
		})
	case sqldb.MySQL:
		f.exec(fmt.Sprintf("CREATE USER '%s'@'%%' IDENTIFIED BY %s", user, lit))
		f.exec(fmt.Sprintf("GRANT ALL ON %s.* TO '%s'@'%%'", f.db.Q(f.db.Name), user))
		t.Cleanup(func() {
			ids := f.db.Strings(t, "SELECT ID FROM information_schema.PROCESSLIST WHERE USER = ?", user)
			for _, id := range ids {
				_, _ = f.db.SQL.Exec("KILL " + id)
			}
			if _, err := f.db.SQL.Exec(fmt.Sprintf("DROP USER '%s'@'%%'", user)); err != nil {
				t.Logf("cleanup: dropping user %s: %v", user, err)
			}
		})
	}
	u, err := url.Parse(f.db.Connection)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(user)
	return u.String()
}

// addPGSink gives the fixture a fresh PostgreSQL database, with a user of
// its own, for a table sink (sqlJob.pgTable): SQLite and MariaDB sources
// writing into PostgreSQL.
func (f *sqlFixture) addPGSink() *sqlFixture {
	f.t.Helper()
	g := newSQLFixture(f.t, sqldb.Postgres)
	f.pg = g
	f.secrets = append(f.secrets, g.secrets...)
	f.env = append(f.env, pgSinkPasswordEnv+"="+g.password)
	return g
}

// exec runs statements (separated by ";\n") on the test's database.
func (f *sqlFixture) exec(stmts string, args ...any) {
	f.t.Helper()
	f.db.Exec(f.t, stmts, args...)
}

// ddl rewrites portable placeholders into the database's types: {int}
// bigint, {pk} an integer primary key, {ts} a microsecond timestamp,
// {text} a short indexable text.
func (f *sqlFixture) ddl(s string) string {
	r := map[sqldb.Kind]*strings.Replacer{
		sqldb.Postgres: strings.NewReplacer("{int}", "bigint", "{pk}", "bigint PRIMARY KEY", "{ts}", "timestamp(6)", "{text}", "varchar(200)"),
		sqldb.MySQL:    strings.NewReplacer("{int}", "bigint", "{pk}", "bigint PRIMARY KEY", "{ts}", "datetime(6)", "{text}", "varchar(200)"),
		sqldb.SQLite:   strings.NewReplacer("{int}", "INTEGER", "{pk}", "INTEGER PRIMARY KEY", "{ts}", "TIMESTAMP", "{text}", "TEXT"),
	}[f.kind]
	return r.Replace(s)
}

// createOrders creates orders (id primary key, v text, amount int).
func (f *sqlFixture) createOrders() {
	f.t.Helper()
	f.exec(f.ddl("CREATE TABLE orders (id {pk}, v {text}, amount {int})"))
}

// insertOrders inserts orders rows for ids, in one statement.
func (f *sqlFixture) insertOrders(ids ...int64) {
	f.t.Helper()
	if len(ids) == 0 {
		return
	}
	f.exec("INSERT INTO orders (id, v, amount) VALUES " + sqlOrderValues(ids))
}

// sqlOrderValues renders (id, 'v<id>', id*10) tuples.
func sqlOrderValues(ids []int64) string {
	vals := make([]string, len(ids))
	for i, id := range ids {
		vals[i] = fmt.Sprintf("(%d, 'v%d', %d)", id, id, id*10)
	}
	return strings.Join(vals, ", ")
}

// sqlSrc is the job's SQL table source (ctx orders_db).
type sqlSrc struct {
	table       string // default "orders" unless query is set
	query       string
	keys        []string
	order       string
	lookback    string
	boundedRows int64
	onNullKey   string
	extra       []string // more lines under the source
}

// sqlJob is a job with one SQL table source and a Parquet file sink
// (ctx files) and/or a table sink (ctx rows_out) on the same database.
type sqlJob struct {
	name      string // default "sqljob"
	src       sqlSrc
	noFiles   bool     // no Parquet file sink
	table     string   // the table sink's table; "" for none
	mode      string   // the table sink's mode (default append)
	mergeKeys []string // with mode merge
	pgTable   string   // an append table sink (ctx pg_out) in f.pg's database
	top       []string // extra top-level lines
}

func sqlYAMLList(v []string) string {
	q := make([]string, len(v))
	for i, s := range v {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// yaml renders the job file.
func (f *sqlFixture) yaml(j sqlJob) string {
	var b strings.Builder
	name := j.name
	if name == "" {
		name = "sqljob"
	}
	fmt.Fprintf(&b, "job: %s\n", name)
	for _, l := range j.top {
		fmt.Fprintf(&b, "%s\n", l)
	}
	b.WriteString("sources:\n  - ctx: orders_db\n")
	fmt.Fprintf(&b, "    connection: %q\n", f.conn)
	if f.password != "" {
		fmt.Fprintf(&b, "    password_env: %s\n", sqlPasswordEnv)
	}
	s := j.src
	switch {
	case s.query != "":
		fmt.Fprintf(&b, "    query: %q\n", s.query)
	case s.table != "":
		fmt.Fprintf(&b, "    table: %q\n", s.table)
	default:
		b.WriteString("    table: orders\n")
	}
	if len(s.keys) > 0 {
		fmt.Fprintf(&b, "    bookmark_keys: %s\n", sqlYAMLList(s.keys))
	}
	if s.order != "" {
		fmt.Fprintf(&b, "    bookmark_keys_sort_order: %s\n", s.order)
	}
	if s.lookback != "" {
		fmt.Fprintf(&b, "    lookback: %q\n", s.lookback)
	}
	if s.boundedRows > 0 {
		fmt.Fprintf(&b, "    bounded_rows: %d\n", s.boundedRows)
	}
	if s.onNullKey != "" {
		fmt.Fprintf(&b, "    on_null_key: %s\n", s.onNullKey)
	}
	for _, l := range s.extra {
		fmt.Fprintf(&b, "    %s\n", l)
	}
	b.WriteString("sinks:\n")
	if !j.noFiles {
		b.WriteString("  - ctx: files\n")
		fmt.Fprintf(&b, "    path: %q\n", f.out)
		b.WriteString("    format: parquet\n")
	}
	if j.table != "" {
		b.WriteString("  - ctx: rows_out\n")
		fmt.Fprintf(&b, "    connection: %q\n", f.conn)
		if f.password != "" {
			fmt.Fprintf(&b, "    password_env: %s\n", sqlPasswordEnv)
		}
		fmt.Fprintf(&b, "    table: %s\n", j.table)
		mode := j.mode
		if mode == "" {
			mode = "append"
		}
		fmt.Fprintf(&b, "    mode: %s\n", mode)
		if len(j.mergeKeys) > 0 {
			fmt.Fprintf(&b, "    merge_keys: %s\n", sqlYAMLList(j.mergeKeys))
		}
	}
	if j.pgTable != "" {
		b.WriteString("  - ctx: pg_out\n")
		fmt.Fprintf(&b, "    connection: %q\n", f.pg.conn)
		fmt.Fprintf(&b, "    password_env: %s\n", pgSinkPasswordEnv)
		fmt.Fprintf(&b, "    table: %s\n", j.pgTable)
		b.WriteString("    mode: append\n")
	}
	return b.String()
}

// writeJob (re)writes the job file.
func (f *sqlFixture) writeJob(j sqlJob) {
	f.t.Helper()
	f.job = j
	writeFile(f.t, f.jobPath, []byte(f.yaml(j)))
}

// tidemark runs a command from the fixture's working folder with its
// environment plus env, and checks that no output shows a password.
func (f *sqlFixture) tidemark(env []string, args ...string) result {
	f.t.Helper()
	r := tidemark(f.t, f.cwd, append(slices.Clone(f.env), env...), args...)
	f.check(r)
	return r
}

// start starts a command in the background (check its result with
// f.wait).
func (f *sqlFixture) start(env []string, args ...string) *proc {
	f.t.Helper()
	return startTidemark(f.t, f.cwd, append(slices.Clone(f.env), env...), args...)
}

// wait waits for a background command and checks its output.
func (f *sqlFixture) wait(p *proc) result {
	f.t.Helper()
	r := p.wait(f.t)
	f.check(r)
	return r
}

// check fails the test if a command's output shows a secret.
func (f *sqlFixture) check(r result) {
	f.t.Helper()
	for _, s := range f.secrets {
		if s != "" && strings.Contains(r.output(), s) {
			f.t.Errorf("tidemark %s printed a database password (%q)\n%v", strings.Join(r.args, " "), s, r)
		}
	}
}

// sqlSummary is `run --json` with the SQL sources' counts.
type sqlSummary struct {
	Job     string                     `json:"job"`
	RunID   string                     `json:"run_id"`
	Status  string                     `json:"status"`
	Mode    string                     `json:"mode"`
	Sources map[string]sqlSourceCounts `json:"sources"`
	Sinks   map[string]sinkSummary     `json:"sinks"`
}

type sqlSourceCounts struct {
	Rows        int64 `json:"rows"`
	Regressions int64 `json:"regressions"`
	Late        int64 `json:"late"`
	NullKeys    int64 `json:"null_keys"`
}

// src is the summary of the orders_db source.
func (s sqlSummary) src() sqlSourceCounts { return s.Sources["orders_db"] }

// run runs the job with --json and extra flags.
func (f *sqlFixture) run(env []string, flags ...string) (sqlSummary, result) {
	f.t.Helper()
	r := f.tidemark(env, append([]string{"run", f.jobPath, "--json"}, flags...)...)
	var s sqlSummary
	if r.signal == 0 && strings.TrimSpace(r.stdout) != "" {
		s = decodeOne[sqlSummary](f.t, r)
	}
	return s, r
}

// mustRun runs the job and requires exit 0 and status succeeded.
func (f *sqlFixture) mustRun(flags ...string) sqlSummary {
	f.t.Helper()
	s, r := f.run(nil, flags...)
	if r.code != 0 || s.Status != "succeeded" {
		f.t.Fatalf("run: got exit %d, status %q; want 0, succeeded\n%v", r.code, s.Status, r)
	}
	if os.Getenv("E2E_DEBUG") != "" {
		f.t.Logf("%s", r.stderr)
	}
	return s
}

// runExpect runs the job and requires the exit code.
func (f *sqlFixture) runExpect(code int, env []string, flags ...string) (sqlSummary, result) {
	f.t.Helper()
	s, r := f.run(env, flags...)
	if r.code != code {
		f.t.Fatalf("run: got exit %d, want %d\n%v", r.code, code, r)
	}
	return s, r
}

// killedAt runs the job with TIDEMARK_FAULT=step and requires it killed.
func (f *sqlFixture) killedAt(step string) result {
	f.t.Helper()
	_, r := f.run([]string{"TIDEMARK_FAULT=" + step})
	if r.signal == 0 || r.code != -1 {
		f.t.Fatalf("run with TIDEMARK_FAULT=%s: want it killed at that step\n%v", step, r)
	}
	return r
}

// bookmark returns `bookmark show --json`, normalized, for comparing.
func (f *sqlFixture) bookmark() string {
	f.t.Helper()
	r := f.tidemark(nil, "bookmark", "show", f.jobPath, "--json")
	if r.code != 0 {
		f.t.Fatalf("bookmark show: got exit %d, want 0\n%v", r.code, r)
	}
	var v any
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		f.t.Fatalf("bookmark show --json: %v\n%v", err, r)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// bookmarkOrEmpty is bookmark, or for a job that has no state yet (bookmark
// show exits 2 saying so) the normalized empty bookmark that bookmark show
// prints for a job whose runs never committed.
func (f *sqlFixture) bookmarkOrEmpty(job string) string {
	f.t.Helper()
	r := f.tidemark(nil, "bookmark", "show", f.jobPath, "--json")
	if r.code == 2 && (strings.Contains(r.stderr, "does not exist") || strings.Contains(r.stderr, "has no state")) {
		out, _ := json.Marshal(map[string]any{"job": job, "version": 0, "run_id": "", "sources": map[string]any{}})
		return string(out)
	}
	return f.bookmark()
}

// reset runs `bookmark reset` with flags and requires exit 0.
func (f *sqlFixture) reset(flags ...string) result {
	f.t.Helper()
	r := f.tidemark(nil, append([]string{"bookmark", "reset", f.jobPath}, flags...)...)
	if r.code != 0 {
		f.t.Fatalf("bookmark reset: got exit %d, want 0\n%v", r.code, r)
	}
	return r
}

// parquetFiles lists the published files of the file sink, requiring each
// to be named part-<run>-<n>.parquet, and returns them by run id.
func (f *sqlFixture) parquetFiles() map[string][]string {
	f.t.Helper()
	byRun := map[string][]string{}
	for _, file := range sinkFiles(f.t, f.out) {
		run := runOfFile(f.t, file)
		if !strings.HasSuffix(file, ".parquet") {
			f.t.Fatalf("published file %s is not Parquet", file)
		}
		byRun[run] = append(byRun[run], file)
	}
	return byRun
}

// queryParquet reads cols (a SELECT list) from files through DuckDB, as
// text rows sorted.
func (f *sqlFixture) queryParquet(files []string, cols string) [][]string {
	f.t.Helper()
	if len(files) == 0 {
		return nil
	}
	q := "SELECT " + cols + " FROM " + readerSQL(files, sinkFormat{format: "parquet"})
	rows, err := duck.Query(q)
	if err != nil {
		f.t.Fatalf("reading back %d Parquet files: %v\n%s", len(files), err, q)
	}
	defer rows.Close()
	ct, _ := rows.ColumnTypes()
	var out [][]string
	for rows.Next() {
		vals := make([]*string, len(ct))
		ptrs := make([]any, len(ct))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			f.t.Fatal(err)
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			if v == nil {
				row[i] = "NULL"
			} else {
				row[i] = *v
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		f.t.Fatal(err)
	}
	sortSQLRows(out)
	return out
}

func sortSQLRows(rows [][]string) {
	sort.Slice(rows, func(i, j int) bool {
		return strings.Join(rows[i], "\x00") < strings.Join(rows[j], "\x00")
	})
}

// fileRows reads cols of every row in the file sink, as sorted text rows.
func (f *sqlFixture) fileRows(cols string) [][]string {
	f.t.Helper()
	var all []string
	for _, files := range f.parquetFiles() {
		all = append(all, files...)
	}
	return f.queryParquet(all, cols)
}

// fileIDs returns the id column of every row in the file sink (a
// multiset, sorted).
func (f *sqlFixture) fileIDs() []int64 {
	f.t.Helper()
	return sqlFirstInts(f.t, f.fileRows("CAST(id AS VARCHAR)"))
}

// fileIDsOfRun returns the ids one run published into the file sink.
func (f *sqlFixture) fileIDsOfRun(runID string) []int64 {
	f.t.Helper()
	return sqlFirstInts(f.t, f.queryParquet(f.parquetFiles()[runID], "CAST(id AS VARCHAR)"))
}

// tableRows reads cols of table (in the test's database) as sorted text
// rows; nil when the table does not exist yet.
func (f *sqlFixture) tableRows(table, cols string) [][]string {
	f.t.Helper()
	if !f.tableExists(table) {
		return nil
	}
	rows, err := f.db.SQL.Query("SELECT " + cols + " FROM " + f.db.Q(table))
	if err != nil {
		f.t.Fatalf("reading table %s: %v", table, err)
	}
	defer rows.Close()
	ct, _ := rows.ColumnTypes()
	var out [][]string
	for rows.Next() {
		vals := make([]any, len(ct))
		ptrs := make([]any, len(ct))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			f.t.Fatal(err)
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			switch x := v.(type) {
			case nil:
				row[i] = "NULL"
			case []byte:
				row[i] = string(x)
			default:
				row[i] = fmt.Sprint(x)
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		f.t.Fatal(err)
	}
	sortSQLRows(out)
	return out
}

// tableExists reports whether table exists in the test's database.
func (f *sqlFixture) tableExists(table string) bool {
	f.t.Helper()
	var q string
	switch f.kind {
	case sqldb.Postgres:
		q = "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public' AND table_name = $1"
	case sqldb.MySQL:
		q = "SELECT count(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?"
	default:
		q = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?"
	}
	var n int
	if err := f.db.SQL.QueryRow(q, table).Scan(&n); err != nil {
		f.t.Fatal(err)
	}
	return n > 0
}

// tableIDs returns the id column of a sink table (a multiset, sorted).
func (f *sqlFixture) tableIDs(table string) []int64 {
	f.t.Helper()
	return sqlFirstInts(f.t, f.tableRows(table, f.txt("id")))
}

// txt renders a SELECT-list expression for col as text on the database.
func (f *sqlFixture) txt(cols ...string) string {
	out := make([]string, len(cols))
	for i, c := range cols {
		if f.kind == sqldb.MySQL {
			out[i] = "CAST(" + c + " AS CHAR)"
		} else {
			out[i] = "CAST(" + c + " AS TEXT)"
		}
	}
	return strings.Join(out, ", ")
}

// stagingTables lists the staging tables (_tidemark_stage_<run>_<hash>)
// in the test's database.
func (f *sqlFixture) stagingTables() []string {
	f.t.Helper()
	var q string
	switch f.kind {
	case sqldb.Postgres:
		q = "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_name LIKE '\\_tidemark\\_stage\\_%'"
	case sqldb.MySQL:
		q = "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE '\\_tidemark\\_stage\\_%'"
	default:
		return nil
	}
	return f.db.Strings(f.t, q)
}

func sqlFirstInts(t testing.TB, rows [][]string) []int64 {
	t.Helper()
	out := make([]int64, 0, len(rows))
	for _, r := range rows {
		n, err := strconv.ParseInt(strings.TrimSpace(r[0]), 10, 64)
		if err != nil {
			t.Fatalf("not an integer id: %q", r[0])
		}
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// span returns the ids from..to.
func idRange(from, to int64) []int64 {
	var out []int64
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

// ids joins id lists.
func joinIDs(lists ...[]int64) []int64 {
	var out []int64
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// assertIDSet compares two multisets of ids: got must hold each wanted id
// exactly as often as want does, and nothing else.
func assertIDSet(t testing.TB, what string, got, want []int64) {
	t.Helper()
	count := map[int64]int{}
	for _, id := range want {
		count[id]++
	}
	for _, id := range got {
		count[id]--
	}
	var missing, extra []string
	for id, n := range count {
		switch {
		case n > 0:
			missing = append(missing, fmt.Sprintf("%d x%d", id, n))
		case n < 0:
			extra = append(extra, fmt.Sprintf("%d x%d", id, -n))
		}
	}
	if len(missing) == 0 && len(extra) == 0 {
		return
	}
	sort.Strings(missing)
	sort.Strings(extra)
	t.Errorf("%s: got %d rows, want %d\n  missing:             %s\n  extra or duplicated: %s",
		what, len(got), len(want), firstFew(missing), firstFew(extra))
}
