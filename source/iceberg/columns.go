package iceberg

import (
	"fmt"

	"github.com/apache/arrow-go/v18/parquet/file"
	iceberg "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/tidemark-etl/tidemark/bookmark"
)

// columns are the table schema's columns in the type model, the schema the
// engine reads every data file with (a file lacking a column the table
// gained since gives NULL). A type the model does not hold is refused.
func columns(sc *iceberg.Schema, name string) ([]bookmark.Column, error) {
	var cols []bookmark.Column
	for _, f := range sc.Fields() {
		t, err := typeOf(f.Type)
		if err != nil {
			return nil, fmt.Errorf("reading Iceberg table %s: column %s: %w", name, f.Name, err)
		}
		cols = append(cols, bookmark.Column{Name: f.Name, Type: t.String()})
	}
	return cols, nil
}

// typeOf is an Iceberg type in the type model.
func typeOf(t iceberg.Type) (bookmark.Type, error) {
	switch t := t.(type) {
	case iceberg.BooleanType:
		return bookmark.Scalar(bookmark.Boolean), nil
	case iceberg.Int32Type:
		return bookmark.Scalar(bookmark.Integer), nil
	case iceberg.Int64Type:
		return bookmark.Scalar(bookmark.BigInt), nil
	case iceberg.Float32Type:
		return bookmark.Scalar(bookmark.Float), nil
	case iceberg.Float64Type:
		return bookmark.Scalar(bookmark.Double), nil
	case iceberg.DecimalType:
		return bookmark.DecimalOf(t.Precision(), t.Scale()), nil
	case iceberg.DateType:
		return bookmark.Scalar(bookmark.Date), nil
	case iceberg.TimeType:
		return bookmark.Scalar(bookmark.Time), nil
	case iceberg.TimestampType:
		return bookmark.Scalar(bookmark.Timestamp), nil
	case iceberg.TimestampTzType:
		return bookmark.Scalar(bookmark.TimestampTZ), nil
	case iceberg.TimestampNsType:
		return bookmark.Scalar(bookmark.TimestampNS), nil
	case iceberg.StringType:
		return bookmark.Scalar(bookmark.Varchar), nil
	case iceberg.UUIDType:
		return bookmark.Scalar(bookmark.UUID), nil
	case iceberg.BinaryType, iceberg.FixedType:
		return bookmark.Scalar(bookmark.Blob), nil
	case *iceberg.ListType:
		e, err := typeOf(t.Element)
		return bookmark.ListOf(e), err
	case *iceberg.MapType:
		k, err := typeOf(t.KeyType)
		if err != nil {
			return bookmark.Type{}, err
		}
		v, err := typeOf(t.ValueType)
		return bookmark.MapOf(k, v), err
	case *iceberg.StructType:
		var fs []bookmark.Field
		for _, f := range t.FieldList {
			ft, err := typeOf(f.Type)
			if err != nil {
				return bookmark.Type{}, err
			}
			fs = append(fs, bookmark.Field{Name: f.Name, Type: ft})
		}
		return bookmark.StructOf(fs...), nil
	}
	return bookmark.Type{}, fmt.Errorf("type %s is not read by this source", t)
}

// renames are the table's top-level columns that had another name in an
// earlier schema: field id → the names it had (nil: no column was ever
// renamed, and files are read by name as they are).
func renames(tbl *table.Table) map[int][]string {
	cur := tbl.Schema()
	var out map[int][]string
	for _, sc := range tbl.Metadata().Schemas() {
		for _, f := range sc.Fields() {
			now, ok := cur.FindFieldByID(f.ID)
			if ok && now.Name != f.Name {
				if out == nil {
					out = map[int][]string{}
				}
				out[f.ID] = append(out[f.ID], f.Name)
			}
		}
	}
	return out
}

// checkNames refuses a data file whose columns the engine would read under
// an old name: a column renamed since the file was written. The engine
// reads Parquet columns by name, so such a column would read as NULL; the
// file's field ids (or, without them, its column names as old names of a
// field) tell.
func checkNames(f dataFile, sc *iceberg.Schema, old map[int][]string, srcCtx, name string) error {
	r, err := file.OpenParquetFile(f.Path, false)
	if err != nil {
		return fmt.Errorf("source %s: reading the columns of data file %s of Iceberg table %s: %w", srcCtx, f.URI, name, err)
	}
	defer r.Close()
	root := r.MetaData().Schema.Root()
	for i := range root.NumFields() {
		n := root.Field(i)
		id := int(n.FieldID())
		if id < 0 {
			id = -1
			for fid, names := range old {
				for _, o := range names {
					if o == n.Name() {
						id = fid
					}
				}
			}
			if _, cur := sc.FindFieldByName(n.Name()); cur || id < 0 {
				continue
			}
		}
		now, ok := sc.FindFieldByID(id)
		if ok && now.Name != n.Name() {
			return fmt.Errorf("source %s: Iceberg table %s: data file %s has column %s, renamed %s since it was "+
				"written; this source reads columns by name and cannot read a renamed column: rename it back, or "+
				"rewrite the table's data files (a compaction) and reset the job's bookmark",
				srcCtx, name, f.URI, n.Name(), now.Name)
		}
	}
	return nil
}
