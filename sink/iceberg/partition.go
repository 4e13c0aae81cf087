package iceberg

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	iceberg "github.com/apache/iceberg-go"
)

// Partitioning. partition_by names columns (identity) and Iceberg
// transforms of columns; the new table's spec is made of them. Every data
// file of a partitioned table holds one partition tuple: Stage splits each
// file the engine wrote by the tuple of its rows, computed in Go with
// iceberg-go's transforms (bucket is Iceberg's murmur3 hash, as readers
// prune with it), and Publish computes each file's tuple from its rows
// again, failing if a file holds two.

// partField is one entry of partition_by.
type partField struct {
	Col  string
	Tr   iceberg.Transform
	Name string // the partition field's name, Iceberg's default for it
}

var partRe = regexp.MustCompile(`^([A-Za-z]+)\(\s*(?:([0-9]+)\s*,\s*)?([A-Za-z_][A-Za-z0-9_]*)\s*\)$`)

// parsePartition parses one partition_by entry: a column, or year(c),
// month(c), day(c), hour(c), bucket(N, c), truncate(W, c).
func parsePartition(s string) (partField, error) {
	s = strings.TrimSpace(s)
	m := partRe.FindStringSubmatch(s)
	if m == nil {
		if !identifier(s) {
			return partField{}, fmt.Errorf("%q: want a column or a transform (year(c), month(c), day(c), hour(c), "+
				"bucket(N, c), truncate(W, c))", s)
		}
		return partField{Col: s, Tr: iceberg.IdentityTransform{}, Name: s}, nil
	}
	fn, n, col := strings.ToLower(m[1]), m[2], m[3]
	width := 0
	if n != "" {
		w, err := strconv.Atoi(n)
		if err != nil || w <= 0 {
			return partField{}, fmt.Errorf("%q: %s needs a positive number", s, fn)
		}
		width = w
	}
	var f partField
	switch fn {
	case "year", "month", "day", "hour":
		if n != "" {
			return partField{}, fmt.Errorf("%q: %s takes only a column: %s(%s)", s, fn, fn, col)
		}
		tr, _ := iceberg.ParseTransform(fn)
		f = partField{Col: col, Tr: tr, Name: col + "_" + fn}
	case "bucket":
		if n == "" {
			return partField{}, fmt.Errorf("%q: bucket needs the number of buckets: bucket(16, %s)", s, col)
		}
		f = partField{Col: col, Tr: iceberg.BucketTransform{NumBuckets: width}, Name: col + "_bucket"}
	case "truncate":
		if n == "" {
			return partField{}, fmt.Errorf("%q: truncate needs a width: truncate(4, %s)", s, col)
		}
		f = partField{Col: col, Tr: iceberg.TruncateTransform{Width: width}, Name: col + "_trunc"}
	default:
		return partField{}, fmt.Errorf("%q: unknown transform %s (year, month, day, hour, bucket, truncate)", s, fn)
	}
	return f, nil
}

func identifier(s string) bool {
	return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`).MatchString(s)
}

// parsePartitions parses partition_by.
func parsePartitions(by []string) ([]partField, error) {
	var out []partField
	for _, s := range by {
		f, err := parsePartition(s)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// buildSpec is the partition spec of fields over schema sc; a column sc
// lacks, or one the transform does not apply to, is an error naming it.
func buildSpec(fields []partField, sc *iceberg.Schema) (iceberg.PartitionSpec, error) {
	var opts []iceberg.PartitionOption
	for _, f := range fields {
		src, ok := sc.FindFieldByName(f.Col)
		if !ok {
			return iceberg.PartitionSpec{}, fmt.Errorf("partition_by: the output has no column %q", f.Col)
		}
		if !f.Tr.CanTransform(src.Type) {
			return iceberg.PartitionSpec{}, fmt.Errorf("partition_by: %s cannot be applied to column %q of type %s",
				f.Tr, f.Col, src.Type)
		}
		opts = append(opts, iceberg.AddPartitionFieldByName(f.Col, f.Name, f.Tr, sc, nil))
	}
	spec, err := iceberg.NewPartitionSpecOpts(opts...)
	if err != nil {
		return spec, fmt.Errorf("partition_by: %w", err)
	}
	return spec, nil
}

// specText describes spec over sc as partition_by would write it, for
// comparisons and messages: "product, day(ts), bucket(16, id)"; "" for
// an unpartitioned spec.
func specText(spec iceberg.PartitionSpec, sc *iceberg.Schema) string {
	var parts []string
	for _, f := range spec.Fields() {
		col, _ := sc.FindColumnName(f.SourceID())
		switch t := f.Transform.(type) {
		case iceberg.IdentityTransform:
			parts = append(parts, col)
		case iceberg.BucketTransform:
			parts = append(parts, fmt.Sprintf("bucket(%d, %s)", t.NumBuckets, col))
		case iceberg.TruncateTransform:
			parts = append(parts, fmt.Sprintf("truncate(%d, %s)", t.Width, col))
		default:
			parts = append(parts, fmt.Sprintf("%s(%s)", t, col))
		}
	}
	return strings.Join(parts, ", ")
}

// fieldsText is specText for partition_by's entries.
func fieldsText(fields []partField) string {
	var parts []string
	for _, f := range fields {
		switch t := f.Tr.(type) {
		case iceberg.IdentityTransform:
			parts = append(parts, f.Col)
		case iceberg.BucketTransform:
			parts = append(parts, fmt.Sprintf("bucket(%d, %s)", t.NumBuckets, f.Col))
		case iceberg.TruncateTransform:
			parts = append(parts, fmt.Sprintf("truncate(%d, %s)", t.Width, f.Col))
		default:
			parts = append(parts, fmt.Sprintf("%s(%s)", t, f.Col))
		}
	}
	return strings.Join(parts, ", ")
}

// tuple is one row's partition values, by the spec's field ids, and its
// key (equal tuples, equal keys).
type tuple struct {
	key    string
	values map[int]any
}

// literal is the value of a at row i as an Iceberg literal (Valid false:
// null), for the transforms.
func literal(a arrow.Array, i int) (iceberg.Optional[iceberg.Literal], error) {
	if a.IsNull(i) {
		return iceberg.Optional[iceberg.Literal]{}, nil
	}
	var l iceberg.Literal
	switch a := a.(type) {
	case *array.Boolean:
		l = iceberg.NewLiteral(a.Value(i))
	case *array.Int8:
		l = iceberg.NewLiteral(int32(a.Value(i)))
	case *array.Int16:
		l = iceberg.NewLiteral(int32(a.Value(i)))
	case *array.Int32:
		l = iceberg.NewLiteral(a.Value(i))
	case *array.Int64:
		l = iceberg.NewLiteral(a.Value(i))
	case *array.String:
		l = iceberg.NewLiteral(a.Value(i))
	case *array.LargeString:
		l = iceberg.NewLiteral(a.Value(i))
	case *array.Binary:
		l = iceberg.NewLiteral(a.Value(i))
	case *array.Date32:
		l = iceberg.NewLiteral(iceberg.Date(a.Value(i)))
	case *array.Timestamp:
		v := int64(a.Value(i))
		switch a.DataType().(*arrow.TimestampType).Unit {
		case arrow.Second:
			v *= 1_000_000
		case arrow.Millisecond:
			v *= 1_000
		case arrow.Nanosecond:
			return iceberg.Optional[iceberg.Literal]{}, fmt.Errorf("nanosecond timestamps cannot be partitioned by this build")
		}
		l = iceberg.NewLiteral(iceberg.Timestamp(v))
	default:
		return iceberg.Optional[iceberg.Literal]{}, fmt.Errorf("a column of type %s cannot be partitioned by this build", a.DataType())
	}
	return iceberg.Optional[iceberg.Literal]{Valid: true, Val: l}, nil
}

// partitioner computes the partition tuple of a record's rows.
type partitioner struct {
	spec iceberg.PartitionSpec
	sc   *iceberg.Schema
}

// tuples are the partition tuples of rec's rows.
func (p partitioner) tuples(rec arrow.RecordBatch) ([]tuple, error) {
	out := make([]tuple, rec.NumRows())
	for i := range out {
		out[i].values = map[int]any{}
	}
	keys := make([]strings.Builder, rec.NumRows())
	for _, f := range p.spec.Fields() {
		col, _ := p.sc.FindColumnName(f.SourceID())
		idx := rec.Schema().FieldIndices(col)
		if len(idx) != 1 {
			return nil, fmt.Errorf("partition_by: the output has no column %q", col)
		}
		a := rec.Column(idx[0])
		for i := range out {
			v, err := literal(a, i)
			if err != nil {
				return nil, fmt.Errorf("partition_by: column %q: %w", col, err)
			}
			r := f.Transform.Apply(v)
			if r.Valid {
				out[i].values[f.FieldID] = r.Val.Any()
				keys[i].WriteString(keyPart(r.Val.Any()))
			} else {
				out[i].values[f.FieldID] = nil
				keys[i].WriteString(keyPart(nil))
			}
		}
	}
	for i := range out {
		out[i].key = keys[i].String()
	}
	return out, nil
}

// fileTuples reads the Parquet file at path and calls fn with each
// record and its rows' tuples.
func (p partitioner) fileTuples(ctx context.Context, path string, fn func(rec arrow.RecordBatch, ts []tuple) error) error {
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	defer r.Close()
	fr, err := pqarrow.NewFileReader(r, pqarrow.ArrowReadProperties{BatchSize: 64 << 10}, memory.DefaultAllocator)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	defer rr.Release()
	for rr.Next() {
		rec := rr.RecordBatch()
		ts, err := p.tuples(rec)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := fn(rec, ts); err != nil {
			return err
		}
	}
	if err := rr.Err(); err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	return nil
}

// fileTuple is the one partition tuple of the rows of the file at path;
// a file whose rows have two is an error (it would break readers'
// pruning). ok is false for a file without rows.
func (p partitioner) fileTuple(ctx context.Context, path string) (t tuple, ok bool, err error) {
	err = p.fileTuples(ctx, path, func(_ arrow.RecordBatch, ts []tuple) error {
		for _, r := range ts {
			if !ok {
				t, ok = r, true
			} else if r.key != t.key {
				return fmt.Errorf("data file %s holds rows of two partitions (%s and %s)", path, t.key, r.key)
			}
		}
		return nil
	})
	return t, ok, err
}

// split rewrites the Parquet file at path as one file per partition
// tuple of its rows, named path without .parquet plus -pN.parquet, and
// deletes it; a file whose rows share one tuple is kept as it is. It
// returns the files and their row counts.
func (p partitioner) split(ctx context.Context, path string) (paths []string, rows []int64, err error) {
	type group struct {
		w    *pqarrow.FileWriter
		f    *os.File
		path string
		rows int64
	}
	groups := map[string]*group{}
	var order []*group
	var first string
	single := true
	// A first pass finds whether the file holds more than one tuple.
	err = p.fileTuples(ctx, path, func(_ arrow.RecordBatch, ts []tuple) error {
		for _, t := range ts {
			if first == "" {
				first = t.key
			} else if t.key != first {
				single = false
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if single {
		n, err := parquetRows(path)
		return []string{path}, []int64{n}, err
	}
	closeAll := func() error {
		var err error
		for _, g := range order {
			if cerr := g.w.Close(); err == nil {
				err = cerr
			}
		}
		return err
	}
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy))
	base := strings.TrimSuffix(path, ".parquet")
	err = p.fileTuples(ctx, path, func(rec arrow.RecordBatch, ts []tuple) error {
		idx := map[string][]int64{}
		var keys []string
		for i, t := range ts {
			if _, ok := idx[t.key]; !ok {
				keys = append(keys, t.key)
			}
			idx[t.key] = append(idx[t.key], int64(i))
		}
		for _, k := range keys {
			g := groups[k]
			if g == nil {
				g = &group{path: fmt.Sprintf("%s-p%05d.parquet", base, len(order))}
				f, err := os.Create(g.path)
				if err != nil {
					return fmt.Errorf("splitting %s by partition: %w", path, err)
				}
				g.f = f
				if g.w, err = pqarrow.NewFileWriter(rec.Schema(), f, props, pqarrow.DefaultWriterProps()); err != nil {
					f.Close()
					return fmt.Errorf("splitting %s by partition: %w", path, err)
				}
				groups[k] = g
				order = append(order, g)
			}
			b := array.NewInt64Builder(memory.DefaultAllocator)
			b.AppendValues(idx[k], nil)
			ia := b.NewArray()
			b.Release()
			d, err := compute.Take(ctx, *compute.DefaultTakeOptions(), compute.NewDatum(rec), compute.NewDatum(ia))
			ia.Release()
			if err != nil {
				return fmt.Errorf("splitting %s by partition: %w", path, err)
			}
			part := d.(*compute.RecordDatum).Value
			err = g.w.Write(part)
			d.Release()
			if err != nil {
				return fmt.Errorf("splitting %s by partition: %w", path, err)
			}
			g.rows += int64(len(idx[k]))
		}
		return nil
	})
	if cerr := closeAll(); err == nil {
		err = cerr
	}
	if err != nil {
		for _, g := range order {
			_ = os.Remove(g.path)
		}
		return nil, nil, err
	}
	if err := os.Remove(path); err != nil {
		return nil, nil, fmt.Errorf("splitting %s by partition: %w", path, err)
	}
	for _, g := range order {
		paths, rows = append(paths, g.path), append(rows, g.rows)
	}
	return paths, rows, nil
}

// parquetRows is the number of rows of the Parquet file at path.
func parquetRows(path string) (int64, error) {
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", path, err)
	}
	defer r.Close()
	return r.NumRows(), nil
}

// withPartition is df (read with the unpartitioned spec, for its
// statistics) as a data file of spec with the partition values t.
func withPartition(df iceberg.DataFile, spec iceberg.PartitionSpec, sc *iceberg.Schema, t tuple) (iceberg.DataFile, error) {
	logical := map[int]string{}
	for _, f := range spec.Fields() {
		src, ok := sc.FindFieldByID(f.SourceID())
		if !ok {
			continue
		}
		switch f.Transform.ResultType(src.Type).(type) {
		case iceberg.DateType:
			logical[f.FieldID] = "date"
		case iceberg.TimestampType, iceberg.TimestampTzType:
			logical[f.FieldID] = "timestamp-micros"
		}
	}
	b, err := iceberg.NewDataFileBuilder(spec, iceberg.EntryContentData, df.FilePath(), df.FileFormat(), t.values,
		logical, nil, df.Count(), df.FileSizeBytes())
	if err != nil {
		return nil, err
	}
	b.ColumnSizes(df.ColumnSizes()).ValueCounts(df.ValueCounts()).NullValueCounts(df.NullValueCounts()).
		NaNValueCounts(df.NaNValueCounts()).LowerBoundValues(df.LowerBoundValues()).
		UpperBoundValues(df.UpperBoundValues()).SplitOffsets(df.SplitOffsets())
	return b.Build(), nil
}

// partitionKey is the key of a data file's partition values under spec,
// as tuple.key makes them.
func partitionKey(spec iceberg.PartitionSpec, values map[int]any) string {
	var b strings.Builder
	for _, f := range spec.Fields() {
		b.WriteString(keyPart(values[f.FieldID]))
	}
	return b.String()
}

// keyPart is one partition value in a key, the same whatever Go type
// holds it (a date is iceberg.Date when computed, and may be int32 or
// time.Time when a manifest is read).
func keyPart(v any) string {
	switch v := v.(type) {
	case nil:
		return "null|"
	case time.Time:
		return fmt.Sprintf("t:%d|", v.UnixMicro())
	case []byte:
		return fmt.Sprintf("b:%x|", v)
	case string:
		return fmt.Sprintf("s:%q|", v)
	case bool:
		return fmt.Sprintf("o:%t|", v)
	}
	if r := reflect.ValueOf(v); r.CanInt() {
		return fmt.Sprintf("i:%d|", r.Int())
	}
	return fmt.Sprintf("%T:%v|", v, v)
}
