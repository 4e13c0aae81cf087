package duckdb

import (
	"context"
	"database/sql"
	"reflect"
	"unsafe"

	"github.com/duckdb/duckdb-go/v2/mapping"

	"github.com/tidemark-etl/tidemark/engine"
)

// DuckDB tracks the progress of a running statement (with the setting
// enable_progress_bar) and its C API reads it from another thread
// (duckdb_query_progress), but duckdb-go does not export the C connection
// that the call needs: connHandle takes it from the driver's connection
// by reflection. If a driver version names or types that field
// differently, there is simply no progress (TestProgress notices).

var connHandleType = reflect.TypeOf(mapping.Connection{})

// connHandle returns the C connection under c, if it can be found.
func connHandle(c *sql.Conn) (mapping.Connection, bool) {
	var h mapping.Connection
	ok := false
	_ = c.Raw(func(dc any) error {
		v := reflect.ValueOf(dc)
		if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
			return nil
		}
		f := v.Elem().FieldByName("conn")
		if !f.IsValid() || f.Type() != connHandleType || !f.CanAddr() {
			return nil
		}
		h = *(*mapping.Connection)(unsafe.Pointer(f.UnsafeAddr()))
		ok = h.Ptr != nil
		return nil
	})
	return h, ok
}

// track makes c's statements visible to Progress until the returned
// function is called, which must happen before c is closed. DuckDB's
// progress settings are per connection.
func (e *Engine) track(ctx context.Context, c *sql.Conn) func() {
	if !e.opts.Progress {
		return func() {}
	}
	// Tracked, never printed.
	if _, err := c.ExecContext(ctx, "SET enable_progress_bar = true; SET enable_progress_bar_print = false; SET progress_bar_time = 0"); err != nil {
		return func() {}
	}
	h, ok := connHandle(c)
	if !ok {
		return func() {}
	}
	e.mu.Lock()
	e.running, e.tracking = h, true
	e.mu.Unlock()
	return func() {
		e.mu.Lock()
		e.running, e.tracking = mapping.Connection{}, false
		e.mu.Unlock()
	}
}

// Progress reports the progress of the statement Execute runs (DuckDB's
// estimate: for file scans, the share of the input read). It holds the
// lock while it asks, so Execute cannot close the connection meanwhile.
func (e *Engine) Progress() (engine.Progress, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.tracking {
		return engine.Progress{}, false
	}
	q := mapping.QueryProgress(e.running)
	pct, rows, total := mapping.QueryProgressTypeMembers(&q)
	if pct < 0 {
		return engine.Progress{}, false
	}
	return engine.Progress{Percent: pct, Rows: int64(rows), TotalRows: int64(total)}, true
}
