package spark

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/internal/fault"
)

// execution is the state of one Execute call.
type execution struct {
	e       *Engine
	s       *session
	plan    engine.Plan
	readers []*reader
	unpack  *unpacked
}

func (x *execution) run(ctx context.Context) (engine.Result, error) {
	res := engine.Result{Sources: map[string]engine.SourceResult{}, Sinks: map[string]engine.SinkResult{}}
	x.unpack = &unpacked{base: x.e.opts.SpillFolder()}
	defer x.unpack.cleanup()
	if x.plan.OnBadRecord == engine.BadQuarantine && x.plan.Rejects == "" {
		return res, errors.New("quarantine: the plan has no rejects location")
	}
	for i := range x.plan.Sources {
		r, err := x.openSource(ctx, &x.plan.Sources[i], i)
		if err != nil {
			return res, x.malformed(ctx, err)
		}
		x.readers = append(x.readers, r)
	}
	fault.At(fault.MidRead)
	if err := x.transformTimestamps(ctx, true); err != nil {
		return res, err
	}
	for _, t := range x.plan.Transforms {
		body := strings.TrimRight(strings.TrimSpace(t.SQL), "; \t\r\n")
		if err := x.sql(ctx, "CREATE OR REPLACE TEMPORARY VIEW "+quoteIdent(t.Name)+" AS "+sparkSQL(body), "transform %s", t.Name); err != nil {
			return res, err
		}
	}
	if err := x.transformTimestamps(ctx, false); err != nil {
		return res, err
	}
	if err := x.guard(); err != nil {
		return res, err
	}
	counted := map[string]int64{}
	for i := range x.plan.Sinks {
		s := &x.plan.Sinks[i]
		sr, err := x.writeSink(ctx, s)
		if err != nil {
			return res, x.malformed(ctx, err)
		}
		res.Sinks[s.Ctx] = sr
		if len(x.plan.Transforms) == 0 || s.From != "" {
			counted[strings.ToLower(x.from(s))] = sr.Rows
		}
	}
	for _, r := range x.readers {
		sr := engine.SourceResult{Schema: canonical(r.schema)}
		if n, ok := counted[strings.ToLower(r.src.Ctx)]; ok {
			sr.Rows = n
		} else if len(r.paths) > 0 {
			n, err := x.count(ctx, "SELECT count(*) FROM "+r.view())
			if err != nil {
				return res, x.malformed(ctx, x.wrap(ctx, err, "counting source %s", r.src.Ctx))
			}
			sr.Rows = n
		}
		if r.rejects {
			n, err := x.rejected(ctx, r)
			if err != nil {
				return res, err
			}
			sr.Rejected = n
		}
		res.Sources[r.src.Ctx] = sr
	}
	return res, nil
}

// transformTimestamps makes TIMESTAMP in the transforms' SQL (a CAST, a
// literal) the zoneless kind, as in DuckDB's SQL, while they are defined
// (on), and Spark's default again for what follows (off). A view keeps
// the settings it was defined under; sources are read, and their schemas
// inferred, with Spark's default. A job whose conf sets
// spark.sql.timestampType keeps it throughout.
func (x *execution) transformTimestamps(ctx context.Context, on bool) error {
	if _, set := x.e.opts.Conf["spark.sql.timestampType"]; set || len(x.plan.Transforms) == 0 {
		return nil // the job's own choice
	}
	v := "TIMESTAMP_LTZ"
	if on {
		v = "TIMESTAMP_NTZ"
	}
	ctx, cancel := x.statementCtx(ctx)
	defer cancel()
	if err := x.s.setConf(ctx, "spark.sql.timestampType", v); err != nil {
		return x.wrap(ctx, err, "setting spark.sql.timestampType")
	}
	return nil
}

// from is the view a sink reads: its From, else the last transform, else
// the only source.
func (x *execution) from(s *engine.Sink) string {
	if s.From != "" {
		return s.From
	}
	if n := len(x.plan.Transforms); n > 0 {
		return x.plan.Transforms[n-1].Name
	}
	if len(x.plan.Sources) == 1 {
		return x.plan.Sources[0].Ctx
	}
	return ""
}

// sql runs a statement that returns nothing worth reading.
func (x *execution) sql(ctx context.Context, q, format string, args ...any) error {
	ctx, cancel := x.statementCtx(ctx)
	defer cancel()
	if _, err := x.s.client.Sql(ctx, q); err != nil {
		return x.wrap(ctx, err, format, args...)
	}
	return nil
}

// command runs a protocol command under the statement timeout.
func (x *execution) command(ctx context.Context, js string) error {
	ctx, cancel := x.statementCtx(ctx)
	defer cancel()
	err := x.s.command(ctx, js)
	if err != nil && ctx.Err() != nil {
		return x.wrap(ctx, err, "running a spark command")
	}
	return err
}

// count runs a query of one number.
func (x *execution) count(ctx context.Context, q string) (int64, error) {
	rows, err := x.queryRows(ctx, q)
	if err != nil {
		return 0, err
	}
	if len(rows) != 1 || len(rows[0]) != 1 {
		return 0, fmt.Errorf("counting: got %d rows, want one", len(rows))
	}
	return toInt(rows[0][0]), nil
}

func (x *execution) queryRows(ctx context.Context, q string) ([][]any, error) {
	ctx, cancel := x.statementCtx(ctx)
	defer cancel()
	rows, err := x.s.query(ctx, q)
	if err != nil && ctx.Err() != nil {
		return nil, x.wrap(ctx, err, "running a spark query")
	}
	return rows, err
}

func toInt(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case int32:
		return int64(n)
	case int:
		return int64(n)
	}
	return 0
}

type timeoutKey struct{}

// statementCtx bounds one statement by query_timeout.
func (x *execution) statementCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if x.e.timeout <= 0 {
		return ctx, func() {}
	}
	ctx = context.WithValue(ctx, timeoutKey{}, true)
	return context.WithTimeout(ctx, x.e.timeout)
}

// timedOut reports whether ctx ended by the statement timeout (not the
// caller's cancel or deadline).
func (x *execution) timedOut(ctx context.Context) bool {
	return ctx.Value(timeoutKey{}) != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) && context.Cause(ctx) == context.DeadlineExceeded
}

// wrapErr is wrap for callers holding the engine (statement context
// already ended or not).
func (e *Engine) wrapErr(ctx context.Context, err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	x := &execution{e: e, s: e.s}
	return x.wrap(ctx, err, format, args...)
}
