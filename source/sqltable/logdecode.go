package sqltable

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pglogrepl"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/internal/sqldb"
)

// changeWriter turns pgoutput messages into change rows, CSV in the order
// of cols and then _op, _lsn, _seq, _commit_time, skipping transactions
// that committed before after (the bookmark).
type changeWriter struct {
	ctx   context.Context
	job   string // the job's name, for messages
	src   string // the source's ctx, for messages
	db    *sqldb.DB
	table sqldb.Name
	cols  []column
	after pglogrepl.LSN
	csv   *csvWriter

	rels  map[uint32]*relation
	types map[[2]int64]column // the type of (oid, typmod)

	// The transaction being read.
	inTxn      bool
	skip       bool
	commitLSN  string
	commitTime time.Time
	seq        int64

	// What was written.
	Inserts, Updates, Deletes int64
	// LastEnd is the end of the last transaction read (0: none).
	LastEnd pglogrepl.LSN
	vals    []any
}

// relation is a table as the stream describes it: where each of its
// columns goes among cols, and which are its key.
type relation struct {
	name string
	at   []int  // index into cols of each stream column
	key  []bool // stream column is part of the replica identity
}

// SchemaChangeError is a changes: log source refusing a table whose
// columns are no longer those its bookmark was written for.
type SchemaChangeError struct {
	Job     string // the job whose reset reads a new snapshot
	Table   string
	Changes []string // "column x added (integer)", ...
}

func (e *SchemaChangeError) Error() string {
	return fmt.Sprintf("table %s changed its columns (%s): changes: log delivers rows of the columns its bookmark was written for; "+
		"run `tidemark bookmark reset %s` to read a new snapshot with the new columns", e.Table, strings.Join(e.Changes, ", "), e.Job)
}

// TruncatedError is a changes: log source meeting a TRUNCATE of its table,
// which no row change can express.
type TruncatedError struct {
	Job   string // the job whose reset reads a new snapshot
	Table string
	LSN   string
}

func (e *TruncatedError) Error() string {
	return fmt.Sprintf("table %s was truncated (transaction committed at %s): the change rows cannot express it; "+
		"empty the sinks as needed and run `tidemark bookmark reset %s` to read a new snapshot", e.Table, e.LSN, e.Job)
}

// schemaChanges lists how got differs from want (recorded schemas).
func schemaChanges(want, got []bookmark.Column) []string {
	var out []string
	for _, g := range got {
		i := slices.IndexFunc(want, func(w bookmark.Column) bool { return w.Name == g.Name })
		switch {
		case i < 0:
			out = append(out, fmt.Sprintf("column %s added (%s)", g.Name, g.Type))
		case want[i].Type != g.Type:
			out = append(out, fmt.Sprintf("column %s changed type from %s to %s", g.Name, want[i].Type, g.Type))
		}
	}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(g bookmark.Column) bool { return g.Name == w.Name }) {
			out = append(out, fmt.Sprintf("column %s dropped", w.Name))
		}
	}
	return out
}

// message handles one pgoutput message.
func (w *changeWriter) message(data []byte) error {
	m, err := pglogrepl.Parse(data)
	if err != nil {
		return fmt.Errorf("decoding a change message: %w", err)
	}
	switch m := m.(type) {
	case *pglogrepl.BeginMessage:
		w.inTxn, w.seq = true, 0
		w.skip = m.FinalLSN < w.after
		w.commitLSN, w.commitTime = lsnText(m.FinalLSN), m.CommitTime
	case *pglogrepl.CommitMessage:
		if !w.skip {
			w.LastEnd = m.TransactionEndLSN
		}
		w.inTxn, w.skip = false, false
	case *pglogrepl.RelationMessage:
		return w.relation(m)
	case *pglogrepl.InsertMessage:
		if w.skip {
			return nil
		}
		w.Inserts++
		return w.row(m.RelationID, "I", m.Tuple, nil)
	case *pglogrepl.UpdateMessage:
		if w.skip {
			return nil
		}
		r, err := w.rel(m.RelationID)
		if err != nil {
			return err
		}
		if m.OldTuple != nil && keyMoved(r, m.OldTuple, m.NewTuple) {
			// A key updated to another: the old key is gone.
			w.Deletes++
			if err := w.row(m.RelationID, "D", m.OldTuple, nil); err != nil {
				return err
			}
		}
		w.Updates++
		return w.row(m.RelationID, "U", m.NewTuple, m.OldTuple)
	case *pglogrepl.DeleteMessage:
		if w.skip {
			return nil
		}
		w.Deletes++
		return w.row(m.RelationID, "D", m.OldTuple, nil)
	case *pglogrepl.TruncateMessage:
		if w.skip {
			return nil
		}
		return &TruncatedError{Job: w.job, Table: w.table.String(), LSN: w.commitLSN}
	}
	return nil
}

// keyMoved reports whether an update changed the replica identity's
// values.
func keyMoved(r *relation, old, new *pglogrepl.TupleData) bool {
	for i, k := range r.key {
		if !k || i >= len(old.Columns) || i >= len(new.Columns) {
			continue
		}
		o, n := old.Columns[i], new.Columns[i]
		if n.DataType == pglogrepl.TupleDataTypeToast || o.DataType == pglogrepl.TupleDataTypeToast {
			continue
		}
		if o.DataType != n.DataType || !bytes.Equal(o.Data, n.Data) {
			return true
		}
	}
	return false
}

func (w *changeWriter) rel(id uint32) (*relation, error) {
	r, ok := w.rels[id]
	if !ok {
		return nil, fmt.Errorf("a change of relation %d arrived before its description", id)
	}
	return r, nil
}

// relation checks a table description against cols.
func (w *changeWriter) relation(m *pglogrepl.RelationMessage) error {
	got := make([]column, len(m.Columns))
	r := &relation{name: m.Namespace + "." + m.RelationName, at: make([]int, len(m.Columns)), key: make([]bool, len(m.Columns))}
	for i, c := range m.Columns {
		k := [2]int64{int64(c.DataType), int64(c.TypeModifier)}
		t, ok := w.types[k]
		if !ok {
			var err error
			if t, err = (pgDialect{}).mapType(w.ctx, w.db, c.Name, c.DataType, c.TypeModifier); err != nil {
				return err
			}
			w.types[k] = t
		}
		t.Name = c.Name
		got[i] = t
		r.at[i] = findColumn(w.cols, c.Name)
		r.key[i] = c.Flags&1 == 1
	}
	if ch := schemaChanges(schema(w.cols), schema(got)); len(ch) > 0 {
		return &SchemaChangeError{Job: w.job, Table: w.table.String(), Changes: ch}
	}
	w.rels[m.RelationID] = r
	return nil
}

// row writes one change row from tuple; a value the stream left out (an
// unchanged TOASTed value) comes from old when old has it.
func (w *changeWriter) row(relID uint32, op string, tuple, old *pglogrepl.TupleData) error {
	r, err := w.rel(relID)
	if err != nil {
		return err
	}
	if tuple == nil {
		return fmt.Errorf("a %s change without its row", op)
	}
	n := len(w.cols)
	if w.vals == nil {
		w.vals = make([]any, n+4)
	}
	clear(w.vals)
	for i, c := range tuple.Columns {
		if i >= len(r.at) || r.at[i] < 0 {
			continue
		}
		col := w.cols[r.at[i]]
		switch c.DataType {
		case pglogrepl.TupleDataTypeNull:
		case pglogrepl.TupleDataTypeToast:
			if old == nil || i >= len(old.Columns) || old.Columns[i].DataType != pglogrepl.TupleDataTypeText {
				return &Error{Source: w.src, What: "table " + w.table.String(), Op: "reading an update committed at " + w.commitLSN, Column: col.Name,
					Err: errors.New("the change left out the column's unchanged value (stored out of line, TOAST), so the row cannot be written whole: " +
						"ALTER TABLE ... REPLICA IDENTITY FULL makes PostgreSQL send it")}
			}
			v, err := logValue(col, old.Columns[i].Data)
			if err != nil {
				return err
			}
			w.vals[r.at[i]] = v
		default:
			v, err := logValue(col, c.Data)
			if err != nil {
				return err
			}
			w.vals[r.at[i]] = v
		}
	}
	w.seq++
	w.vals[n], w.vals[n+1], w.vals[n+2] = op, w.commitLSN, w.seq
	w.vals[n+3] = w.commitTime.UTC().Format("2006-01-02 15:04:05.999999+00")
	return w.csv.write(w.vals, make([]formatter, n+4))
}

// logValue is a value of the stream (the server's text output, in the
// session's pinned settings) in the text the engine parses as col's type,
// as the snapshot's COPY writes it.
func logValue(col column, text []byte) (any, error) {
	switch col.Type.Kind {
	case bookmark.Blob:
		b := bytes.TrimPrefix(text, []byte(`\x`))
		out := make([]byte, 0, len(b)*2)
		for i := 0; i+1 < len(b); i += 2 {
			out = append(out, '\\', 'x', b[i], b[i+1])
		}
		return out, nil
	case bookmark.Decimal:
		switch string(text) {
		case "NaN", "Infinity", "-Infinity":
			return nil, fmt.Errorf("column %s holds %s, which %s cannot hold", col.Name, text, col.Type)
		}
	case bookmark.List:
		return pgArrayToList(col.Name, string(text))
	}
	return text, nil
}

// pgArrayToList rewrites a one-dimensional PostgreSQL array literal
// ({a,"b c",NULL}) as the engine's list text (["a", "b c", NULL]).
func pgArrayToList(name, s string) (string, error) {
	if !strings.HasPrefix(s, "{") || !strings.HasSuffix(s, "}") {
		return "", fmt.Errorf("column %s: %q is not a one-dimensional array (lower bound other than 1?)", name, s)
	}
	body := s[1 : len(s)-1]
	var out strings.Builder
	out.WriteByte('[')
	first := true
	emit := func(v string, null bool) {
		if !first {
			out.WriteByte(',')
		}
		first = false
		if null {
			out.WriteString("NULL")
			return
		}
		out.WriteByte('"')
		out.WriteString(strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v))
		out.WriteByte('"')
	}
	for i := 0; i < len(body); {
		switch body[i] {
		case '{':
			return "", fmt.Errorf("column %s holds a multidimensional array, which is not supported", name)
		case '"':
			var v strings.Builder
			i++
			for i < len(body) && body[i] != '"' {
				if body[i] == '\\' && i+1 < len(body) {
					i++
				}
				v.WriteByte(body[i])
				i++
			}
			i++ // closing quote
			emit(v.String(), false)
		default:
			j := strings.IndexByte(body[i:], ',')
			if j < 0 {
				j = len(body) - i
			}
			v := strings.TrimSpace(body[i : i+j])
			emit(v, strings.EqualFold(v, "NULL"))
			i += j
		}
		if i < len(body) && body[i] == ',' {
			i++
		}
	}
	out.WriteByte(']')
	return out.String(), nil
}
