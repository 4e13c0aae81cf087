package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
)

// settleDialect fixes the CSV dialect for this run. The job's options win;
// what they leave open comes from DuckDB's sniffer run on the first file
// (one file, a few milliseconds): delimiter, header, leading rows to skip,
// comment character, date formats, and the escape when found with the
// quote. The quote is the job's or '"' (RFC 4180), never sniffed, even
// when the sampled file has no quotes at all, so that a later file with
// quoted fields is still read right; escape defaults to the quote.
// The whole read then runs with auto_detect=false: DuckDB sniffing every
// file costs ~0.7 ms per file and can settle differently from file to file.
// The sniffer runs with ignore_errors, else one ragged row makes it settle
// on a one-column dialect. If it cannot make sense of the file at all, the
// defaults (',' '"' header) stand and the read itself reports bad lines.
func (r *reader) settleDialect(ctx context.Context, c *sql.Conn) error {
	d := options{}
	for _, n := range []string{"delim", "quote", "escape", "header", "skip", "comment", "new_line", "dateformat", "timestampformat"} {
		if o, ok := r.opts[n]; ok {
			d[n] = o
		}
	}
	set := func(name string, v any) {
		if !d.has(name) {
			d[name] = option{name: name, value: v}
		}
	}
	if len(r.in.paths) > 0 && r.src.Schema != nil && !d.has("delim") && !d.has("header") && !temporal(r.src.Schema) {
		// With a recorded schema, a first line that spells its column
		// names settles delimiter and header without DuckDB's sniffer,
		// which costs ~50 ms per run on a large file. Not with date or
		// time columns: their format comes from the sniffer.
		if delim, ok := headerDelim(r.in.paths[0], r.src.Schema, r.in.hiveKeys); ok {
			set("delim", delim)
			set("header", true)
			set("skip", int64(0))
		}
	}
	if len(r.in.paths) > 0 && !(d.has("delim") && d.has("header") && d.has("skip")) {
		q := fmt.Sprintf(`SELECT Delimiter, Quote, Escape, HasHeader, SkipRows, Comment,
			coalesce(DateFormat, ''), coalesce(TimestampFormat, '') FROM sniff_csv(%s, ignore_errors=true%s)`,
			literal(r.in.paths[0]), sniffArgs(r.opts))
		var delim, quote, escape, comment, datef, tsf string
		var header bool
		var skip int64
		err := c.QueryRowContext(ctx, q).Scan(&delim, &quote, &escape, &header, &skip, &comment, &datef, &tsf)
		if err == nil {
			// sniff_csv spells "none" as "(empty)"; NUL also means none.
			for _, v := range []*string{&quote, &escape, &comment} {
				if *v == "(empty)" || *v == "\x00" {
					*v = ""
				}
			}
			set("delim", delim)
			set("header", header)
			set("skip", skip)
			// The quote is the job's or '"', never the sniffer's guess
			// from a sample: it took "'" for a file quoted with '"'
			// whose escape the job set to '\' (values kept their quotes
			// and backslashes), and a file whose apostrophes pair up
			// would be read with them as quotes. Its escape stands only
			// for the quote it was found with.
			jobQuote, _ := d.str("quote")
			if jobQuote == "" && !d.has("quote") {
				jobQuote = `"`
			}
			if escape != "" && quote == jobQuote {
				set("escape", escape)
			}
			if comment != "" {
				set("comment", comment)
			}
			if datef != "" {
				set("dateformat", datef)
			}
			if tsf != "" {
				set("timestampformat", tsf)
			}
		} else if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	set("delim", ",")
	set("quote", `"`)
	quote, _ := d.str("quote")
	set("escape", quote)
	set("header", true)
	r.dialect = d
	return nil
}

// sniffArgs are the job's options that sniff_csv takes, with a sample of
// 2,048 rows unless the job sets one: plenty for a dialect, and about half
// the time of DuckDB's default 20,480.
func sniffArgs(opts options) string {
	args := namedArgs(opts, func(o option) bool { return o.spec.inferOnly && o.name != "sample_size" })
	if !opts.has("sample_size") {
		args += ", sample_size=2048"
	}
	return args
}

// temporal reports whether any column has a date or time type.
func temporal(cols []bookmark.Column) bool {
	for _, c := range cols {
		t := strings.ToUpper(c.Type)
		if strings.HasPrefix(t, "DATE") || strings.HasPrefix(t, "TIME") {
			return true
		}
	}
	return false
}
