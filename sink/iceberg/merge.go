package iceberg

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	iceberg "github.com/apache/iceberg-go"
)

// Mode merge is copy-on-write: the run's snapshot deletes the table's
// rows whose merge keys a row of the run has (the data files that hold
// them are rewritten without them) and adds the run's files, in one
// commit. A run whose output holds one key twice fails before its commit:
// which of the two should win is not known. A row whose key has a null
// is added and matches nothing.

// keyTuple is one row's merge key values, in merge_keys order.
type keyTuple []any

func (k keyTuple) String() string {
	var parts []string
	for _, v := range k {
		parts = append(parts, fmt.Sprint(v))
	}
	return strings.Join(parts, ", ")
}

// readKeys reads the merge key columns of the Parquet file at path: the
// tuples of its rows whose keys are all set.
func readKeys(ctx context.Context, path string, keys []string) ([]keyTuple, error) {
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	fr, err := pqarrow.NewFileReader(r, pqarrow.ArrowReadProperties{BatchSize: 64 << 10}, nil)
	if err != nil {
		return nil, err
	}
	sc, err := fr.Schema()
	if err != nil {
		return nil, err
	}
	var cols []int
	for _, k := range keys {
		idx := sc.FieldIndices(k)
		if len(idx) != 1 {
			return nil, fmt.Errorf("merge_keys: the output has no column %q (its columns: %s)", k, columnNames(sc))
		}
		switch t := sc.Field(idx[0]).Type.ID(); t {
		case arrow.INT32, arrow.INT64, arrow.STRING, arrow.LARGE_STRING:
		default:
			return nil, fmt.Errorf("merge_keys: column %q is of type %s; merge keys are integers or strings", k, sc.Field(idx[0]).Type)
		}
		cols = append(cols, idx[0])
	}
	rr, err := fr.GetRecordReader(ctx, cols, nil)
	if err != nil {
		return nil, err
	}
	defer rr.Release()
	var out []keyTuple
	for rr.Next() {
		rec := rr.RecordBatch()
	rows:
		for i := range int(rec.NumRows()) {
			t := make(keyTuple, len(keys))
			for c := range len(keys) {
				col := rec.Column(c)
				if col.IsNull(i) {
					continue rows
				}
				switch a := col.(type) {
				case *array.Int32:
					t[c] = a.Value(i)
				case *array.Int64:
					t[c] = a.Value(i)
				case *array.String:
					t[c] = a.Value(i)
				case *array.LargeString:
					t[c] = a.Value(i)
				}
			}
			out = append(out, t)
		}
	}
	if err := rr.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func columnNames(sc *arrow.Schema) string {
	var names []string
	for _, f := range sc.Fields() {
		names = append(names, f.Name)
	}
	return strings.Join(names, ", ")
}

// checkKeys fails on a key tuple that two rows of the run have.
func checkKeys(keys []string, tuples []keyTuple) error {
	seen := make(map[string]bool, len(tuples))
	for _, t := range tuples {
		s := fmt.Sprintf("%#v", []any(t))
		if seen[s] {
			return fmt.Errorf("mode merge: the run's output has two rows with %s = (%s); a merge needs one row per key",
				strings.Join(keys, ", "), t)
		}
		seen[s] = true
	}
	return nil
}

// keyFilter is the expression that matches the table's rows with one of
// tuples' keys.
func keyFilter(keys []string, tuples []keyTuple) iceberg.BooleanExpression {
	if len(tuples) == 0 {
		return iceberg.AlwaysFalse{}
	}
	if len(keys) == 1 {
		ref := iceberg.Reference(keys[0])
		switch tuples[0][0].(type) {
		case int32:
			return iceberg.IsIn(ref, column[int32](tuples)...)
		case int64:
			return iceberg.IsIn(ref, column[int64](tuples)...)
		default:
			return iceberg.IsIn(ref, column[string](tuples)...)
		}
	}
	var ors []iceberg.BooleanExpression
	for _, t := range tuples {
		var ands []iceberg.BooleanExpression
		for c, k := range keys {
			ands = append(ands, equal(iceberg.Reference(k), t[c]))
		}
		ors = append(ors, join(iceberg.NewAnd, ands))
	}
	return join(iceberg.NewOr, ors)
}

func column[T int32 | int64 | string](tuples []keyTuple) []T {
	out := make([]T, len(tuples))
	for i, t := range tuples {
		out[i] = t[0].(T)
	}
	return out
}

func equal(ref iceberg.UnboundTerm, v any) iceberg.BooleanExpression {
	switch v := v.(type) {
	case int32:
		return iceberg.EqualTo(ref, v)
	case int64:
		return iceberg.EqualTo(ref, v)
	default:
		return iceberg.EqualTo(ref, v.(string))
	}
}

// join folds exprs (at least one) with op (NewAnd, NewOr).
func join(op func(l, r iceberg.BooleanExpression, more ...iceberg.BooleanExpression) iceberg.BooleanExpression,
	exprs []iceberg.BooleanExpression) iceberg.BooleanExpression {
	if len(exprs) == 1 {
		return exprs[0]
	}
	return op(exprs[0], exprs[1], exprs[2:]...)
}
