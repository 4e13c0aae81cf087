package sqltable

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"

	_ "github.com/duckdb/duckdb-go/v2" // driver "duckdb", to read the engine's Parquet
	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/internal/duckutil"
	"github.com/tidemark-etl/tidemark/internal/sqldb"
)

// Stage loads files — the engine's Parquet output for this sink — into the
// run's staging table and returns the rows loaded. schema is the output's
// columns; nil reads it from the files. It creates the target table when
// missing (and the bookkeeping tables). Stage may be repeated for the
// same run (the staging table is replaced); it changes nothing a reader
// of the target sees. With no files and no schema it stages an empty run
// (which still empties the table in mode overwrite).
func (k *Sink) Stage(ctx context.Context, runID string, files []string, schema []bookmark.Column) (int64, error) {
	duck, err := sql.Open("duckdb", "")
	if err != nil {
		return 0, fmt.Errorf("sink %s: opening duckdb: %w", k.cfg.Ctx, err)
	}
	defer duck.Close()
	if _, err := duck.ExecContext(ctx, "SET TimeZone = 'UTC'"); err != nil {
		return 0, fmt.Errorf("sink %s: setting up duckdb: %w", k.cfg.Ctx, err)
	}
	read := ""
	if len(files) > 0 {
		read = "read_parquet(" + duckList(files) + ")"
		if schema == nil {
			if schema, err = describe(ctx, duck, read); err != nil {
				return 0, fmt.Errorf("sink %s: reading the output's schema: %w", k.cfg.Ctx, err)
			}
		}
	}
	tg, err := targets(k.k, schema, k.cfg.MergeKeys)
	if err != nil {
		return 0, k.fail("mapping the output's types", err)
	}
	if err := k.ensureMeta(ctx); err != nil {
		return 0, k.fail("preparing", err)
	}
	if err := k.ensureTarget(ctx, tg); err != nil {
		return 0, k.fail("preparing", err)
	}
	if err := k.createStage(ctx, runID, tg); err != nil {
		return 0, k.fail("creating the staging table for run "+runID, err)
	}
	if len(files) == 0 {
		return 0, nil
	}
	tmp, err := os.CreateTemp("", "tidemark-load-*.csv")
	if err != nil {
		return 0, fmt.Errorf("sink %s: %w", k.cfg.Ctx, err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	want, err := k.convert(ctx, duck, read, tg, tmp.Name())
	if err != nil {
		return 0, fmt.Errorf("sink %s: converting the output for loading: %w", k.cfg.Ctx, err)
	}
	got, err := k.load(ctx, runID, tg, tmp.Name())
	if err != nil {
		return 0, k.fail("loading run "+runID+" into "+k.stageName(runID), err)
	}
	if got != want {
		return 0, k.fail("loading run "+runID, fmt.Errorf("loaded %d rows of %d", got, want))
	}
	return got, nil
}

// createStage registers the run's staging table (first, so that Cleanup
// finds it whatever happens next) and creates it empty.
func (k *Sink) createStage(ctx context.Context, runID string, tg []target) error {
	name := k.stageName(runID)
	reg := k.qn(k.meta(stagesTable))
	var ins string
	if k.k == sqldb.Postgres {
		ins = "INSERT INTO " + reg + " (stage_table, run_id, sink, target_table) VALUES ($1, $2, $3, $4) ON CONFLICT (stage_table) DO NOTHING"
	} else {
		ins = "INSERT IGNORE INTO " + reg + " (stage_table, run_id, sink, target_table) VALUES (?, ?, ?, ?)"
	}
	if _, err := k.db.ExecContext(ctx, ins, name, runID, k.cfg.Ctx, k.target.String()); err != nil {
		return err
	}
	if _, err := k.db.ExecContext(ctx, "DROP TABLE IF EXISTS "+k.stageSQL(runID)); err != nil {
		return err
	}
	defs := []string{}
	if k.k == sqldb.Postgres {
		defs = append(defs, k.q("_tidemark_seq")+" bigserial")
	} else {
		defs = append(defs, k.q("_tidemark_seq")+" bigint NOT NULL AUTO_INCREMENT PRIMARY KEY")
	}
	for _, t := range tg {
		defs = append(defs, k.q(t.col.Name)+" "+t.ddl)
	}
	stmt := "CREATE TABLE " + k.stageSQL(runID) + " (" + strings.Join(defs, ", ") + ")"
	if k.k == sqldb.MySQL {
		stmt += " CHARACTER SET utf8mb4"
	}
	_, err := k.db.ExecContext(ctx, stmt)
	return err
}

// convert writes the output as CSV in the form the database's bulk load
// reads, and returns the rows written.
func (k *Sink) convert(ctx context.Context, duck *sql.DB, read string, tg []target, path string) (int64, error) {
	exprs := make([]string, len(tg))
	for i, t := range tg {
		exprs[i] = t.load
	}
	opts := "FORMAT csv, HEADER false"
	if k.k == sqldb.MySQL {
		// LOAD DATA with ESCAPED BY '': the bare word NULL is NULL, so
		// every value is quoted.
		opts += ", NULLSTR 'NULL', FORCE_QUOTE *"
	}
	res, err := duck.ExecContext(ctx, "COPY (SELECT "+strings.Join(exprs, ", ")+" FROM "+read+") TO "+duckLit(path)+" ("+opts+")")
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

var readerSeq atomic.Int64

// load bulk-loads the CSV at path into the staging table.
func (k *Sink) load(ctx context.Context, runID string, tg []target, path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	cols := make([]string, len(tg))
	for i, t := range tg {
		cols[i] = k.q(t.col.Name)
	}
	conn, err := k.db.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	if k.k == sqldb.Postgres {
		var n int64
		err := conn.Raw(func(dc any) error {
			pc := dc.(*stdlib.Conn).Conn().PgConn()
			tag, err := pc.CopyFrom(ctx, f, "COPY "+k.stageSQL(runID)+" ("+strings.Join(cols, ", ")+") FROM STDIN (FORMAT csv)")
			n = tag.RowsAffected()
			return err
		})
		return n, err
	}
	name := fmt.Sprintf("tidemark-%d", readerSeq.Add(1))
	mysql.RegisterReaderHandler(name, func() io.Reader { return f })
	defer mysql.DeregisterReaderHandler(name)
	var sets []string
	for i, t := range tg {
		if t.unhex {
			v := fmt.Sprintf("@v%d", i)
			sets = append(sets, cols[i]+" = UNHEX("+v+")")
			cols[i] = v
		}
	}
	stmt := "LOAD DATA LOCAL INFILE 'Reader::" + name + "' INTO TABLE " + k.stageSQL(runID) +
		" CHARACTER SET utf8mb4 FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"' ESCAPED BY ''" +
		" LINES TERMINATED BY '\\n' (" + strings.Join(cols, ", ") + ")"
	if len(sets) > 0 {
		stmt += " SET " + strings.Join(sets, ", ")
	}
	res, err := conn.ExecContext(ctx, stmt)
	if err != nil {
		return 0, err
	}
	// With LOCAL the server turns conversion errors into warnings and goes
	// on; any warning fails the load.
	var level, msg string
	var code int
	if err := conn.QueryRowContext(ctx, "SHOW WARNINGS LIMIT 1").Scan(&level, &code, &msg); err == nil {
		return 0, fmt.Errorf("the server found a value it could not store: %s %d: %s", level, code, msg)
	} else if err != sql.ErrNoRows {
		return 0, err
	}
	return res.RowsAffected()
}

// describe returns the columns of a DuckDB relation.
func describe(ctx context.Context, duck *sql.DB, rel string) ([]bookmark.Column, error) {
	return duckutil.Describe(ctx, duck, "SELECT * FROM "+rel)
}

func duckLit(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func duckList(paths []string) string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = duckLit(p)
	}
	return "[" + strings.Join(out, ", ") + "]"
}
