package duckdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/internal/fault"
)

// execution is the state of one Execute call.
type execution struct {
	c       *sql.Conn
	plan    engine.Plan
	policy  string
	readers []*reader
	links   *linker
	canon   bool // the value checks' fast path is registered (canon.go)
}

// sourceState is what the execution knows of a source's row count.
type sourceState struct {
	rows    int64
	counted bool // rows is final (Parquet footers, materialized table)
}

func (x *execution) run(ctx context.Context) (engine.Result, error) {
	res := engine.Result{Sources: map[string]engine.SourceResult{}, Sinks: map[string]engine.SinkResult{}}
	states := make([]sourceState, len(x.plan.Sources))
	for i := range x.plan.Sources {
		st, err := x.openSource(ctx, &x.plan.Sources[i], i)
		if err != nil {
			return res, err
		}
		states[i] = st
	}
	fault.At(fault.MidRead)
	for _, t := range x.plan.Transforms {
		body := strings.TrimRight(strings.TrimSpace(t.SQL), "; \t\r\n")
		if _, err := x.c.ExecContext(ctx, "CREATE TEMP VIEW "+ident(t.Name)+" AS "+body); err != nil {
			return res, wrap(ctx, err, x.readers, "transform %s", t.Name)
		}
	}
	for i := range x.plan.Sinks {
		s := &x.plan.Sinks[i]
		sr, err := x.writeSink(ctx, s)
		if err != nil {
			return res, err
		}
		res.Sinks[s.Ctx] = sr
		for j, src := range x.plan.Sources {
			if !states[j].counted && strings.EqualFold(s.From, src.Ctx) {
				states[j] = sourceState{rows: sr.Rows, counted: true}
			}
		}
	}
	for i, r := range x.readers {
		st := states[i]
		if !st.counted {
			// No sink read this source as is; count it on its own.
			if err := x.c.QueryRowContext(ctx, "SELECT count(*) FROM "+ident(r.src.Ctx)).Scan(&st.rows); err != nil {
				return res, wrap(ctx, err, x.readers, "counting source %s", r.src.Ctx)
			}
		}
		sr := engine.SourceResult{Rows: st.rows, Schema: modelColumns(r.schema())}
		if r.rejects {
			collect := x.collectRejects
			if r.src.Format == "json" {
				collect = x.collectJSONRejects
			}
			rows, err := collect(ctx, r)
			if err != nil {
				return res, err
			}
			sr.Rejected = int64(len(rows))
			if x.policy == engine.BadQuarantine {
				if _, err := quarantine(x.plan.Rejects, r.src.Ctx, rows); err != nil {
					return res, err
				}
			}
		}
		res.Sources[r.src.Ctx] = sr
	}
	return res, nil
}

// openSource settles a source's files and schema and creates its view. With
// skip or quarantine, a CSV or JSON source is materialized into a temporary
// table (JSON through its lines, see jsonlines.go):
// each row is parsed in full exactly once (so a rejected row is rejected
// whatever columns the transforms use, and counted once however many sinks
// read it), and the table gives the row count.
func (x *execution) openSource(ctx context.Context, src *engine.Source, n int) (sourceState, error) {
	var st sourceState
	opts, err := parseOptions(readerOptions, src.Format, src.Options)
	if err != nil {
		return st, fmt.Errorf("source %s: %w", src.Ctx, err)
	}
	in, err := prepareInputs(src, n, x.links)
	if err != nil {
		return st, err
	}
	r := &reader{src: src, n: n, in: in, opts: opts, links: x.links, canon: x.canon}
	x.readers = append(x.readers, r)
	if err := r.settleSchema(ctx, x.c); err != nil {
		return st, err
	}
	if err := r.exactNumbers(x.links); err != nil {
		return st, err
	}
	if src.Format == "parquet" {
		if st.rows, err = r.checkParquet(ctx, x.c); err != nil {
			return st, err
		}
		st.counted = true
	}
	r.rejects = x.policy != engine.BadFail && src.Format != "parquet" && len(in.paths) > 0
	// A CSV source read with rejects keeps values that do not fit their
	// type in its table, marked, for collectRejects.
	keep := r.rejects && src.Format == "csv" && r.checked != nil
	body, err := r.selectSQL(x.links, keep)
	if err != nil {
		return st, err
	}
	if r.rejects || (src.Stream && !x.readOnce(src.Ctx)) {
		// A stream read by more than one statement is read into a table.
		table := ident(fmt.Sprintf("%s_source_%d", internalPrefix, n))
		if src.Format == "json" {
			err = x.materializeJSONLines(ctx, r, table)
		} else if _, err = x.c.ExecContext(ctx, "CREATE TEMP TABLE "+table+" AS "+body); err != nil {
			err = wrap(ctx, err, x.readers, "reading source %s", src.Ctx)
		}
		if err != nil {
			return st, err
		}
		body = "SELECT * FROM " + table
		if keep {
			r.table = table
			body = r.keptView(table)
		}
		if err := x.c.QueryRowContext(ctx, "SELECT count(*) FROM ("+body+")").Scan(&st.rows); err != nil {
			return st, wrap(ctx, err, x.readers, "counting source %s", src.Ctx)
		}
		st.counted = true
	}
	if _, err := x.c.ExecContext(ctx, "CREATE TEMP VIEW "+ident(src.Ctx)+" AS "+body); err != nil {
		return st, wrap(ctx, err, x.readers, "source %s: creating view", src.Ctx)
	}
	return st, nil
}

// readOnce reports whether the plan reads source ctx in exactly one
// statement: no transforms (a view may read it any number of times) and
// one sink reading it.
func (x *execution) readOnce(ctx string) bool {
	if len(x.plan.Transforms) > 0 {
		return false
	}
	n := 0
	for _, s := range x.plan.Sinks {
		if strings.EqualFold(s.From, ctx) {
			n++
		}
	}
	return n == 1
}

// hint adds advice to a conversion error in a column whose type this run
// inferred from a sample: the user can pin the type.
func (x *execution) hint(err error) error {
	var ie *engine.InputError
	if !errors.As(err, &ie) || ie.Column == "" || !strings.Contains(ie.Msg, "convert") {
		return err
	}
	for _, r := range x.readers {
		if r.src.Ctx == ie.Source && r.src.Schema == nil {
			ie.Msg += fmt.Sprintf(" (the type of %s was inferred from a sample of the first run's files; "+
				"set it with the source option types: {%s: VARCHAR}, or sample more with sample_size: -1)", ie.Column, ie.Column)
		}
	}
	return err
}
