// Package sqltable reads SQL tables (or queries) incrementally by bookmark
// keys, Glue's jobBookmarkKeys model, from PostgreSQL (pgx), MySQL and
// MariaDB (go-sql-driver/mysql) and SQLite (modernc.org/sqlite), and
// closes Glue's gaps: rows that commit late, ties at the mark, updates, and
// keys that are not monotonic.
//
// # Use
//
//	src, err := sqltable.Open(ctx, cfg)       // describe, settle keys; src.Notes() are warnings
//	plan, err := src.Plan(ctx, prevCursor)    // bounds and checks; plan.Pending()==0: nothing new
//	ex, err := plan.Extract(ctx, dir)         // files for the engine + next cursor + range
//	... engine reads ex.Files (ex.Format, ex.Options, ex.Schema) ...
//	commit ex.Cursor as bookmark.SourceState.Cursor, ex.Range in the run's input manifest
//	ex, err := src.ReadRanges(ctx, ranges, dir)  // pause from/to: read runs' ranges again
//
// # Reading
//
// Keys default to the table's primary key; they are compared as a tuple:
// (a, b) > (x, y) on PostgreSQL, expanded as a >= x AND (a > x OR (a = x
// AND b > y)) on MySQL and SQLite so that an index on (a, b) is used.
// Without such an index every run scans the table, and Open says so.
// bookmark_keys_sort_order desc reads keys below the mark instead.
//
// Plan fixes the run's upper bound: the current maximum key tuple (or,
// with bounded_rows, the tuple at which that many rows end — a run always
// takes every row of its last tuple, so ties are never split). Rows
// inserted while the run reads wait for the next run. Extract reads the
// rows in (mark, upper] — PostgreSQL through COPY (SELECT ...) TO STDOUT
// straight into the file, MySQL and SQLite streamed row by row, memory
// bounded either way — and the late rows of the lookback window, all in
// one snapshot (REPEATABLE READ / a consistent snapshot / one SQLite read
// transaction), together with what the next cursor records.
//
// # Output
//
// Extract writes CSV files without a header, every column in the order of
// Schema; the engine reads them with Options: delim ',', quote and escape
// '"', an empty unquoted field is NULL and a quoted empty field is the
// empty string (allow_quoted_nulls false). Values are in the text form
// DuckDB parses for the column's type.
//
// # Type mapping (database type -> recorded type)
//
// Columns are typed in the engine-neutral type model (bookmark.Type); the
// recorded schema holds its canonical texts. One function per dialect
// maps (pgModel, mysqlModel, sqliteModel):
//
//	PostgreSQL                          type model
//	smallint, integer, bigint           SMALLINT, INTEGER, BIGINT
//	numeric(p,s), p <= 38               DECIMAL(p,s)
//	numeric(p,s), p > 38; numeric       VARCHAR (exact text; the model has no wider decimal; noted)
//	real, double precision              FLOAT, DOUBLE (NaN, ±Infinity kept)
//	text, varchar(n), char(n), enums    VARCHAR
//	boolean                             BOOLEAN
//	date                                DATE (infinity kept as DuckDB's extreme dates)
//	timestamp [without time zone]       TIMESTAMP
//	timestamp with time zone            TIMESTAMP WITH TIME ZONE (read in UTC)
//	time                                TIME
//	interval                            INTERVAL
//	json, jsonb                         JSON
//	bytea                               BLOB
//	uuid                                UUID
//	T[] (one dimension)                 ARRAY<T'> (element mapped as above; bytea[] -> ARRAY<VARCHAR> hex);
//	                                    a multidimensional value fails the read naming the column
//	anything else (inet, money, ...)    VARCHAR (the server's text; noted)
//
//	MySQL / MariaDB                     type model
//	tinyint .. bigint [unsigned]        TINYINT .. BIGINT, UTINYINT .. UBIGINT (mediumint: INTEGER)
//	decimal(p,s), p <= 38 / p > 38      DECIMAL(p,s) / VARCHAR
//	float, double                       FLOAT, DOUBLE
//	char, varchar, text, enum, set      VARCHAR
//	date, datetime(n)                   DATE, TIMESTAMP
//	timestamp(n)                        TIMESTAMP WITH TIME ZONE (MySQL keeps it in UTC; read with time_zone +00:00)
//	time(n)                             TIME (values outside 00:00-24:00 fail in the engine)
//	year                                SMALLINT
//	json; MariaDB JSON (longtext        JSON
//	  with a json_valid check)
//	binary, varbinary, blobs, spatial   BLOB (spatial: the server's WKB bytes)
//	bit(n)                              UBIGINT
//	uuid (MariaDB)                      UUID
//
//	SQLite (by declared type)           type model
//	...BOOL...                          BOOLEAN (0/1)
//	...INT...                           BIGINT
//	DECIMAL(p,s), NUMERIC(p,s), p <= 38 DECIMAL(p,s)
//	...REAL..., ...FLOA..., ...DOUB...  DOUBLE
//	DATETIME..., TIMESTAMP...           TIMESTAMP (WITH TIME ZONE when the name says TZ / TIME ZONE)
//	DATE, TIME...                       DATE, TIME
//	...JSON..., ...UUID...              JSON, UUID (16-byte blobs written as UUID text)
//	...BLOB..., ...BINARY...            BLOB
//	anything else, or none              VARCHAR (values written as their text)
//
// SQLite values carry their own types; a value that does not parse as the
// declared type fails in the engine, naming file, line and column.
//
// # What lookback guarantees
//
// Let a run commit the mark M (the key tuple it read up to) and, with
// lookback L, the window start W = M₁ − L on the first key (M₁ + L for
// desc keys; for dates L is rounded up to whole days). The cursor records
// the identities — a 128-bit hash of primary key and key values, or of
// every column when there is no primary key — of all rows with first key
// in [W, M] as of that run's snapshot.
//
//   - A row that becomes visible after that snapshot (its transaction
//     committed later) with key tuple ≤ M and first key ≥ W is read by the
//     next run, exactly once: the next run re-reads [W, M] and drops the
//     rows whose identity is recorded.
//   - Rows sharing the mark's key tuple are all read by the run that sets
//     the mark (the upper bound is inclusive and bounded runs end on a
//     whole tuple); one that commits later is a late row as above.
//   - A row that becomes visible with first key < W is not read. It is
//     counted (Plan.Regressions) by the regression check and should be
//     reported: lengthen the lookback, or reset.
//   - The window moves only with the mark, so a late row is caught by
//     whichever later run comes first, however much time passes, as long
//     as no run has moved the mark more than L past it.
//   - Updates: with keys such as [updated_at, id] an updated row has a new
//     key tuple and is read again as its new version. An update that keeps
//     the keys is not read again. A row deleted and inserted again with the
//     same primary key and keys inside the window counts as delivered.
//   - Without lookback nothing is re-read; a late row is not read and is
//     counted as a regression.
//
// When lookback is first turned on, the first run builds the window and
// re-reads nothing; changing keys or sort order needs a bookmark reset.
//
// # Regression check
//
// The cursor keeps the number of rows in a region behind the window
// (first key < W; without lookback: key tuple ≤ M) whose first key is at
// or past a floor, as the run saw them. The next Plan counts the same
// region again; the rows that appeared are Plan.Regressions: rows that
// appeared where no run reads (non-monotonic keys, commits later than the
// lookback, an update moving a row's keys backwards behind the window).
// The region grows with the boundary; once it holds more than twice
// Config.RegressionRows rows, the floor moves up to the key of the
// RegressionRows-th row behind the boundary, so each run reads a bounded
// stretch of the keys' index whatever the table's size. A row appearing
// behind the floor is not seen; RegressionRows < 0 keeps no floor (every
// row, each run).
//
// A count alone lets a row that leaves the region in the same interval
// (updated forward, deleted) hide one that appears. Where it can afford
// to, the check tells them apart:
//
//   - primary key one integer column, not the first key: the cursor keeps
//     the highest primary key of the run's snapshot (PKMax); the region's
//     rows above it were inserted since and each is a regression, in the
//     same count query. Rows that appear with a lower primary key, or are
//     moved in by an update, are counted: regressions = above +
//     max(0, now − above − before).
//   - other keys, a bounded region: the cursor keeps the identities of the
//     rows nearest the boundary (a second region inside the first, of
//     regionDepth: identityRows, or the region's own depth up to twice
//     that), 64-bit hashes of primary key and key values (key values alone
//     without a primary key), with multiplicity, as a Golomb-coded set
//     (region.go). A row there whose identity was not kept is a
//     regression; the rest of the region is counted: regressions =
//     appeared + max(0, increase of the rows outside it). Not seen: a row
//     appearing outside it as one leaves; a row appearing with the
//     identity of one that left in the same interval; with probability
//     2^-16 per row, one whose fingerprint matches a kept one's.
//   - RegressionRows < 0 without an integer primary key: counts only; Open
//     notes it (Source.Notes).
//
// A cursor written before PKMax or identities were kept, or keeping them
// of other columns (a primary key added or dropped) or at another depth,
// is compared by count once.
//
// # Errors
//
// Errors are *Error (source, table, what was being done, column and key
// range where known) or *NullKeyError; a lost connection, a killed query
// or a lock timeout says so, and the bookmark is kept (nothing to commit).
// Passwords come only from password_env and never appear in messages.
package sqltable
